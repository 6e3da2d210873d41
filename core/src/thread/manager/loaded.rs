//! [`LoadedThreads`]: the manager's registry of loaded threads. Each thread with an actor, or
//! with work under way on its stored files, has an entry with its own lifecycle
//! (loading → loaded → unloading) and its own gate: whatever opens, moves or appends to a
//! stored thread's rollout outside its actor (a cold resume, archive, unarchive, naming a
//! stored thread, recording an agent closed) and unloading hold the gate of *that* thread, so
//! two of them never race for the same file while work on different threads runs at once. A
//! second `thread/resume` of a thread being loaded waits at its gate and then finds it loaded
//! (warm) instead of failing on the rollout's lock.
//!
//! A loaded thread's entry also holds its agent mailbox (docs/agents.md §5), from when its
//! actor is started until it has stopped: the agents layer reaches it through
//! [`AgentHost::mailbox`](crate::agents::AgentHost::mailbox). The thread's place in its agent
//! tree is its actor's; the roots of sub-agents stay in the agents layer's `Agents`, which must
//! know them for threads that are not loaded too.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::OwnedMutexGuard;
use weft_protocol::ThreadId;

use crate::agents::AgentMailbox;
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
    /// The thread's agent mailbox, while its actor runs (loaded, or being stopped).
    mailbox: Option<AgentMailbox>,
}

impl Entry {
    fn stored() -> Entry {
        Entry {
            lifecycle: Lifecycle::Stored,
            gate: Arc::default(),
            mailbox: None,
        }
    }
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

    /// The agent mailbox of a thread whose actor runs (loaded, or being stopped).
    pub(super) fn mailbox(&self, id: &ThreadId) -> Option<AgentMailbox> {
        self.entries.lock().get(id)?.mailbox.clone()
    }

    /// A new thread's actor runs, reading `mailbox` (its id is new: no one else works on
    /// it). `sink`, the one its loader handed in, hears that it is loaded before anyone else
    /// can reach it.
    pub(super) fn insert(&self, handle: ThreadHandle, mailbox: AgentMailbox, sink: SharedSink) {
        sink.loaded(handle.id());
        let mut entries = self.entries.lock();
        let entry = entries
            .entry(handle.id().clone())
            .or_insert_with(Entry::stored);
        entry.lifecycle = Lifecycle::Loaded(handle);
        entry.mailbox = Some(mailbox);
    }

    /// Wait for the thread's gate and hold it.
    pub(super) async fn gate(&self, id: &ThreadId) -> Gate<'_> {
        let gate = self
            .entries
            .lock()
            .entry(id.clone())
            .or_insert_with(Entry::stored)
            .gate
            .clone();
        let guard = gate.lock_owned().await;
        Gate {
            threads: self,
            id: id.clone(),
            guard: Some(guard),
        }
    }

    /// Every loaded thread's handle, taken so no one reaches it (the daemon stops); their
    /// mailboxes stay until [`LoadedThreads::drained`], once the actors have stopped.
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
        handles
    }

    /// The drained threads' actors have stopped: their mailboxes are forgotten, and so is
    /// every entry no one waits at the gate of.
    pub(super) fn drained(&self) {
        let mut entries = self.entries.lock();
        for entry in entries.values_mut() {
            if !matches!(entry.lifecycle, Lifecycle::Loaded(_)) {
                entry.mailbox = None;
            }
        }
        entries.retain(|_, entry| {
            matches!(entry.lifecycle, Lifecycle::Loaded(_)) || Arc::strong_count(&entry.gate) > 1
        });
    }

    fn set(&self, id: &ThreadId, lifecycle: Lifecycle, mailbox: Option<AgentMailbox>) {
        if let Some(entry) = self.entries.lock().get_mut(id) {
            entry.lifecycle = lifecycle;
            entry.mailbox = mailbox;
        }
    }
}

impl Gate<'_> {
    /// The thread's actor is being started.
    pub(super) fn loading(&self) {
        self.threads.set(&self.id, Lifecycle::Loading, None);
    }

    /// The thread's actor runs, reading `mailbox`: `sink`, the one its loader handed in,
    /// hears it, then everyone may reach it.
    pub(super) fn loaded(&self, handle: ThreadHandle, mailbox: AgentMailbox, sink: SharedSink) {
        sink.loaded(&self.id);
        self.threads
            .set(&self.id, Lifecycle::Loaded(handle), Some(mailbox));
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

    /// The actor taken by [`Gate::unloading`] has stopped: its mailbox is forgotten (and with
    /// it where its waits got to).
    pub(super) fn unloaded(&self) {
        if let Some(entry) = self.threads.entries.lock().get_mut(&self.id) {
            entry.mailbox = None;
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
            entry.mailbox = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use std::sync::Arc;

    use super::LoadedThreads;
    use crate::events::ChannelSink;
    use crate::thread::handle::ThreadHandle;
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
    #[tokio::test]
    async fn a_mailbox_is_reachable_from_load_until_the_actor_stopped() {
        let threads = LoadedThreads::default();
        let id = ThreadId::from("a");
        let (ops, _actor) = tokio::sync::mpsc::channel(1);
        let (mailbox, _inbox) = crate::agents::mailbox();
        let gate = threads.gate(&id).await;
        gate.loading();
        assert!(threads.mailbox(&id).is_none());
        let handle = ThreadHandle::new(id.clone(), ops);
        gate.loaded(handle, mailbox, Arc::new(ChannelSink::null()));
        assert!(threads.mailbox(&id).is_some());
        // Being stopped: no one gets its handle, mail still reaches it.
        assert!(gate.unloading().is_some());
        assert!(threads.get(&id).is_none());
        assert!(threads.mailbox(&id).is_some());
        gate.unloaded();
        assert!(threads.mailbox(&id).is_none());
        drop(gate);
        assert!(threads.entries.lock().is_empty());
    }
}
