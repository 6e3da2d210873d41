//! What the model is told before the conversation: Weft's base instructions (the request's
//! `instructions` field) and the project's `AGENTS.md` files (a user message in `input`).
//!
//! # AGENTS.md discovery
//!
//! [`discover_agents_md`] walks from the project root down to the working directory and reads
//! each directory's `AGENTS.md`, outermost first. The project root is the nearest ancestor of the
//! cwd (the cwd included) that contains a `.git` entry, directory or file (worktrees and
//! submodules use a file). Without one, only the cwd itself is searched.
//!
//! The files share a budget of [`AGENTS_MD_MAX_BYTES`] (32 KiB). Files are read root first; the
//! file that crosses the budget is cut at the budget (on a UTF-8 character boundary), and any
//! deeper file is dropped, each with a tracing warning. Files that are empty or whitespace-only
//! are skipped; files that cannot be read are skipped with a warning. Invalid UTF-8 is replaced
//! with U+FFFD.
//!
//! # User instructions message
//!
//! [`render_user_instructions`] turns the files into the text of one `input_text` part of a user
//! message. Each file becomes one block, blocks are separated by a blank line:
//!
//! ```text
//! # AGENTS.md instructions for /repo
//!
//! <INSTRUCTIONS>
//! …contents of /repo/AGENTS.md, trimmed…
//! </INSTRUCTIONS>
//!
//! # AGENTS.md instructions for /repo/crates/foo
//!
//! <INSTRUCTIONS>
//! …contents of /repo/crates/foo/AGENTS.md, trimmed…
//! </INSTRUCTIONS>
//! ```
//!
//! The text always starts with [`USER_INSTRUCTIONS_PREFIX`], which is how history code can tell
//! this contextual message from real user input (e.g. when compacting).

use std::io::Read;
use std::path::{Path, PathBuf};

/// Weft's base instructions, sent as the request's `instructions` (the system prompt).
const BASE_INSTRUCTIONS: &str = include_str!("prompts/base_instructions.md");

/// File name looked up in each directory from the project root down to the cwd.
pub const AGENTS_MD_FILE_NAME: &str = "AGENTS.md";

/// Total number of bytes of `AGENTS.md` content loaded for one cwd (32 KiB).
pub const AGENTS_MD_MAX_BYTES: usize = 32 * 1024;

/// Every rendered user-instructions text starts with this.
pub const USER_INSTRUCTIONS_PREFIX: &str = "# AGENTS.md instructions for ";

/// Weft's own base instructions: who the agent is, how it works and communicates, and the tools
/// it is usually given (`exec_command`/`write_stdin`, `apply_patch`, `update_plan`). One copy,
/// shared by every prompt that sends them.
pub fn base_instructions() -> std::sync::Arc<str> {
    static SHARED: std::sync::LazyLock<std::sync::Arc<str>> =
        std::sync::LazyLock::new(|| BASE_INSTRUCTIONS.into());
    std::sync::Arc::clone(&SHARED)
}

/// One loaded `AGENTS.md` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentsDoc {
    /// Path of the file (the directory joined with `AGENTS.md`).
    pub path: PathBuf,
    /// Its contents, possibly cut to fit [`AGENTS_MD_MAX_BYTES`].
    pub contents: String,
}

impl AgentsDoc {
    /// The directory the file applies to.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(&self.path)
    }
}

/// Finds the `AGENTS.md` files that apply to `cwd`, ordered from the project root down to
/// `cwd` (see the module docs for the rules and the size cap).
///
/// A relative `cwd` is made absolute against the process's working directory first. This does
/// blocking file I/O on a handful of small files; async callers may run it inline or in
/// `spawn_blocking`.
pub fn discover_agents_md(cwd: &Path) -> Vec<AgentsDoc> {
    let cwd = std::path::absolute(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut docs = Vec::new();
    let mut remaining = AGENTS_MD_MAX_BYTES;
    for dir in search_dirs(&cwd) {
        let path = dir.join(AGENTS_MD_FILE_NAME);
        if !path.is_file() {
            continue;
        }
        if remaining == 0 {
            tracing::warn!(
                path = %path.display(),
                "skipping AGENTS.md: the {AGENTS_MD_MAX_BYTES}-byte budget is used up"
            );
            continue;
        }
        let (contents, truncated) = match read_capped(&path, remaining) {
            Ok(read) => read,
            Err(err) => {
                tracing::warn!(path = %path.display(), error = %err, "skipping unreadable AGENTS.md");
                continue;
            }
        };
        if truncated {
            tracing::warn!(
                path = %path.display(),
                "AGENTS.md truncated: the {AGENTS_MD_MAX_BYTES}-byte budget is used up"
            );
            // Nothing deeper fits either.
            remaining = 0;
        } else {
            remaining -= contents.len();
        }
        if contents.trim().is_empty() {
            continue;
        }
        docs.push(AgentsDoc { path, contents });
    }
    docs
}

/// The text of the user-instructions message for `docs` (framing in the module docs), or
/// `None` when there is nothing to send.
pub fn render_user_instructions(docs: &[AgentsDoc]) -> Option<String> {
    let blocks: Vec<String> = docs
        .iter()
        .filter(|doc| !doc.contents.trim().is_empty())
        .map(|doc| {
            format!(
                "{USER_INSTRUCTIONS_PREFIX}{}\n\n<INSTRUCTIONS>\n{}\n</INSTRUCTIONS>",
                doc.dir().display(),
                doc.contents.trim()
            )
        })
        .collect();
    if blocks.is_empty() {
        None
    } else {
        Some(blocks.join("\n\n"))
    }
}

/// Directories to search, root first: from the nearest ancestor holding `.git` down to `cwd`,
/// or just `cwd` when no ancestor does.
fn search_dirs(cwd: &Path) -> Vec<&Path> {
    let ancestors: Vec<&Path> = cwd.ancestors().collect();
    match ancestors.iter().position(|dir| dir.join(".git").exists()) {
        Some(root) => ancestors[..=root].iter().rev().copied().collect(),
        None => vec![cwd],
    }
}

/// Reads at most `cap` bytes of `path`. Returns the text and whether the file was longer.
/// A cut in the middle of a UTF-8 sequence is moved back to the last whole character.
fn read_capped(path: &Path, cap: usize) -> std::io::Result<(String, bool)> {
    let file = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    // One extra byte tells whether the file goes on past the cap.
    file.take(cap as u64 + 1).read_to_end(&mut buf)?;
    let truncated = buf.len() > cap;
    if truncated {
        buf.truncate(cap);
        if let Err(err) = std::str::from_utf8(&buf)
            && err.error_len().is_none()
        {
            buf.truncate(err.valid_up_to());
        }
    }
    Ok((String::from_utf8_lossy(&buf).into_owned(), truncated))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(path: &Path, contents: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    #[test]
    fn base_instructions_describe_weft_and_its_tools() {
        let text = base_instructions();
        for needle in [
            "Weft",
            "exec_command",
            "write_stdin",
            "apply_patch",
            "update_plan",
            "*** Begin Patch",
            "*** Add File:",
            "*** Update File:",
            "*** Delete File:",
            "*** Move to:",
            "@@",
            "*** End Patch",
        ] {
            assert!(text.contains(needle), "missing {needle:?}");
        }
    }

    #[test]
    fn discovers_from_git_root_down_to_cwd() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("AGENTS.md");
        let repo = tmp.path().join("repo");
        let mid = repo.join("crates");
        let cwd = mid.join("foo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        write(&outside, "outside the repo");
        write(&repo.join("AGENTS.md"), "root rules\n");
        write(&cwd.join("AGENTS.md"), "foo rules");
        fs::create_dir_all(&mid).unwrap();

        let docs = discover_agents_md(&cwd);
        assert_eq!(
            docs,
            vec![
                AgentsDoc {
                    path: repo.join("AGENTS.md"),
                    contents: "root rules\n".into()
                },
                AgentsDoc {
                    path: cwd.join("AGENTS.md"),
                    contents: "foo rules".into()
                },
            ]
        );

        let text = render_user_instructions(&docs).unwrap();
        assert_eq!(
            text,
            format!(
                "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nroot rules\n</INSTRUCTIONS>\n\n\
                 # AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nfoo rules\n</INSTRUCTIONS>",
                repo.display(),
                cwd.display()
            )
        );
    }

    #[test]
    fn git_file_marks_root_too() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("worktree");
        let cwd = repo.join("sub");
        fs::create_dir_all(&cwd).unwrap();
        fs::write(repo.join(".git"), "gitdir: /elsewhere\n").unwrap();
        write(&tmp.path().join("AGENTS.md"), "outside");
        write(&repo.join("AGENTS.md"), "in worktree");
        let docs = discover_agents_md(&cwd);
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].path, repo.join("AGENTS.md"));
    }

    #[test]
    fn without_git_only_cwd_is_searched() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("a");
        write(&tmp.path().join("AGENTS.md"), "parent");
        write(&cwd.join("AGENTS.md"), "here");
        let docs = discover_agents_md(&cwd);
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].contents, "here");
        assert!(discover_agents_md(tmp.path().join("nowhere").as_path()).is_empty());
    }

    #[test]
    fn skips_empty_files_and_directories_named_agents_md() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("a");
        fs::create_dir_all(tmp.path().join(".git")).unwrap();
        write(&tmp.path().join("AGENTS.md"), "  \n\t\n");
        fs::create_dir_all(cwd.join("AGENTS.md")).unwrap();
        assert!(discover_agents_md(&cwd).is_empty());
        assert_eq!(render_user_instructions(&[]), None);
    }

    #[test]
    fn total_size_is_capped_root_first() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("a");
        let deeper = cwd.join("b");
        fs::create_dir_all(tmp.path().join(".git")).unwrap();
        let root_text = "r".repeat(AGENTS_MD_MAX_BYTES - 10);
        write(&tmp.path().join("AGENTS.md"), &root_text);
        // 'é' is two bytes: the cut at the budget falls inside a character.
        write(&cwd.join("AGENTS.md"), &format!("x{}", "é".repeat(100)));
        write(&deeper.join("AGENTS.md"), "dropped");

        let docs = discover_agents_md(&deeper);
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].contents, root_text);
        assert_eq!(docs[1].contents, format!("x{}", "é".repeat(4)));
        let total: usize = docs.iter().map(|d| d.contents.len()).sum();
        assert!(total <= AGENTS_MD_MAX_BYTES);
    }

    #[cfg(unix)]
    #[test]
    fn unreadable_file_is_skipped() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("a");
        fs::create_dir_all(tmp.path().join(".git")).unwrap();
        let locked = tmp.path().join("AGENTS.md");
        write(&locked, "secret");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        write(&cwd.join("AGENTS.md"), "readable");
        let docs = discover_agents_md(&cwd);
        // Root can read anything, so only check that the readable file is always there.
        assert_eq!(docs.last().unwrap().contents, "readable");
        if fs::read(&locked).is_err() {
            assert_eq!(docs.len(), 1);
        }
    }
}
