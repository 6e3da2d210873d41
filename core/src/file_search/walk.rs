//! The walk of a search's roots: ripgrep's walker (`ignore`), one thread, streaming what it
//! finds into the session's index in batches so matching starts before the walk ends.
//!
//! As the reference walks (docs/protocol.md §7.33): hidden entries are in, `.gitignore`,
//! `.ignore`, `.rgignore`, `.git/info/exclude` and the global excludes file are honoured, the
//! git ones only inside a git repository (as git does, so a stray `~/.gitignore` with `*`
//! hides nothing); symbolic links are followed only when their target lies inside a root;
//! files and directories are both entries, each named by its path relative to the deepest
//! root that holds it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use ignore::WalkBuilder;

use super::session::Shared;
use super::{Entry, MatchType, score};

/// Entries handed to the index at once.
const BATCH: usize = 512;

/// Walks `shared`'s roots into its index, then marks the walk done.
pub(super) fn walk(shared: &Arc<Shared>) {
    let complete = walk_roots(shared);
    shared.walk_finished(complete);
}

/// Whether the walk saw everything (no budget hit, no error, not stopped).
fn walk_roots(shared: &Arc<Shared>) -> bool {
    let roots = &shared.roots;
    let Some(first) = roots.first() else {
        return true;
    };
    let canonical_roots: Vec<PathBuf> = roots
        .iter()
        .filter_map(|root| std::fs::canonicalize(root).ok())
        .collect();
    let mut builder = WalkBuilder::new(first);
    for root in &roots[1..] {
        builder.add(root);
    }
    let filter_shared = Arc::clone(shared);
    builder
        .hidden(false)
        .follow_links(true)
        .require_git(true)
        .max_depth(Some(shared.config.max_depth))
        .filter_entry(move |entry| {
            if filter_shared.stopped.load(Ordering::Relaxed) {
                return false;
            }
            !entry.path_is_symlink()
                || std::fs::canonicalize(entry.path())
                    .is_ok_and(|target| canonical_roots.iter().any(|root| target.starts_with(root)))
        });
    builder.add_custom_ignore_filename(".rgignore");

    let mut complete = true;
    let mut seen = 0usize;
    let mut batch = Vec::with_capacity(BATCH);
    for entry in builder.build() {
        if shared.stopped.load(Ordering::Relaxed) {
            complete = false;
            break;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(_) => {
                complete = false;
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        if seen >= shared.config.max_entries {
            complete = false;
            break;
        }
        seen += 1;
        let Some((root, path)) = relative_to_deepest_root(entry.path(), roots) else {
            continue;
        };
        let match_type = if entry.file_type().is_some_and(|kind| kind.is_dir()) {
            MatchType::Directory
        } else {
            MatchType::File
        };
        batch.push(Entry {
            root,
            name_start: u32::try_from(score::name_start(path)).unwrap_or(u32::MAX),
            path: path.into(),
            match_type,
        });
        if batch.len() >= BATCH {
            shared.add_entries(&mut batch);
        }
    }
    shared.add_entries(&mut batch);
    complete
}

/// The index of the deepest root holding `path`, and `path` relative to it (UTF-8 only, as
/// the reference skips other names).
fn relative_to_deepest_root<'a>(path: &'a Path, roots: &[PathBuf]) -> Option<(u32, &'a str)> {
    let mut best: Option<(usize, &Path)> = None;
    for (index, root) in roots.iter().enumerate() {
        if let Ok(relative) = path.strip_prefix(root) {
            let deeper = best.is_none_or(|(best_index, _)| {
                roots[best_index].components().count() < root.components().count()
            });
            if deeper {
                best = Some((index, relative));
            }
        }
    }
    let (index, relative) = best?;
    let relative = relative.to_str()?;
    (!relative.is_empty()).then_some((u32::try_from(index).ok()?, relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deepest_root_names_a_path() {
        let roots = [PathBuf::from("/w"), PathBuf::from("/w/src")];
        assert_eq!(
            relative_to_deepest_root(Path::new("/w/src/main.rs"), &roots),
            Some((1, "main.rs"))
        );
        assert_eq!(
            relative_to_deepest_root(Path::new("/w/README.md"), &roots),
            Some((0, "README.md"))
        );
        assert_eq!(relative_to_deepest_root(Path::new("/w"), &roots), None);
        assert_eq!(relative_to_deepest_root(Path::new("/x/y"), &roots), None);
    }
}
