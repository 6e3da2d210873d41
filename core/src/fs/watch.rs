//! `fs/watch` / `fs/unwatch` and what feeds `fs/changed` (docs/protocol.md §7.31): one
//! daemon-wide `notify` watcher (one inotify instance), the registry of every connection's
//! watches, and the bounded debounce of each.
//!
//! Bounds, all from `[fs]`: a connection holds at most `max_watches_per_connection` watches;
//! the watcher's events wait for the router in a queue of `max_queued_events` (past it they
//! are dropped and every watch reports its own path next); a watch gathers at most
//! `max_pending_changes` paths before its next notification (past it the batch is collapsed to
//! the watched path). A flood of changes therefore costs a fixed amount of memory, and each
//! watch sends at most one `fs/changed` per `debounce_ms`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use parking_lot::Mutex;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use crate::config::FsConfig;

/// Why a watch was not started.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The connection already has a watch of this id (the reference's wording).
    #[error("watchId already exists: {0}")]
    Duplicate(String),
    /// The connection holds as many watches as it may.
    #[error(
        "this connection already holds {0} watches, the most fs.max_watches_per_connection allows"
    )]
    TooMany(usize),
    /// The watcher refused the path.
    #[error("{0}")]
    Watcher(String),
}

/// Every connection's watches.
pub struct FsWatches {
    limits: FsConfig,
    shared: Arc<Shared>,
}

struct Shared {
    registry: Mutex<Registry>,
    /// Made with the first watch (it needs the runtime for its router).
    watcher: Mutex<Option<RecommendedWatcher>>,
    /// Set when the event queue was full and events were dropped.
    overflowed: AtomicBool,
}

#[derive(Default)]
struct Registry {
    /// By connection and watch id.
    watches: HashMap<(u64, String), Arc<WatchState>>,
    /// By the path given to the watcher: the watches it feeds.
    by_watched: HashMap<PathBuf, Vec<Arc<WatchState>>>,
}

/// One watch: what it watches, what it has gathered, and its end.
struct WatchState {
    target: PathBuf,
    /// The path given to the watcher: `target` for a directory, else the nearest existing
    /// directory above it.
    watched: PathBuf,
    pending: Mutex<Pending>,
    wake: Notify,
    ended: CancellationToken,
    /// Held while a notification of this watch is being sent, so `fs/unwatch` answers only
    /// once none is in flight.
    sending: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Pending {
    paths: BTreeSet<PathBuf>,
    overflowed: bool,
}

/// The receiving end of one watch.
pub struct WatchSubscription {
    state: Arc<WatchState>,
    debounce: Duration,
}

impl FsWatches {
    /// The registry, bounded by `[fs]`.
    pub fn new(limits: &FsConfig) -> FsWatches {
        FsWatches {
            limits: limits.clone(),
            shared: Arc::new(Shared {
                registry: Mutex::new(Registry::default()),
                watcher: Mutex::new(None),
                overflowed: AtomicBool::new(false),
            }),
        }
    }

    /// Start watch `id` of connection `owner` on `target` (already checked by
    /// [`super::FsAccess::check_watch`]), non-recursively: the path itself and, for a
    /// directory, its direct children. A file is watched through its directory, a missing
    /// path through its nearest existing ancestor.
    pub fn watch(
        &self,
        owner: u64,
        id: String,
        target: PathBuf,
    ) -> Result<WatchSubscription, WatchError> {
        let mut registry = self.shared.registry.lock();
        let key = (owner, id);
        if registry.watches.contains_key(&key) {
            return Err(WatchError::Duplicate(key.1));
        }
        let held = registry.watches.keys().filter(|(o, _)| *o == owner).count();
        if held >= self.limits.max_watches_per_connection {
            return Err(WatchError::TooMany(held));
        }
        // A directory is watched itself (its children's changes); anything else through its
        // directory, so a file replaced by a rename (an editor's save, git's `HEAD.lock`) is
        // still followed.
        let watched = match std::fs::metadata(&target) {
            Ok(meta) if meta.is_dir() => target.clone(),
            _ => nearest_existing(target.parent().unwrap_or(&target)),
        };
        if !registry.by_watched.contains_key(&watched) {
            self.with_watcher(|watcher| watcher.watch(&watched, RecursiveMode::NonRecursive))?;
        }
        let state = Arc::new(WatchState {
            target,
            watched: watched.clone(),
            pending: Mutex::new(Pending::default()),
            wake: Notify::new(),
            ended: CancellationToken::new(),
            sending: tokio::sync::Mutex::new(()),
        });
        registry
            .by_watched
            .entry(watched)
            .or_default()
            .push(state.clone());
        registry.watches.insert(key, state.clone());
        Ok(WatchSubscription {
            state,
            debounce: Duration::from_millis(self.limits.debounce_ms),
        })
    }

    /// End watch `id` of `owner` (nothing when there is none); returns once no notification
    /// of it is being sent.
    pub async fn unwatch(&self, owner: u64, id: &str) {
        let removed = self.remove(|o, i| o == owner && i == id);
        for state in removed {
            let _sending = state.sending.lock().await;
        }
    }

    /// End every watch of a closed connection.
    pub fn connection_closed(&self, owner: u64) {
        self.remove(|o, _| o == owner);
    }

    /// How many watches `owner` holds.
    pub fn count(&self, owner: u64) -> usize {
        let registry = self.shared.registry.lock();
        registry.watches.keys().filter(|(o, _)| *o == owner).count()
    }

    fn remove(&self, which: impl Fn(u64, &str) -> bool) -> Vec<Arc<WatchState>> {
        let mut registry = self.shared.registry.lock();
        let keys: Vec<_> = registry
            .watches
            .keys()
            .filter(|(o, i)| which(*o, i))
            .cloned()
            .collect();
        let mut removed = Vec::with_capacity(keys.len());
        for key in keys {
            let Some(state) = registry.watches.remove(&key) else {
                continue;
            };
            state.ended.cancel();
            if let Some(list) = registry.by_watched.get_mut(&state.watched) {
                list.retain(|s| !Arc::ptr_eq(s, &state));
                if list.is_empty() {
                    registry.by_watched.remove(&state.watched);
                    let watched = state.watched.clone();
                    // A path that vanished is already unwatched by the kernel.
                    let _ = self.with_watcher(|watcher| watcher.unwatch(&watched));
                }
            }
            removed.push(state);
        }
        removed
    }

    /// Run `f` on the watcher, made (with its router) on first use.
    fn with_watcher(
        &self,
        f: impl FnOnce(&mut RecommendedWatcher) -> notify::Result<()>,
    ) -> Result<(), WatchError> {
        let mut slot = self.shared.watcher.lock();
        if let Some(watcher) = slot.as_mut() {
            return f(watcher).map_err(|e| WatchError::Watcher(e.to_string()));
        }
        {
            let (tx, rx) = mpsc::channel(self.limits.max_queued_events);
            let shared = Arc::downgrade(&self.shared);
            let flag = self.shared.clone();
            let watcher =
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    let Ok(event) = event else {
                        return;
                    };
                    if tx.try_send(event).is_err() {
                        flag.overflowed.store(true, Ordering::Release);
                    }
                })
                .map_err(|e| WatchError::Watcher(e.to_string()))?;
            let limit = self.limits.max_pending_changes;
            tokio::spawn(route(shared, rx, limit));
            f(slot.insert(watcher)).map_err(|e| WatchError::Watcher(e.to_string()))
        }
    }
}

/// The router: each event's paths to the watches they concern.
async fn route(
    shared: std::sync::Weak<Shared>,
    mut events: mpsc::Receiver<notify::Event>,
    limit: usize,
) {
    while let Some(event) = events.recv().await {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let registry = shared.registry.lock();
        if shared.overflowed.swap(false, Ordering::AcqRel) {
            for state in registry.watches.values() {
                state.add(None, limit);
            }
        }
        if !is_change(&event.kind) {
            continue;
        }
        for path in &event.paths {
            let candidates = [Some(path.as_path()), path.parent()];
            for watched in candidates.into_iter().flatten() {
                for state in registry.by_watched.get(watched).into_iter().flatten() {
                    if state.concerns(path) {
                        state.add(Some(path), limit);
                    }
                }
            }
        }
    }
}

/// Whether an event changes something (opening or reading a file does not).
fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// `path` itself when it exists (as a link or anything else), else its nearest ancestor that
/// does.
fn nearest_existing(path: &Path) -> PathBuf {
    let mut at = path;
    loop {
        if at.symlink_metadata().is_ok() {
            return at.to_path_buf();
        }
        match at.parent() {
            Some(parent) => at = parent,
            None => return at.to_path_buf(),
        }
    }
}

impl WatchState {
    /// Whether a change at `path` concerns this watch: the path, a direct child of a watched
    /// directory, or (while it is missing) a directory made on the way to it.
    fn concerns(&self, path: &Path) -> bool {
        path == self.target
            || (self.watched == self.target && path.parent() == Some(self.target.as_path()))
            || (path != self.watched && self.target.starts_with(path))
    }

    /// Gather `path` (`None`: something was lost; report the watched path).
    fn add(&self, path: Option<&Path>, limit: usize) {
        let mut pending = self.pending.lock();
        match path {
            Some(path) if pending.paths.len() < limit || pending.paths.contains(path) => {
                pending.paths.insert(path.to_path_buf());
            }
            _ => pending.overflowed = true,
        }
        drop(pending);
        self.wake.notify_one();
    }
}

impl WatchSubscription {
    /// The next batch of changed paths, sorted, once a change came and the debounce interval
    /// after it passed; `None` once the watch ended.
    pub async fn next(&self) -> Option<Vec<PathBuf>> {
        let state = &self.state;
        loop {
            {
                let pending = state.pending.lock();
                if !pending.paths.is_empty() || pending.overflowed {
                    break;
                }
            }
            tokio::select! {
                () = state.wake.notified() => {}
                () = state.ended.cancelled() => return None,
            }
        }
        tokio::select! {
            () = tokio::time::sleep(self.debounce) => {}
            () = state.ended.cancelled() => return None,
        }
        let mut pending = state.pending.lock();
        let paths = std::mem::take(&mut pending.paths);
        if std::mem::take(&mut pending.overflowed) {
            return Some(vec![state.target.clone()]);
        }
        Some(paths.into_iter().collect())
    }

    /// Permission to send one notification of this watch: `None` once it ended (the
    /// notification is then dropped); `fs/unwatch` waits for a permission held.
    pub async fn sending(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        let guard = self.state.sending.lock().await;
        (!self.state.ended.is_cancelled()).then_some(guard)
    }

    /// Resolves when the watch ends.
    pub async fn ended(&self) {
        self.state.ended.cancelled().await;
    }

    /// The path the watch reports on (as the client named it, normalized).
    pub fn target(&self) -> &Path {
        &self.state.target
    }

    /// Paths gathered and not yet sent (for tests of the bound).
    pub fn pending_len(&self) -> usize {
        self.state.pending.lock().paths.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(pending: usize) -> FsConfig {
        FsConfig {
            max_watches_per_connection: 2,
            max_pending_changes: pending,
            debounce_ms: 50,
            ..FsConfig::default()
        }
    }

    #[tokio::test]
    async fn a_change_is_reported_once_debounced() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let watches = FsWatches::new(&limits(16));
        let sub = watches.watch(1, "w".into(), root.clone()).unwrap();
        std::fs::write(root.join("a"), "1").unwrap();
        std::fs::write(root.join("a"), "2").unwrap();
        let batch = tokio::time::timeout(Duration::from_secs(5), sub.next())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(batch, vec![root.join("a")]);
    }

    #[tokio::test]
    async fn bounds_and_ends() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let watches = FsWatches::new(&limits(4));
        let sub = watches.watch(1, "w".into(), root.clone()).unwrap();
        assert!(matches!(
            watches.watch(1, "w".into(), root.clone()),
            Err(WatchError::Duplicate(_))
        ));
        let _second = watches.watch(1, "x".into(), root.join("missing")).unwrap();
        let err = watches.watch(1, "y".into(), root.clone()).err().unwrap();
        assert!(
            err.to_string().contains("fs.max_watches_per_connection"),
            "{err}"
        );
        // Another connection has its own budget.
        let _other = watches.watch(2, "w".into(), root.clone()).unwrap();
        for i in 0..50 {
            std::fs::write(root.join(format!("f{i}")), "x").unwrap();
        }
        let batch = tokio::time::timeout(Duration::from_secs(5), sub.next())
            .await
            .unwrap()
            .unwrap();
        assert!(sub.pending_len() <= 4);
        assert!(batch.len() <= 4, "{batch:?}");
        watches.connection_closed(1);
        assert_eq!(watches.count(1), 0);
        assert_eq!(watches.count(2), 1);
        assert!(sub.next().await.is_none());
    }

    #[test]
    fn a_missing_path_is_watched_through_its_ancestor() {
        let state = WatchState {
            target: PathBuf::from("/a/b/c"),
            watched: PathBuf::from("/a"),
            pending: Mutex::new(Pending::default()),
            wake: Notify::new(),
            ended: CancellationToken::new(),
            sending: tokio::sync::Mutex::new(()),
        };
        assert!(state.concerns(Path::new("/a/b")));
        assert!(state.concerns(Path::new("/a/b/c")));
        assert!(!state.concerns(Path::new("/a/x")));
        assert!(!state.concerns(Path::new("/a")));
        // A file is watched through its directory: its siblings are no change of it.
        let file = WatchState {
            target: PathBuf::from("/d/f"),
            watched: PathBuf::from("/d"),
            ..state
        };
        assert!(file.concerns(Path::new("/d/f")));
        assert!(!file.concerns(Path::new("/d/g")) && !file.concerns(Path::new("/d")));
    }
}
