//! Fuzzy file search over directory trees (`fuzzyFileSearch` and its sessions,
//! docs/protocol.md §7.33), ranked as the reference ranks.
//!
//! [`walk`] streams the roots' entries (honouring `.gitignore`) into a session's index;
//! [`session`] ranks them against the latest query with the scores of [`score`]; [`run`] is one
//! query to completion (or cancellation). Every bound is in [`FileSearchConfig`].

pub mod score;
pub mod session;
mod walk;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::config::FileSearchConfig;
pub use session::{Reporter, Session};

/// Whether a match is a file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchType {
    /// A file (or anything that is not a directory).
    File,
    /// A directory.
    Directory,
}

/// One indexed entry.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Index of the root it is relative to.
    pub(crate) root: u32,
    /// Path relative to that root, `/`-separated.
    pub(crate) path: Box<str>,
    /// Char offset of its last component in `path`.
    pub(crate) name_start: u32,
    /// File or directory.
    pub(crate) match_type: MatchType,
}

/// One match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMatch {
    /// The root (as given) the path is relative to.
    pub root: PathBuf,
    /// Path relative to `root`.
    pub path: String,
    /// File or directory.
    pub match_type: MatchType,
    /// The score (higher is better).
    pub score: u32,
    /// Char indices of `path` that matched, sorted and unique.
    pub indices: Vec<u32>,
}

impl FileMatch {
    /// The last component of the path.
    pub fn file_name(&self) -> &str {
        score::name_of(&self.path)
    }
}

/// The best matches of one query at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    /// The query.
    pub query: String,
    /// The matches, best first (ties by path).
    pub matches: Vec<FileMatch>,
    /// Entries indexed so far.
    pub scanned: usize,
    /// Whether the walk has finished having seen everything (no budget hit, no error).
    pub walk_complete: bool,
}

/// One search to completion: the best matches of `query` under `roots`. When `cancel` is set
/// before it completes, it stops and answers what it had ranked by then.
pub fn run(
    query: &str,
    roots: Vec<PathBuf>,
    config: FileSearchConfig,
    cancel: &AtomicBool,
) -> Result<Snapshot, String> {
    let done = Arc::new(Done::default());
    let session = Session::start(roots, config, done.clone())?;
    session.update_query(query);
    let mut state = done.state.lock();
    while !state.1 {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        done.wake.wait_for(&mut state, Duration::from_millis(5));
    }
    let snapshot = state.0.take().unwrap_or_else(|| Snapshot {
        query: query.to_owned(),
        ..Snapshot::default()
    });
    drop(state);
    drop(session);
    Ok(snapshot)
}

/// The reporter of [`run`]: the last snapshot and whether the session completed.
#[derive(Default)]
struct Done {
    state: Mutex<(Option<Snapshot>, bool)>,
    wake: Condvar,
}

impl Reporter for Done {
    fn update(&self, snapshot: Snapshot) {
        self.state.lock().0 = Some(snapshot);
    }

    fn complete(&self, _query: &str) {
        self.state.lock().1 = true;
        self.wake.notify_all();
    }
}

#[cfg(test)]
mod tests;
