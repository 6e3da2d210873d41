//! Ghost snapshots of a workspace (docs/architecture.md §5.5): a git tree of the workspace's
//! files, committed under Weft's private ref namespace `refs/weft/snapshots/…`, never touching
//! the user's index, branches, HEAD, stash or working tree.
//!
//! - **Which repository.** In a git work tree, the snapshot goes into that repository (its
//!   objects, and a ref under `refs/weft/`); elsewhere into a private repository of Weft's,
//!   `$WEFT_HOME/snapshots/<hash of the directory>.git`, with the directory as its work tree.
//! - **Which files.** Tracked and untracked files; ignored files (`.gitignore`, the
//!   repository's excludes) and files over `snapshots.max_file_bytes` are left out; a workspace
//!   with more than `snapshots.max_files` files is not snapshotted. Contents are stored as they
//!   are on disk (no filters, no line-ending conversion).
//! - **How.** A temporary index of Weft's own (`GIT_INDEX_FILE`), filled with
//!   `hash-object --no-filters` and `update-index --index-info`, then `write-tree` and
//!   `commit-tree`; the listing reads a copy of the user's index, never the index itself.
//! - **Restoring** writes back only the files that differ between the workspace now and the
//!   snapshot, from the snapshot's blobs, and deletes those the snapshot did not have.
//! - **Pruning** drops refs older than `snapshots.max_age_days` and beyond the newest
//!   `snapshots.max_count` of the repository.

mod forget;
mod git;
mod record;
mod restore;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::config::SnapshotsConfig;
use git::{Git, nul_fields};
pub use record::{SnapshotPhase, SnapshotRecord};
pub use restore::{Change, ChangeKind};

/// The ref namespace of every snapshot.
pub const REF_PREFIX: &str = "refs/weft/snapshots/";

/// Why a snapshot (or a restore) could not be made.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SnapshotError {
    /// A git command failed (its stderr).
    #[error("{0}")]
    Git(String),
    /// The operation took longer than `snapshots.timeout_ms`.
    #[error("the snapshot took longer than its time limit")]
    Timeout,
    /// More files than `snapshots.max_files`.
    #[error("the workspace has more than {0} files")]
    TooManyFiles(usize),
    /// Reading or writing a workspace file failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
}

impl SnapshotError {
    fn io(path: &Path, err: std::io::Error) -> SnapshotError {
        SnapshotError::Io {
            path: path.display().to_string(),
            message: err.to_string(),
        }
    }
}

/// A snapshot: its commit and its tree (what is compared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The commit under `refs/weft/snapshots/…`.
    pub commit: String,
    /// Its tree.
    pub tree: String,
}

/// Where a directory's snapshots live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The repository (`GIT_DIR`).
    pub git_dir: PathBuf,
    /// The work tree: the repository's top level, or the directory itself.
    pub work_tree: PathBuf,
    /// A private repository under `$WEFT_HOME` (the directory is not a git work tree).
    pub private: bool,
    /// The user's index of a git work tree (only ever read, through a copy).
    user_index: Option<PathBuf>,
}

/// The snapshotter of one workspace, with its limits.
#[derive(Debug, Clone)]
pub struct Snapshotter {
    workspace: Workspace,
    limits: SnapshotsConfig,
    /// Where temporary index files go (`$WEFT_HOME/snapshots/tmp`).
    scratch: PathBuf,
    /// `$WEFT_HOME`, never part of a snapshot (its rollouts and private repositories).
    home: PathBuf,
}

impl Snapshotter {
    /// The snapshotter of `cwd`: its git repository, else a private one under `home` (made
    /// on first use).
    pub async fn locate(
        cwd: &Path,
        home: &Path,
        limits: SnapshotsConfig,
    ) -> Result<Snapshotter, SnapshotError> {
        let scratch = home.join("snapshots").join("tmp");
        let deadline = Instant::now() + Duration::from_millis(limits.timeout_ms);
        let probe = Git {
            git_dir: None,
            work_tree: cwd.to_path_buf(),
            index: None,
            deadline,
        };
        let found = probe
            .run(
                &[
                    "rev-parse",
                    "--path-format=absolute",
                    "--show-toplevel",
                    "--git-common-dir",
                    "--git-path",
                    "index",
                ],
                None,
            )
            .await;
        let workspace = match found {
            Ok(out) => {
                let text = String::from_utf8_lossy(&out);
                let mut lines = text.lines();
                match (lines.next(), lines.next(), lines.next()) {
                    (Some(top), Some(git_dir), Some(index)) if !top.is_empty() => Workspace {
                        git_dir: PathBuf::from(git_dir),
                        work_tree: PathBuf::from(top),
                        private: false,
                        user_index: Some(PathBuf::from(index)),
                    },
                    // A bare repository or a `.git` directory: not a work tree.
                    _ => private_workspace(cwd, home, deadline).await?,
                }
            }
            Err(SnapshotError::Timeout) => return Err(SnapshotError::Timeout),
            Err(_) => private_workspace(cwd, home, deadline).await?,
        };
        Ok(Snapshotter {
            workspace,
            limits,
            scratch,
            home: std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf()),
        })
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    fn git(&self) -> Git {
        Git {
            git_dir: Some(self.workspace.git_dir.clone()),
            work_tree: self.workspace.work_tree.clone(),
            index: None,
            deadline: Instant::now() + Duration::from_millis(self.limits.timeout_ms),
        }
    }

    /// Take a snapshot and keep it under `refname` (`refs/weft/snapshots/…`).
    pub async fn take(&self, refname: &str, message: &str) -> Result<Snapshot, SnapshotError> {
        let git = self.git();
        let tree = self.tree_of_workspace(&git).await?;
        let commit = git
            .text(&["commit-tree", &tree, "-m", message], None)
            .await?;
        git.run(&["update-ref", refname, &commit], None).await?;
        Ok(Snapshot { commit, tree })
    }

    /// The tree of the workspace as it is now (its objects written, no ref).
    pub async fn current_tree(&self) -> Result<String, SnapshotError> {
        self.tree_of_workspace(&self.git()).await
    }

    /// Whether the repository still has `tree` (a pruned snapshot's objects may be gone).
    pub async fn has_tree(&self, tree: &str) -> bool {
        let object = format!("{tree}^{{tree}}");
        self.git()
            .run(&["cat-file", "-e", &object], None)
            .await
            .is_ok()
    }

    /// The files that differ from tree `from` to tree `to`.
    pub async fn changes(&self, from: &str, to: &str) -> Result<Vec<Change>, SnapshotError> {
        restore::changes(&self.git(), from, to).await
    }

    /// Put the workspace, whose tree is `current` now, back to tree `target`: write the files
    /// that differ and delete those `target` does not have. Returns what changed.
    pub async fn restore(&self, current: &str, target: &str) -> Result<Vec<Change>, SnapshotError> {
        let git = self.git();
        let changes = restore::changes(&git, current, target).await?;
        restore::apply(&git, &self.workspace.work_tree, target, &changes).await?;
        Ok(changes)
    }

    /// Drop the snapshots older than `max_age_days` and beyond the newest `max_count`.
    pub async fn prune(&self, now_secs: i64) -> Result<usize, SnapshotError> {
        let git = self.git();
        let out = git
            .run(
                &[
                    "for-each-ref",
                    "--format=%(refname)%00%(committerdate:unix)%00",
                    REF_PREFIX,
                ],
                None,
            )
            .await?;
        let fields: Vec<&[u8]> = out
            .split(|b| *b == 0)
            .map(|f| f.strip_prefix(b"\n").unwrap_or(f))
            .collect();
        let mut refs: Vec<(i64, String)> = fields
            .chunks(2)
            .filter(|pair| pair.len() == 2 && !pair[0].is_empty())
            .map(|pair| {
                let when = String::from_utf8_lossy(pair[1]).trim().parse().unwrap_or(0);
                (when, String::from_utf8_lossy(pair[0]).into_owned())
            })
            .collect();
        // Newest first.
        refs.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
        let max_age =
            i64::try_from(self.limits.max_age_days.saturating_mul(86_400)).unwrap_or(i64::MAX);
        let doomed: Vec<&String> = refs
            .iter()
            .enumerate()
            .filter(|(at, (when, _))| *at >= self.limits.max_count || now_secs - when > max_age)
            .map(|(_, (_, name))| name)
            .collect();
        delete_refs(&git, &doomed).await
    }

    /// Hash the workspace's eligible files into a fresh temporary index and write its tree.
    async fn tree_of_workspace(&self, git: &Git) -> Result<String, SnapshotError> {
        std::fs::create_dir_all(&self.scratch).map_err(|e| SnapshotError::io(&self.scratch, e))?;
        let scratch = TempIndex::new(&self.scratch);
        let result = self.tree_with(git, &scratch).await;
        drop(scratch);
        result
    }

    async fn tree_with(&self, git: &Git, scratch: &TempIndex) -> Result<String, SnapshotError> {
        // The listing reads a copy of the user's index (tracked files), never the index.
        let listing = git.with_index(&scratch.listing);
        if let Some(user_index) = &self.workspace.user_index
            && user_index.exists()
        {
            std::fs::copy(user_index, &scratch.listing)
                .map_err(|e| SnapshotError::io(user_index, e))?;
        }
        let mut args = vec![
            "ls-files".to_string(),
            "-z".into(),
            "--cached".into(),
            "--others".into(),
            "--exclude-standard".into(),
            "--".into(),
            ".".into(),
        ];
        // `$WEFT_HOME` inside the workspace is not even walked.
        if let Ok(inside) = self.home.strip_prefix(&self.workspace.work_tree)
            && !inside.as_os_str().is_empty()
        {
            args.push(format!(":(exclude,literal){}", inside.display()));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = listing.run_listing(&args, self.limits.max_files).await?;
        let paths: BTreeSet<String> = nul_fields(&out)
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|p| !p.ends_with('/') && !p.contains('\n'))
            .filter(|p| !self.workspace.work_tree.join(p).starts_with(&self.home))
            .collect();
        if paths.len() > self.limits.max_files {
            return Err(SnapshotError::TooManyFiles(self.limits.max_files));
        }
        let files = eligible(&self.workspace.work_tree, paths, self.limits.max_file_bytes)?;
        let mut entries = Vec::new();
        let regular: Vec<&File> = files.iter().filter(|f| f.link.is_none()).collect();
        if !regular.is_empty() {
            let input: String = regular.iter().map(|f| format!("{}\n", f.path)).collect();
            let hashes = git
                .text(
                    &["hash-object", "-w", "--no-filters", "--stdin-paths"],
                    Some(input.into_bytes()),
                )
                .await?;
            for (file, hash) in regular.iter().zip(hashes.lines()) {
                entries.push(format!("{} {hash}\t{}\0", file.mode, file.path));
            }
        }
        for file in files.iter().filter(|f| f.link.is_some()) {
            let target = file.link.clone().unwrap_or_default();
            let hash = git
                .text(&["hash-object", "-w", "--stdin"], Some(target))
                .await?;
            entries.push(format!("120000 {hash}\t{}\0", file.path));
        }
        let index = git.with_index(&scratch.build);
        index
            .run(
                &["update-index", "--add", "-z", "--index-info"],
                Some(entries.concat().into_bytes()),
            )
            .await?;
        index.text(&["write-tree"], None).await
    }
}

/// A file that goes into a snapshot.
struct File {
    path: String,
    mode: &'static str,
    /// A symlink's target.
    link: Option<Vec<u8>>,
}

/// The listed paths that are files (or symlinks) of at most `max_bytes`.
fn eligible(
    work_tree: &Path,
    paths: BTreeSet<String>,
    max_bytes: u64,
) -> Result<Vec<File>, SnapshotError> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let mut files = Vec::new();
    for path in paths {
        let full = work_tree.join(&path);
        let Ok(meta) = std::fs::symlink_metadata(&full) else {
            // Deleted since the listing (or a tracked file that is gone): not in the snapshot.
            continue;
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&full).map_err(|e| SnapshotError::io(&full, e))?;
            files.push(File {
                path,
                mode: "120000",
                link: Some(target.as_os_str().as_bytes().to_vec()),
            });
        } else if meta.is_file() && meta.len() <= max_bytes {
            let executable = meta.permissions().mode() & 0o111 != 0;
            files.push(File {
                path,
                mode: if executable { "100755" } else { "100644" },
                link: None,
            });
        }
    }
    Ok(files)
}

/// The private repository of a directory that is not a git work tree (made on first use).
async fn private_workspace(
    cwd: &Path,
    home: &Path,
    deadline: Instant,
) -> Result<Workspace, SnapshotError> {
    let canonical = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let digest = Sha256::digest(canonical.display().to_string().as_bytes());
    let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    let git_dir = home.join("snapshots").join(format!("{name}.git"));
    if !git_dir.join("HEAD").exists() {
        std::fs::create_dir_all(&git_dir).map_err(|e| SnapshotError::io(&git_dir, e))?;
        let init = Git {
            git_dir: None,
            work_tree: canonical.clone(),
            index: None,
            deadline,
        };
        let target = git_dir.display().to_string();
        init.run(&["init", "--quiet", "--bare", &target], None)
            .await?;
        // Which directory this repository snapshots, for whoever looks into it.
        let _ = std::fs::write(git_dir.join("description"), canonical.display().to_string());
    }
    Ok(Workspace {
        git_dir,
        work_tree: canonical,
        private: true,
        user_index: None,
    })
}

/// Two temporary index files (one for the listing, one to build the tree), removed on drop.
struct TempIndex {
    listing: PathBuf,
    build: PathBuf,
}

impl TempIndex {
    fn new(dir: &Path) -> TempIndex {
        let id = uuid::Uuid::now_v7();
        TempIndex {
            listing: dir.join(format!("{id}.list.index")),
            build: dir.join(format!("{id}.build.index")),
        }
    }
}

impl Drop for TempIndex {
    fn drop(&mut self) {
        for path in [&self.listing, &self.build] {
            let _ = std::fs::remove_file(path);
            let _ = std::fs::remove_file(path.with_extension("index.lock"));
        }
    }
}

/// Delete `refs` in one `update-ref --stdin` transaction; how many there were.
async fn delete_refs(git: &Git, refs: &[impl AsRef<str>]) -> Result<usize, SnapshotError> {
    if refs.is_empty() {
        return Ok(0);
    }
    let script: String = refs
        .iter()
        .map(|name| format!("delete {}\n", name.as_ref()))
        .collect();
    git.run(&["update-ref", "--stdin"], Some(script.into_bytes()))
        .await?;
    Ok(refs.len())
}
