//! The diff a review attaches to its prompt, so the model need not spend a round trip asking
//! for it: gathered with `git` in the thread's working directory, read-only (no optional
//! locks, no external diff or text conversion programs, no fsmonitor), bounded by
//! `[review] max_diff_bytes` and `diff_timeout_ms`. Anything that goes wrong (not a
//! repository, an unknown branch, a slow disk) means no diff: the model reads the change
//! itself with its tools.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;
use weft_protocol::ReviewTarget;

use crate::config::ReviewConfig;

/// What was gathered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    /// The command the model could run to see the same thing.
    pub command: String,
    /// Its output, cut at the byte limit.
    pub text: String,
    /// Whether the output went on past the limit.
    pub truncated: bool,
}

impl Diff {
    /// The diff as the reviewer gets it: a message of its own, before the request.
    pub fn render(&self) -> String {
        let mut text = format!(
            "The change under review, as `{}` shows it{}:\n<diff>\n",
            self.command,
            if self.truncated {
                " (cut short: read the rest yourself)"
            } else {
                ""
            }
        );
        if self.text.trim().is_empty() {
            text.push_str("(no changes)\n");
        } else {
            text.push_str(&self.text);
            if !self.text.ends_with('\n') {
                text.push('\n');
            }
        }
        text.push_str("</diff>");
        text
    }
}

/// The diff of `target` in `cwd`, or `None` (a custom review, a limit of 0, no repository, a
/// failure or the time limit).
pub async fn collect_diff(
    target: &ReviewTarget,
    cwd: &Path,
    config: &ReviewConfig,
) -> Option<Diff> {
    if config.max_diff_bytes == 0 {
        return None;
    }
    let git = Git {
        cwd,
        max_bytes: config.max_diff_bytes,
    };
    let work = async {
        match target {
            ReviewTarget::UncommittedChanges => git.uncommitted().await,
            ReviewTarget::BaseBranch { branch } => git.against(branch).await,
            ReviewTarget::Commit { sha, .. } => git.commit(sha).await,
            ReviewTarget::Custom { .. } => None,
        }
    };
    tokio::time::timeout(Duration::from_millis(config.diff_timeout_ms), work)
        .await
        .ok()
        .flatten()
}

/// Options of every diff: plain text, no programs of the repository's configuration.
const DIFF_OPTIONS: &[&str] = &["--no-ext-diff", "--no-textconv", "--no-color"];

struct Git<'a> {
    cwd: &'a Path,
    max_bytes: usize,
}

impl Git<'_> {
    /// Staged and unstaged changes against `HEAD` (against the empty tree before the first
    /// commit), then each untracked file as an addition, while there is room.
    async fn uncommitted(&self) -> Option<Diff> {
        let head = self
            .run(&["rev-parse", "--verify", "--quiet", "HEAD"], 64)
            .await;
        let (command, mut out) = match head {
            Some(_) => {
                let out = self.run_diff(&["diff", "HEAD"], &[]).await?;
                ("git diff HEAD", out)
            }
            None => {
                let mut out = self.run_diff(&["diff", "--cached"], &[]).await?;
                out.extend(self.run_diff(&["diff"], &[]).await?);
                ("git diff --cached; git diff", out)
            }
        };
        let listed = self
            .run(
                &["ls-files", "--others", "--exclude-standard", "-z"],
                self.max_bytes.max(4096) * 4,
            )
            .await?;
        for name in listed.split(|byte| *byte == 0).filter(|n| !n.is_empty()) {
            if out.len() > self.max_bytes {
                break;
            }
            let name = String::from_utf8_lossy(name).into_owned();
            // `git diff --no-index` exits 1 when the files differ, which they do.
            if let Some(added) = self
                .run_diff(&["diff", "--no-index"], &["/dev/null", &name])
                .await
            {
                out.extend(added);
            }
        }
        Some(self.diff(format!("{command} (and each untracked file)"), out))
    }

    /// The changes since the current branch left `branch` (its upstream when it has one).
    async fn against(&self, branch: &str) -> Option<Diff> {
        if branch.starts_with('-') {
            return None;
        }
        let upstream = format!("{branch}@{{upstream}}");
        let mut base = self.run(&["merge-base", "HEAD", &upstream], 256).await;
        if base.is_none() {
            base = self.run(&["merge-base", "HEAD", branch], 256).await;
        }
        let base = String::from_utf8(base?).ok()?.trim().to_string();
        if base.is_empty() || !base.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let out = self.run_diff(&["diff", &base], &[]).await?;
        Some(self.diff(format!("git diff {base}"), out))
    }

    /// What `sha` changed, with its message.
    async fn commit(&self, sha: &str) -> Option<Diff> {
        if sha.starts_with('-') {
            return None;
        }
        let out = self
            .run_diff(&["show", "--format=medium", sha], &[])
            .await?;
        Some(self.diff(format!("git show {sha}"), out))
    }

    fn diff(&self, command: String, mut out: Vec<u8>) -> Diff {
        let truncated = out.len() > self.max_bytes;
        out.truncate(self.max_bytes);
        let mut text = String::from_utf8_lossy(&out).into_owned();
        // A cut through a multi-byte character leaves a replacement character: drop it.
        if truncated && text.ends_with('\u{fffd}') {
            text.pop();
        }
        Diff {
            command,
            text,
            truncated,
        }
    }

    /// `git <args> <DIFF_OPTIONS> -- <paths>`, its output up to one byte past the limit.
    async fn run_diff(&self, args: &[&str], paths: &[&str]) -> Option<Vec<u8>> {
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(DIFF_OPTIONS);
        all.push("--");
        all.extend_from_slice(paths);
        self.run(&all, self.max_bytes + 1).await
    }

    /// Run `git` read-only; its stdout (at most `limit` bytes, the process killed past that)
    /// when it exits 0 (or 1, a `--no-index` diff that found differences), else `None`.
    async fn run(&self, args: &[&str], limit: usize) -> Option<Vec<u8>> {
        let mut child = Command::new("git")
            .args([
                "--no-pager",
                "--no-optional-locks",
                "-c",
                "core.fsmonitor=false",
            ])
            .args(["-c", "core.quotepath=off"])
            .args(args)
            .current_dir(self.cwd)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .ok()?;
        let mut out = Vec::new();
        let stdout = child.stdout.take()?;
        stdout
            .take(u64::try_from(limit).unwrap_or(u64::MAX))
            .read_to_end(&mut out)
            .await
            .ok()?;
        if out.len() >= limit {
            // Past the limit: the rest is not wanted.
            let _ = child.kill().await;
            return Some(out);
        }
        let status = child.wait().await.ok()?;
        let no_index = args.contains(&"--no-index");
        match status.code() {
            Some(0) => Some(out),
            Some(1) if no_index => Some(out),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command as StdCommand;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = StdCommand::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        git(dir.path(), &["add", "a.txt"]);
        git(dir.path(), &["commit", "-q", "-m", "first"]);
        dir
    }

    #[tokio::test]
    async fn uncommitted_changes_include_untracked_files() {
        let dir = repo();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(dir.path().join("new.txt"), "fresh\n").unwrap();
        let diff = collect_diff(
            &ReviewTarget::UncommittedChanges,
            dir.path(),
            &ReviewConfig::default(),
        )
        .await
        .unwrap();
        assert!(diff.command.starts_with("git diff HEAD"));
        assert!(diff.text.contains("+two"), "{}", diff.text);
        assert!(diff.text.contains("+fresh"), "{}", diff.text);
        assert!(!diff.truncated);
        // Nothing was written to the repository by looking (no index refresh).
        assert!(!dir.path().join(".git/index.lock").exists());
    }

    #[tokio::test]
    async fn a_branch_and_a_commit_are_diffed_and_the_limit_cuts() {
        let dir = repo();
        git(dir.path(), &["checkout", "-q", "-b", "topic"]);
        std::fs::write(dir.path().join("a.txt"), "one\nchanged on topic\n").unwrap();
        git(dir.path(), &["commit", "-q", "-am", "topic work"]);
        let config = ReviewConfig::default();
        let branch = ReviewTarget::BaseBranch {
            branch: "main".into(),
        };
        let diff = collect_diff(&branch, dir.path(), &config).await.unwrap();
        assert!(diff.text.contains("+changed on topic"));
        let commit = ReviewTarget::Commit {
            sha: "HEAD".into(),
            title: None,
        };
        let shown = collect_diff(&commit, dir.path(), &config).await.unwrap();
        assert!(shown.text.contains("topic work"));
        let small = ReviewConfig {
            max_diff_bytes: 20,
            ..config
        };
        let cut = collect_diff(&commit, dir.path(), &small).await.unwrap();
        assert!(cut.truncated);
        assert!(cut.text.len() <= 20);
        assert!(cut.render().contains("cut short"));
    }

    #[test]
    fn the_rendered_diff_names_its_command() {
        let diff = Diff {
            command: "git diff HEAD".into(),
            text: "+added line".into(),
            truncated: false,
        };
        assert_eq!(
            diff.render(),
            "The change under review, as `git diff HEAD` shows it:\n<diff>\n+added line\n</diff>"
        );
        let empty = Diff {
            text: String::new(),
            ..diff
        };
        assert!(empty.render().contains("(no changes)"));
    }

    #[tokio::test]
    async fn no_repository_no_limit_or_an_option_for_a_name_means_no_diff() {
        let dir = tempfile::tempdir().unwrap();
        let config = ReviewConfig::default();
        assert!(
            collect_diff(&ReviewTarget::UncommittedChanges, dir.path(), &config)
                .await
                .is_none()
        );
        let repo = repo();
        let off = ReviewConfig {
            max_diff_bytes: 0,
            ..config
        };
        assert!(
            collect_diff(&ReviewTarget::UncommittedChanges, repo.path(), &off)
                .await
                .is_none()
        );
        let sneaky = ReviewTarget::Commit {
            sha: "--output=/tmp/x".into(),
            title: None,
        };
        assert!(collect_diff(&sneaky, repo.path(), &config).await.is_none());
        let custom = ReviewTarget::Custom {
            instructions: "x".into(),
        };
        assert!(collect_diff(&custom, repo.path(), &config).await.is_none());
    }
}
