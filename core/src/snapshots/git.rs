//! Running `git` for the ghost snapshots (docs/architecture.md §5.5): plumbing commands only,
//! in a clean environment — no user or system config, no hooks, no filters, no fsmonitor, no
//! optional locks (so nothing refreshes the user's index), no prompts and no network — each
//! bounded by the snapshot's deadline.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::SnapshotError;

/// Config every command runs with, whatever the repository's own config says.
const FORCED_CONFIG: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "gc.auto=0",
    "maintenance.auto=false",
    "protocol.allow=never",
    "commit.gpgSign=false",
];

/// Where the commands of one snapshot operate.
#[derive(Debug, Clone)]
pub(super) struct Git {
    /// `GIT_DIR` (none while looking for the repository of a directory).
    pub git_dir: Option<PathBuf>,
    /// `GIT_WORK_TREE` (and the commands' working directory).
    pub work_tree: PathBuf,
    /// `GIT_INDEX_FILE`: always one of Weft's own temporary files, never the user's index.
    pub index: Option<PathBuf>,
    /// When the whole operation must be done.
    pub deadline: Instant,
}

impl Git {
    /// Run `git <args>` with `input` on stdin; its stdout, or why it failed.
    pub async fn run(
        &self,
        args: &[&str],
        input: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, SnapshotError> {
        self.run_bounded(args, input, None).await
    }

    /// [`Git::run`] of a command that prints NUL-terminated entries, stopped (and
    /// [`SnapshotError::TooManyFiles`]) as soon as it printed more than `max_entries`: a huge
    /// directory is given up on at once, not listed to its end.
    pub async fn run_listing(
        &self,
        args: &[&str],
        max_entries: usize,
    ) -> Result<Vec<u8>, SnapshotError> {
        self.run_bounded(args, None, Some(max_entries)).await
    }

    async fn run_bounded(
        &self,
        args: &[&str],
        input: Option<Vec<u8>>,
        max_entries: Option<usize>,
    ) -> Result<Vec<u8>, SnapshotError> {
        let mut command = Command::new("git");
        command.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        if let Some(git_dir) = &self.git_dir {
            command
                .env("GIT_DIR", git_dir)
                .env("GIT_WORK_TREE", &self.work_tree);
        }
        command
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_AUTHOR_NAME", "Weft")
            .env("GIT_AUTHOR_EMAIL", "weft@localhost")
            .env("GIT_COMMITTER_NAME", "Weft")
            .env("GIT_COMMITTER_EMAIL", "weft@localhost")
            .env("LC_ALL", "C");
        if let Some(index) = &self.index {
            command.env("GIT_INDEX_FILE", index);
        }
        for config in FORCED_CONFIG {
            command.arg("-c").arg(config);
        }
        command
            .args(args)
            .current_dir(&self.work_tree)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let what = format!("git {}", args.first().copied().unwrap_or_default());
        let mut child = command
            .spawn()
            .map_err(|err| SnapshotError::Git(format!("{what}: cannot start git: {err}")))?;
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let work = async move {
            let feed = async {
                if let (Some(mut stdin), Some(input)) = (stdin, input) {
                    // A command that stops reading early reports its own error.
                    let _ = stdin.write_all(&input).await;
                }
            };
            let read_out = async {
                let mut out = Vec::new();
                let Some(stdout) = stdout.as_mut() else {
                    return (out, false);
                };
                let Some(max) = max_entries else {
                    let _ = stdout.read_to_end(&mut out).await;
                    return (out, false);
                };
                let mut chunk = vec![0u8; 64 * 1024];
                let mut entries = 0;
                loop {
                    match stdout.read(&mut chunk).await {
                        Ok(0) | Err(_) => return (out, false),
                        Ok(n) => {
                            entries += chunk[..n].iter().filter(|b| **b == 0).count();
                            if entries > max {
                                // Stop it now rather than read the rest of its listing.
                                let _ = child.start_kill();
                                return (out, true);
                            }
                            out.extend_from_slice(&chunk[..n]);
                        }
                    }
                }
            };
            let read_err = async {
                let mut err = Vec::new();
                if let Some(stderr) = stderr.as_mut() {
                    let _ = stderr.read_to_end(&mut err).await;
                }
                err
            };
            let ((), (out, too_many), err) = tokio::join!(feed, read_out, read_err);
            let status = child.wait().await;
            if too_many {
                return Err(SnapshotError::TooManyFiles(max_entries.unwrap_or_default()));
            }
            Ok((status, out, err))
        };
        let timeout = self.deadline.saturating_duration_since(Instant::now());
        let (status, out, err) = tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| SnapshotError::Timeout)??;
        let status = status.map_err(|err| SnapshotError::Git(format!("{what}: {err}")))?;
        if !status.success() {
            let text = String::from_utf8_lossy(&err);
            return Err(SnapshotError::Git(format!("{what}: {}", text.trim())));
        }
        Ok(out)
    }

    /// `run`, its output as trimmed text.
    pub async fn text(
        &self,
        args: &[&str],
        input: Option<Vec<u8>>,
    ) -> Result<String, SnapshotError> {
        let out = self.run(args, input).await?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// This runner with another index file.
    pub fn with_index(&self, index: &Path) -> Git {
        Git {
            index: Some(index.to_path_buf()),
            ..self.clone()
        }
    }
}

/// The NUL-separated fields of `out`, without the empty last one.
pub(super) fn nul_fields(out: &[u8]) -> impl Iterator<Item = &[u8]> {
    out.split(|b| *b == 0).filter(|field| !field.is_empty())
}
