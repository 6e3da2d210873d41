//! The indexes of the rollouts paged most recently, and their copies on disk
//! ([`super::sidecar`]): a daemon indexes a file once, and a later daemon starts from the
//! copy instead of from the file's first byte. A caller that only needs the latest turns
//! ([`IndexCache::with_recent`]) gets the partial index of the sidecar's [`super::tail`]
//! when it has a good one; one that needs the whole index ([`IndexCache::with_index`]), or a
//! question the partial index cannot answer, gets the whole index read from the sidecar.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::sidecar::{self, Sidecar};
use super::{RolloutError, RolloutIndex, tail};

#[cfg(test)]
mod tests;

/// Rollouts shorter than this are indexed by streaming them (a few milliseconds) and get no
/// sidecar: a daemon with thousands of small threads writes no index files.
pub const SIDECAR_MIN_BYTES: u64 = 1 << 20;

/// The indexes of the rollouts paged most recently, at most `capacity` of them.
#[derive(Debug)]
pub struct IndexCache {
    capacity: usize,
    /// Where sidecars are kept; `None`: none are.
    dir: Option<PathBuf>,
    /// Rollouts at least this long get a sidecar.
    min_bytes: u64,
    /// Most recently used last.
    entries: Mutex<Vec<(PathBuf, Slot)>>,
}

/// One cached index (`None` until first built).
type Slot = Arc<Mutex<Option<Entry>>>;

#[derive(Debug)]
struct Entry {
    index: RolloutIndex,
    /// The index's copy on disk, while it has one.
    sidecar: Option<Sidecar>,
    /// Writing the sidecar failed: not tried again for this entry.
    failed: bool,
    /// The sidecar's tail is level with it. Appends leave it behind: it is written when the
    /// sidecar is written anew, read back whole, or brought level at a thread's close.
    tail_written: bool,
}

impl Entry {
    fn new(mut index: RolloutIndex, sidecar: Option<Sidecar>) -> Entry {
        let failed = index.journal.is_some() && sidecar.is_none();
        if failed {
            index.journal = None;
        }
        Entry {
            index,
            sidecar,
            failed,
            tail_written: false,
        }
    }
}

/// How much of an index a caller needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// The last turns will do (a partial index, when one is at hand).
    Recent,
    /// All of it.
    Whole,
}

impl IndexCache {
    /// An empty cache that keeps no sidecars.
    pub fn new(capacity: usize) -> IndexCache {
        IndexCache {
            capacity: capacity.max(1),
            dir: None,
            min_bytes: SIDECAR_MIN_BYTES,
            entries: Mutex::new(Vec::new()),
        }
    }

    /// An empty cache that keeps the index of each rollout of at least `min_bytes` in `dir`.
    pub fn with_sidecars(capacity: usize, dir: PathBuf, min_bytes: u64) -> IndexCache {
        IndexCache {
            dir: Some(dir),
            min_bytes,
            ..IndexCache::new(capacity)
        }
    }

    /// Run `f` on the up-to-date index of the whole of `path` (blocking I/O: call it off the
    /// async runtime). Callers paging the same file take turns.
    pub fn with_index<T>(
        &self,
        path: &Path,
        f: impl FnOnce(&RolloutIndex) -> Result<T, RolloutError>,
    ) -> Result<T, RolloutError> {
        let slot = self.slot(path);
        let mut guard = slot.lock();
        f(&self.refresh(path, &mut guard, Need::Whole)?.index)
    }

    /// Run `f` on an up-to-date index of `path` that may hold only its last turns (a partial
    /// index, [`RolloutIndex::is_partial`]); when `f` answers [`RolloutError::NotHeld`], it
    /// runs again on the whole index. Blocking I/O, like [`IndexCache::with_index`].
    pub fn with_recent<T>(
        &self,
        path: &Path,
        mut f: impl FnMut(&RolloutIndex) -> Result<T, RolloutError>,
    ) -> Result<T, RolloutError> {
        let slot = self.slot(path);
        let mut guard = slot.lock();
        let entry = self.refresh(path, &mut guard, Need::Recent)?;
        match f(&entry.index) {
            Err(RolloutError::NotHeld) if entry.index.is_partial() => {
                f(&self.refresh(path, &mut guard, Need::Whole)?.index)
            }
            answer => answer,
        }
    }

    /// The entry of `path`, opened or brought level with the file, whole when `need` says so.
    fn refresh<'a>(
        &self,
        path: &Path,
        slot: &'a mut Option<Entry>,
        need: Need,
    ) -> Result<&'a mut Entry, RolloutError> {
        // `Some(whether a tail will do)` when the entry is to be opened.
        let open = match slot.as_mut() {
            None => Some(need == Need::Recent),
            Some(entry) if need == Need::Whole && entry.index.is_partial() => Some(false),
            Some(entry) => {
                entry.index.update()?;
                if entry.index.unsure() {
                    // A partial index that met a turn it does not hold is read whole instead.
                    Some(false)
                } else {
                    self.persist(entry)?;
                    None
                }
            }
        };
        if let Some(tail) = open {
            let opened = if tail { self.open_recent(path)? } else { None };
            *slot = Some(match opened {
                Some(entry) => entry,
                None => self.open(path)?,
            });
        }
        slot.as_mut()
            .ok_or_else(|| RolloutError::io(path, std::io::Error::other("rollout index missing")))
    }

    /// Bring the sidecar of `path` level with the file (a thread's rollout is closed), when
    /// the file is long enough to have one. Blocking I/O.
    pub fn remember(&self, path: &Path) -> Result<(), RolloutError> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let long = std::fs::metadata(path).is_ok_and(|meta| meta.len() >= self.min_bytes);
        let kept = sidecar::path_for(dir, path).is_some_and(|p| p.exists());
        if !long && !kept {
            return Ok(());
        }
        let slot = self.slot(path);
        let mut guard = slot.lock();
        let entry = self.refresh(path, &mut guard, Need::Recent)?;
        level_tail(entry);
        Ok(())
    }

    /// Keep `index` (built as its file was written, `IndexFeed`) as the index of its file, with
    /// a sidecar when the file is long enough: the file is not read to be indexed.
    pub fn adopt(&self, mut index: RolloutIndex) {
        let side = self
            .dir
            .as_ref()
            .filter(|_| index.indexed_bytes() >= self.min_bytes)
            .and_then(|d| sidecar::path_for(d, index.path()));
        let sidecar = match side {
            Some(side) => fresh(&side, &mut index),
            None => {
                index.journal = None;
                None
            }
        };
        let slot = self.slot(index.path());
        let mut entry = Entry::new(index, sidecar);
        entry.tail_written = true;
        *slot.lock() = Some(entry);
    }

    /// Drop the index of `path` and its sidecar (the thread is deleted).
    pub fn forget(&self, path: &Path) {
        self.entries.lock().retain(|(p, _)| p != path);
        if let Some(side) = self.dir.as_ref().and_then(|d| sidecar::path_for(d, path)) {
            let _ = tail::remove(&tail::path_for(&side));
            let _ = std::fs::remove_file(side);
        }
    }

    fn slot(&self, path: &Path) -> Slot {
        let mut entries = self.entries.lock();
        let slot = match entries.iter().position(|(p, _)| p == path) {
            Some(at) => entries.remove(at).1,
            None => Arc::new(Mutex::new(None)),
        };
        entries.push((path.to_path_buf(), slot.clone()));
        if entries.len() > self.capacity {
            entries.remove(0);
        }
        slot
    }

    /// The partial index of `path` from its sidecar's tail, brought level with the file, when
    /// it has a good tail (and the index can go on from it).
    fn open_recent(&self, path: &Path) -> Result<Option<Entry>, RolloutError> {
        let Some(side) = self.dir.as_ref().and_then(|d| sidecar::path_for(d, path)) else {
            return Ok(None);
        };
        let Some((index, sidecar)) = tail::load(&side, path) else {
            return Ok(None);
        };
        let mut entry = Entry::new(index, Some(sidecar));
        entry.tail_written = true;
        entry.index.update()?;
        if entry.index.unsure() {
            return Ok(None);
        }
        self.persist(&mut entry)?;
        Ok(Some(entry))
    }

    /// The whole index of `path`: from its sidecar and the file's end when it has a good one,
    /// else from the whole file (writing a sidecar when the file is long enough).
    fn open(&self, path: &Path) -> Result<Entry, RolloutError> {
        let Some(side) = self.dir.as_ref().and_then(|d| sidecar::path_for(d, path)) else {
            return Ok(Entry::new(RolloutIndex::build(path)?, None));
        };
        if let Some((index, sidecar)) = sidecar::load(&side, path) {
            let mut entry = Entry::new(index, Some(sidecar));
            entry.index.update()?;
            self.persist(&mut entry)?;
            // The whole sidecar was read: the next daemon reads its tail instead.
            level_tail(&mut entry);
            return Ok(entry);
        }
        if std::fs::metadata(path).is_ok_and(|meta| meta.len() >= self.min_bytes) {
            return open_fresh(&side, path);
        }
        Ok(Entry::new(RolloutIndex::build(path)?, None))
    }

    /// Append to the entry's sidecar what its index gained; a sidecar that cannot be written,
    /// or that was changed by someone else, is removed (it is only a cache), and a file that
    /// grew long enough since it was first indexed gets one, from one more pass.
    fn persist(&self, entry: &mut Entry) -> Result<(), RolloutError> {
        let Some(sidecar) = &mut entry.sidecar else {
            if !entry.failed
                && entry.index.indexed_bytes() >= self.min_bytes
                && let Some(side) = self
                    .dir
                    .as_ref()
                    .and_then(|d| sidecar::path_for(d, entry.index.path()))
            {
                *entry = open_fresh(&side, entry.index.path())?;
            }
            return Ok(());
        };
        let restarted = std::mem::take(&mut entry.index.restarted);
        let outcome = if restarted {
            let path = sidecar.path().to_path_buf();
            sidecar::write_fresh(&path, &mut entry.index).map(|fresh| {
                *sidecar = fresh;
                true
            })
        } else {
            sidecar::append(sidecar, &mut entry.index)
        };
        if let Ok(true) = outcome {
            entry.tail_written = false;
        }
        if let Err(err) = outcome {
            tracing::warn!(sidecar = %sidecar.path().display(), %err, "dropping a rollout's on-disk index");
            let _ = tail::remove(&tail::path_for(sidecar.path()));
            let _ = std::fs::remove_file(sidecar.path());
            entry.sidecar = None;
            entry.index.journal = None;
            entry.failed = true;
        }
        if restarted {
            // A sidecar written anew gets its tail with it.
            level_tail(entry);
        }
        Ok(())
    }
}

/// The index of `path` from its first byte, with a new sidecar at `side`.
fn open_fresh(side: &Path, path: &Path) -> Result<Entry, RolloutError> {
    let mut index = RolloutIndex::empty(path.to_path_buf(), (0, 0));
    index.journal = Some(Vec::new());
    index.update()?;
    let sidecar = fresh(side, &mut index);
    let mut entry = Entry::new(index, sidecar);
    entry.tail_written = true;
    Ok(entry)
}

/// A new sidecar for `index` and its tail, or `None` (logged) when the sidecar cannot be
/// written.
fn fresh(side: &Path, index: &mut RolloutIndex) -> Option<Sidecar> {
    match sidecar::write_fresh(side, index) {
        Ok(sidecar) => {
            write_tail(&sidecar, index);
            Some(sidecar)
        }
        Err(err) => {
            tracing::warn!(sidecar = %side.display(), %err, "cannot write a rollout's on-disk index");
            None
        }
    }
}

/// Write the entry's tail when it is behind its sidecar.
fn level_tail(entry: &mut Entry) {
    if let Some(sidecar) = entry.sidecar.as_ref().filter(|_| !entry.tail_written) {
        write_tail(sidecar, &entry.index);
        entry.tail_written = true;
    }
}

/// Write the tail of `sidecar`; one that cannot be written is removed (logged): it is only a
/// cache of the sidecar.
fn write_tail(sidecar: &Sidecar, index: &RolloutIndex) {
    if let Err(err) = tail::write(sidecar, index) {
        tracing::warn!(sidecar = %sidecar.path().display(), %err, "cannot write a rollout index's tail");
        let _ = tail::remove(&tail::path_for(sidecar.path()));
    }
}
