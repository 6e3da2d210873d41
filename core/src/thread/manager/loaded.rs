//! [`LoadedThreads`]: the manager's registry of loaded threads. Each thread with an actor, or
//! with work under way on its stored files, has an entry with its own lifecycle
//! (loading → loaded → unloading) and its own gate: whatever opens, moves or appends to a
//! stored thread's rollout outside its actor (a cold resume, archive, unarchive, naming a
//! stored thread, recording an agent closed) and unloading hold the gate of *that* thread, so
//! two of them never race for the same file while work on different threads runs at once. A
//! second `thread/resume` of a thread being loaded waits at its gate and then finds it loaded
//! (warm) instead of failing on the rollout's lock.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::OwnedMutexGuard;
use weft_protocol::ThreadId;

use crate::events::SharedSink;
use crate::thread::handle::ThreadHandle;

/// Where a thread stands.
enum Lifecycle {
    /// No actor: work on its stored files is under way (or waits at the gate).
    Stored,
    /// Its actor is being started.
    Loading,
    /// Its actor runs; everyone may reach it.
    Loaded(ThreadHandle),
    /// Its actor is being stopped: no one reaches it any more.
    Unloading,
}

struct Entry {
    lifecycle: Lifecycle,
    gate: Arc<tokio::sync::Mutex<()>>,
}

/// The loaded threads, by id.
#[derive(Default)]
pub(super) struct LoadedThreads {
    entries: Mutex<HashMap<ThreadId, Entry>>,
}

/// The gate of one thread, held: its stored files and its lifecycle are the holder's until
/// it is dropped.
pub(super) struct Gate<'a> {
    threads: &'a LoadedThreads,
    id: ThreadId,
    guard: Option<OwnedMutexGuard<()>>,
}

impl LoadedThreads {
    /// The handle of a loaded thread (`None` while it is loading or unloading).
    pub(super) fn get(&self, id: &ThreadId) -> Option<ThreadHandle> {
        match self.entries.lock().get(id) {
            Some(Entry {
                lifecycle: Lifecycle::Loaded(handle),
                ..
            }) => Some(handle.clone()),
            _ => None,
        }
    }

    /// Ids of every loaded thread.
    pub(super) fn ids(&self) -> Vec<ThreadId> {
        self.entries
            .lock()
            .iter()
            .filter(|(_, entry)| matches!(entry.lifecycle, Lifecycle::Loaded(_)))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// A new thread's actor runs (its id is new: no one else works on it). `sink`, the one
    /// its loader handed in, hears that it is loaded before anyone else can reach it.
    pub(super) fn insert(&self, handle: ThreadHandle, sink: SharedSink) {
        sink.loaded(handle.id());
        let mut entries = self.entries.lock();
        let entry = entries.entry(handle.id().clone()).or_insert_with(|| Entry {
            lifecycle: Lifecycle::Stored,
            gate: Arc::default(),
        });
        entry.lifecycle = Lifecycle::Loaded(handle);
    }

    /// Wait for the thread's gate and hold it.
    pub(super) async fn gate(&self, id: &ThreadId) -> Gate<'_> {
        let gate = self
            .entries
            .lock()
            .entry(id.clone())
            .or_insert_with(|| Entry {
                lifecycle: Lifecycle::Stored,
                gate: Arc::default(),
            })
            .gate
            .clone();
        let guard = gate.lock_owned().await;
        Gate {
            threads: self,
            id: id.clone(),
            guard: Some(guard),
        }
    }

    /// Every loaded thread's handle, forgotten (the daemon stops).
    pub(super) fn drain(&self) -> Vec<ThreadHandle> {
        let mut entries = self.entries.lock();
        let mut handles = Vec::new();
        for entry in entries.values_mut() {
            if let Lifecycle::Loaded(handle) =
                std::mem::replace(&mut entry.lifecycle, Lifecycle::Unloading)
            {
                handles.push(handle);
            }
        }
        entries.retain(|_, entry| Arc::strong_count(&entry.gate) > 1);
        handles
    }

    fn set(&self, id: &ThreadId, lifecycle: Lifecycle) {
        if let Some(entry) = self.entries.lock().get_mut(id) {
            entry.lifecycle = lifecycle;
        }
    }
}

impl Gate<'_> {
    /// The thread's actor is being started.
    pub(super) fn loading(&self) {
        self.threads.set(&self.id, Lifecycle::Loading);
    }

    /// The thread's actor runs: `sink`, the one its loader handed in, hears it, then everyone
    /// may reach it.
    pub(super) fn loaded(&self, handle: ThreadHandle, sink: SharedSink) {
        sink.loaded(&self.id);
        self.threads.set(&self.id, Lifecycle::Loaded(handle));
    }

    /// Take the loaded thread's handle, so no one reaches it while it is stopped (`None`
    /// when it is not loaded).
    pub(super) fn unloading(&self) -> Option<ThreadHandle> {
        let mut entries = self.threads.entries.lock();
        let entry = entries.get_mut(&self.id)?;
        match std::mem::replace(&mut entry.lifecycle, Lifecycle::Unloading) {
            Lifecycle::Loaded(handle) => Some(handle),
            other => {
                entry.lifecycle = other;
                None
            }
        }
    }
}

impl Drop for Gate<'_> {
    /// The gate opens; a thread left without an actor, that no one else waits for, leaves
    /// the registry.
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut entries = self.threads.entries.lock();
        let Some(entry) = entries.get_mut(&self.id) else {
            return;
        };
        if matches!(entry.lifecycle, Lifecycle::Loaded(_)) {
            return;
        }
        if Arc::strong_count(&entry.gate) == 1 {
            entries.remove(&self.id);
        } else {
            // The next holder finds a thread with no actor.
            entry.lifecycle = Lifecycle::Stored;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::LoadedThreads;
    use weft_protocol::ThreadId;

    #[tokio::test]
    async fn gates_serialise_one_thread_and_not_two() {
        let threads = LoadedThreads::default();
        let (a, b) = (ThreadId::from("a"), ThreadId::from("b"));
        let held = threads.gate(&a).await;
        // Another thread's gate opens at once while `a`'s is held.
        let other = tokio::time::timeout(Duration::from_secs(1), threads.gate(&b)).await;
        assert!(other.is_ok());
        drop(other);
        // The same thread's waits until it is dropped.
        let same = tokio::time::timeout(Duration::from_millis(50), threads.gate(&a)).await;
        assert!(same.is_err());
        drop(held);
        let again = tokio::time::timeout(Duration::from_secs(1), threads.gate(&a)).await;
        assert!(again.is_ok());
        drop(again);
        // No actor and no one waiting: nothing is left behind.
        assert!(threads.entries.lock().is_empty());
        assert!(threads.ids().is_empty());
    }
}
