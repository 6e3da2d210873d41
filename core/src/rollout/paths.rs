//! Where rollout files live, finding them, and moving them in and out of the archive.

use std::fs::{self, File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use weft_protocol::ThreadId;

use super::RolloutError;
use crate::time::utc_parts;

/// The directory (under `$WEFT_HOME`) of live rollouts.
pub const SESSIONS_DIR: &str = "sessions";

/// The directory (under `$WEFT_HOME`) of archived rollouts; same relative layout as
/// [`SESSIONS_DIR`].
pub const ARCHIVED_SESSIONS_DIR: &str = "archived_sessions";

const FILE_PREFIX: &str = "rollout-";
const FILE_SUFFIX: &str = ".jsonl";

/// A rollout file found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundRollout {
    /// The file.
    pub path: PathBuf,
    /// Whether it is in `archived_sessions/`.
    pub archived: bool,
}

/// The path of a new thread's rollout:
/// `home/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<thread-id>.jsonl` (UTC).
pub fn rollout_path(home: &Path, created_at: i64, thread_id: &ThreadId) -> PathBuf {
    let (date, time) = utc_parts(created_at);
    let (year, month, day) = date;
    let (hour, minute, second) = time;
    home.join(SESSIONS_DIR)
        .join(format!("{year:04}"))
        .join(format!("{month:02}"))
        .join(format!("{day:02}"))
        .join(format!(
            "{FILE_PREFIX}{year:04}-{month:02}-{day:02}T{hour:02}-{minute:02}-{second:02}-{thread_id}{FILE_SUFFIX}"
        ))
}

/// Find a thread's rollout in `sessions/`, then in `archived_sessions/`, by its
/// `-<thread-id>.jsonl` suffix. Looks first in the day directories the id's UUIDv7 timestamp
/// points at, then walks both trees.
pub fn find_rollout(
    home: &Path,
    thread_id: &ThreadId,
) -> Result<Option<FoundRollout>, RolloutError> {
    let suffix = format!("-{thread_id}{FILE_SUFFIX}");
    let matches = |path: &Path| {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(FILE_PREFIX) && n.ends_with(&suffix))
    };
    for (dir, archived) in [(SESSIONS_DIR, false), (ARCHIVED_SESSIONS_DIR, true)] {
        let root = home.join(dir);
        if let Some(secs) = uuid_v7_secs(thread_id) {
            for delta in [0, -86_400, 86_400] {
                let (year, month, day) = utc_parts(secs + delta).0;
                let day_dir = root
                    .join(format!("{year:04}"))
                    .join(format!("{month:02}"))
                    .join(format!("{day:02}"));
                let Ok(entries) = fs::read_dir(&day_dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let path = entry.path();
                    if matches(&path) {
                        return Ok(Some(FoundRollout { path, archived }));
                    }
                }
            }
        }
        let mut found = None;
        walk(&root, &mut |path| {
            if found.is_none() && matches(path) {
                found = Some(path.to_path_buf());
            }
        })?;
        if let Some(path) = found {
            return Ok(Some(FoundRollout { path, archived }));
        }
    }
    Ok(None)
}

/// Every rollout file under `sessions/` and `archived_sessions/`, sorted by path within each
/// tree. Unreadable subdirectories are logged and skipped.
pub fn list_rollouts(home: &Path) -> Result<Vec<FoundRollout>, RolloutError> {
    let mut out = Vec::new();
    for (dir, archived) in [(SESSIONS_DIR, false), (ARCHIVED_SESSIONS_DIR, true)] {
        let mut paths = Vec::new();
        walk(&home.join(dir), &mut |path| {
            if is_rollout_file(path) {
                paths.push(path.to_path_buf());
            }
        })?;
        paths.sort();
        out.extend(
            paths
                .into_iter()
                .map(|path| FoundRollout { path, archived }),
        );
    }
    Ok(out)
}

/// The day directories (`YYYY/MM/DD` under `sessions/` and `archived_sessions/`) whose
/// modification time is after `since` (a file was added, removed or renamed in them), with
/// whether they are archived. Reads the year and month directories and looks at each day
/// directory's metadata: linear in the number of days, never in the number of rollouts.
pub fn changed_day_dirs(
    home: &Path,
    since: std::time::SystemTime,
) -> Result<Vec<(PathBuf, bool)>, RolloutError> {
    let subdirs = |dir: &Path| -> Result<Vec<PathBuf>, RolloutError> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(RolloutError::io(dir, err)),
        };
        Ok(entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect())
    };
    let mut out = Vec::new();
    for (dir, archived) in [(SESSIONS_DIR, false), (ARCHIVED_SESSIONS_DIR, true)] {
        for year in subdirs(&home.join(dir))? {
            for month in subdirs(&year)? {
                for day in subdirs(&month)? {
                    let changed = fs::metadata(&day)
                        .and_then(|m| m.modified())
                        .map_or(true, |time| time > since);
                    if changed {
                        out.push((day, archived));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The rollout files directly in `dir`, sorted.
pub fn rollouts_in(dir: &Path) -> Result<Vec<PathBuf>, RolloutError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(RolloutError::io(dir, err)),
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_rollout_file(p) && p.is_file())
        .collect();
    out.sort();
    Ok(out)
}

/// Move a rollout from `sessions/` to `archived_sessions/` (same relative path) and return
/// its new path. Fails with [`RolloutError::Locked`] while a writer holds the file.
pub fn archive(home: &Path, path: &Path) -> Result<PathBuf, RolloutError> {
    move_between(home, path, SESSIONS_DIR, ARCHIVED_SESSIONS_DIR)
}

/// Move a rollout from `archived_sessions/` back to `sessions/` and return its new path.
pub fn unarchive(home: &Path, path: &Path) -> Result<PathBuf, RolloutError> {
    move_between(home, path, ARCHIVED_SESSIONS_DIR, SESSIONS_DIR)
}

fn move_between(home: &Path, path: &Path, from: &str, to: &str) -> Result<PathBuf, RolloutError> {
    let from_root = home.join(from);
    let relative = path
        .strip_prefix(&from_root)
        .map_err(|_| RolloutError::NotUnder {
            path: path.to_path_buf(),
            dir: from_root.clone(),
        })?;
    let dest = home.join(to).join(relative);
    if dest.exists() {
        return Err(RolloutError::AlreadyExists { path: dest });
    }
    // Holding the lock while renaming makes sure no writer has the file open.
    let file = File::open(path).map_err(|e| RolloutError::io(path, e))?;
    lock_exclusive(&file, path)?;
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent).map_err(|e| RolloutError::io(parent, e))?;
    }
    fs::rename(path, &dest).map_err(|e| RolloutError::io(path, e))?;
    drop(file);
    // The move is durable once both directories' entries are.
    if let Some(parent) = dest.parent() {
        sync_dirs(parent, home)?;
    }
    if let Some(parent) = path.parent() {
        sync_dirs(parent, home)?;
    }
    Ok(dest)
}

/// fsync `dir` and each of its ancestors up to `top` (inclusive; `top` is where the tree
/// hangs from, e.g. `$WEFT_HOME`), so a new file, a new directory or a rename in `dir` survives
/// a power cut. `dir` outside `top` syncs `dir` alone.
pub(crate) fn sync_dirs(dir: &Path, top: &Path) -> Result<(), RolloutError> {
    for ancestor in dir.ancestors() {
        File::open(ancestor)
            .and_then(|d| d.sync_all())
            .map_err(|e| RolloutError::io(ancestor, e))?;
        if ancestor == top || !ancestor.starts_with(top) {
            break;
        }
    }
    Ok(())
}

/// Take the exclusive advisory lock on a rollout, or fail with [`RolloutError::Locked`]. On a
/// file system without locks it proceeds with a warning.
pub(crate) fn lock_exclusive(file: &File, path: &Path) -> Result<(), RolloutError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(RolloutError::Locked {
            path: path.to_path_buf(),
        }),
        Err(TryLockError::Error(err)) if err.kind() == io::ErrorKind::Unsupported => {
            tracing::warn!(path = %path.display(), "file locks unsupported here; rollout not locked");
            Ok(())
        }
        Err(TryLockError::Error(err)) => Err(RolloutError::io(path, err)),
    }
}

fn is_rollout_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(FILE_PREFIX) && n.ends_with(FILE_SUFFIX))
}

/// Visit every file below `root` (depth first). A missing root is empty; an unreadable
/// subdirectory is logged and skipped; an unreadable root is an error.
fn walk(root: &Path, visit: &mut dyn FnMut(&Path)) -> Result<(), RolloutError> {
    let entries = match fs::read_dir(root) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(RolloutError::io(root, err)),
    };
    let mut stack = vec![entries];
    while let Some(entries) = stack.last_mut() {
        let Some(entry) = entries.next() else {
            stack.pop();
            continue;
        };
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                tracing::warn!(dir = %root.display(), %err, "cannot read a directory entry");
                continue;
            }
        };
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => match fs::read_dir(&path) {
                Ok(sub) => stack.push(sub),
                Err(err) => {
                    tracing::warn!(dir = %path.display(), %err, "cannot read rollout directory");
                }
            },
            Ok(kind) if kind.is_file() => visit(&path),
            _ => {}
        }
    }
    Ok(())
}

/// The Unix seconds of a UUIDv7 string, when it is one.
fn uuid_v7_secs(id: &ThreadId) -> Option<i64> {
    let uuid = uuid::Uuid::parse_str(id.as_str()).ok()?;
    if uuid.get_version_num() != 7 {
        return None;
    }
    let (secs, _) = uuid.get_timestamp()?.to_unix();
    i64::try_from(secs).ok()
}
