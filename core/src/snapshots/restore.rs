//! What differs between two snapshot trees, and writing a tree's files back into the work tree
//! (docs/architecture.md §5.5): only the files that differ, from the snapshot's own blobs (no
//! checkout, so no filters and no index).

use std::path::Path;

use super::SnapshotError;
use super::git::{Git, nul_fields};

/// How a file differs from one tree to the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Only in the second tree.
    Added,
    /// Only in the first tree.
    Deleted,
    /// In both, with other contents or another mode.
    Modified,
}

/// One file that differs between two trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// How.
    pub kind: ChangeKind,
    /// The path, relative to the work tree.
    pub path: String,
}

/// The files that differ from tree `from` to tree `to` (no rename detection).
pub(super) async fn changes(git: &Git, from: &str, to: &str) -> Result<Vec<Change>, SnapshotError> {
    if from == to {
        return Ok(Vec::new());
    }
    let out = git
        .run(
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-status",
                from,
                to,
            ],
            None,
        )
        .await?;
    let fields: Vec<&[u8]> = nul_fields(&out).collect();
    Ok(fields
        .chunks(2)
        .filter(|pair| pair.len() == 2)
        .map(|pair| Change {
            kind: match pair[0].first() {
                Some(b'A') => ChangeKind::Added,
                Some(b'D') => ChangeKind::Deleted,
                _ => ChangeKind::Modified,
            },
            path: String::from_utf8_lossy(pair[1]).into_owned(),
        })
        .collect())
}

/// Make the work tree's files match tree `target` where `changes` (from the tree now to
/// `target`) says they differ.
pub(super) async fn apply(
    git: &Git,
    work_tree: &Path,
    target: &str,
    changes: &[Change],
) -> Result<(), SnapshotError> {
    for change in changes {
        let full = work_tree.join(&change.path);
        if !full.starts_with(work_tree) || change.path.split('/').any(|part| part == "..") {
            return Err(SnapshotError::Io {
                path: change.path.clone(),
                message: "outside the workspace".into(),
            });
        }
        match change.kind {
            ChangeKind::Added | ChangeKind::Modified => {
                let spec = format!("{target}:{}", change.path);
                let out = git
                    .run(&["ls-tree", "-z", target, "--", &change.path], None)
                    .await?;
                let entry = String::from_utf8_lossy(&out);
                let mode = entry.split(' ').next().unwrap_or("100644").to_string();
                let blob = git.run(&["cat-file", "blob", &spec], None).await?;
                write_file(work_tree, &full, &mode, &blob)?;
            }
            ChangeKind::Deleted => {
                remove(&full)?;
                remove_empty_parents(work_tree, &full);
            }
        }
    }
    Ok(())
}

/// Write one file (or symlink, mode `120000`) with the snapshot's contents and mode.
fn write_file(work_tree: &Path, full: &Path, mode: &str, blob: &[u8]) -> Result<(), SnapshotError> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = full.parent() {
        // A file standing where a directory must be is the snapshot's to replace.
        let mut at = parent;
        while at.starts_with(work_tree) && at != work_tree {
            if std::fs::symlink_metadata(at).is_ok_and(|m| !m.is_dir()) {
                remove(at)?;
                break;
            }
            match at.parent() {
                Some(up) => at = up,
                None => break,
            }
        }
        std::fs::create_dir_all(parent).map_err(|e| SnapshotError::io(parent, e))?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(full)
        && (meta.file_type().is_symlink() || mode == "120000" || meta.is_dir())
    {
        remove(full)?;
    }
    if mode == "120000" {
        let target = std::ffi::OsStr::from_bytes(blob);
        return std::os::unix::fs::symlink(target, full).map_err(|e| SnapshotError::io(full, e));
    }
    std::fs::write(full, blob).map_err(|e| SnapshotError::io(full, e))?;
    let bits = if mode == "100755" { 0o755 } else { 0o644 };
    std::fs::set_permissions(full, std::fs::Permissions::from_mode(bits))
        .map_err(|e| SnapshotError::io(full, e))
}

fn remove(path: &Path) -> Result<(), SnapshotError> {
    let result = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => return Ok(()),
    };
    result.map_err(|e| SnapshotError::io(path, e))
}

/// Remove the directories a deleted file leaves empty, up to the work tree.
fn remove_empty_parents(work_tree: &Path, full: &Path) {
    let mut at = full.parent();
    while let Some(dir) = at {
        if dir == work_tree || !dir.starts_with(work_tree) || std::fs::remove_dir(dir).is_err() {
            break;
        }
        at = dir.parent();
    }
}
