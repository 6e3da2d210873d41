//! The `ThreadManager`: creates threads and holds the loaded ones (one actor each).

use std::path::PathBuf;
use std::sync::Arc;

use weft_protocol::{SessionSource, Thread, ThreadId, ThreadReadState, ThreadStatus};

mod agents;
mod delete;
mod goals;
mod host;
mod idle;
mod import;
mod inject;
mod loaded;
mod metadata;
mod pages;
mod read_state;
mod replay;
mod revert;
mod rows;

pub use goals::GoalRequestError;
pub use idle::{Subscribers, Unloaded};
pub use import::{ImportedThread, ImportedTurn};
pub use pages::{PageError, ResumePages};
pub use read_state::ReadMarkError;

use super::actor::ThreadActor;
use super::error::{CoreError, OpenError};
use super::handle::{Op, Restored, ThreadHandle, ThreadSnapshot};
use super::options::StartThreadOptions;
use super::services::Services;
use crate::agents::AgentMailbox;
use crate::config::Config;
use crate::events::SharedSink;
use crate::rollout::index::{IndexFeed, Tee};
use crate::rollout::{
    Replay, RolloutError, RolloutLine, RolloutRecord, RolloutWriter, SessionMeta, archive,
    copy_fork, find_rollout, fork_lines, read_lines, unarchive,
};
use crate::settings::ThreadSettings;
use crate::state::{ListQuery, StateDb, ThreadRow};
use crate::time::{new_thread_id, now_secs};

/// A `thread/list` page as the manager answers it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadList {
    /// The threads, with live statuses.
    pub threads: Vec<Thread>,
    /// Cursor of the next page.
    pub next_cursor: Option<String>,
    /// Cursor for paging back with the opposite direction.
    pub backwards_cursor: Option<String>,
    /// The read states of `threads`, by id.
    pub read_states: std::collections::BTreeMap<String, ThreadReadState>,
}

/// A new thread with these settings: idle, no turns, created now, a root (`vscode`, the
/// source every client-started thread has).
fn new_thread(settings: &ThreadSettings, ephemeral: bool) -> Thread {
    Thread {
        ephemeral,
        model_provider: settings.model_provider.clone(),
        model: Some(settings.model.clone()),
        reasoning_effort: settings.reasoning_effort.clone(),
        status: ThreadStatus::Idle,
        cwd: settings.cwd.display().to_string(),
        ..crate::wire_thread::base(new_thread_id(), SessionSource::Vscode, now_secs())
    }
}

/// Creates and holds loaded threads.
pub struct ThreadManager {
    services: Arc<Services>,
    /// The loaded threads, each with its own lifecycle and gate (`loaded.rs`).
    threads: loaded::LoadedThreads,
    /// Who listens to loaded threads (the app-server's subscriber registry): where
    /// sub-agents' events go, and who is told of an unload. `None` in unit tests of the
    /// runtime: no sub-agents, no idle unloading.
    subscribers: Option<Arc<dyn Subscribers>>,
}

impl ThreadManager {
    /// A manager for this config, without a state DB (threads are still written to rollouts
    /// when not ephemeral) and without sub-agents. For tests of the runtime itself.
    pub fn new(config: Arc<Config>) -> Arc<ThreadManager> {
        ThreadManager::with_state(config, None, None)
    }

    /// A manager with the state DB of `config.home`. The DB opens in the background (call
    /// `StateDb::ready` to start it at once): it catches up with the rollouts first, and
    /// every use of it waits until it has. `subscribers` hear of unloads (a load is told to
    /// the sink its loader hands in, [`EventSink::loaded`](crate::events::EventSink::loaded)).
    pub async fn open(
        config: Arc<Config>,
        subscribers: Arc<dyn Subscribers>,
    ) -> Result<Arc<ThreadManager>, OpenError> {
        let state = StateDb::deferred(&config.home);
        Ok(ThreadManager::with_state(
            config,
            Some(state),
            Some(subscribers),
        ))
    }

    /// The manager is made shared: the services it gives every actor reach it, as the
    /// sub-agent trees' [`AgentHost`](crate::agents::AgentHost), through a weak reference
    /// made here (an actor never keeps the manager alive).
    fn with_state(
        config: Arc<Config>,
        state: Option<StateDb>,
        subscribers: Option<Arc<dyn Subscribers>>,
    ) -> Arc<ThreadManager> {
        Arc::new_cyclic(|manager: &std::sync::Weak<ThreadManager>| {
            let host = subscribers.is_some().then(|| {
                let host: std::sync::Weak<dyn crate::agents::AgentHost> = manager.clone();
                host
            });
            ThreadManager {
                services: Arc::new(Services::new(config, state, host)),
                threads: loaded::LoadedThreads::default(),
                subscribers,
            }
        })
    }

    /// The shared services.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// Create a thread, start its actor, and return its first snapshot. Its events go to `sink`.
    pub async fn start_thread(
        &self,
        options: StartThreadOptions,
        sink: SharedSink,
    ) -> Result<(ThreadHandle, ThreadSnapshot), CoreError> {
        // The config as written now (a client may have written it since the start).
        let settings = options.settings(&self.services.live.current())?;
        let mut thread = new_thread(&settings, options.ephemeral);
        thread.originator = options.originator.clone();
        thread.thread_source = options.thread_source.clone();
        let mut restored = Restored::default();
        if !options.ephemeral {
            let writer = RolloutWriter::create(
                &self.services.config.home,
                SessionMeta::new(&thread, &settings),
            )
            .await?;
            thread.path = Some(writer.path().display().to_string());
            self.index(&ThreadRow::from_thread(&thread, writer.path(), false))
                .await;
            restored.rollout = Some(writer);
        }
        self.load(thread, settings, sink, restored).await
    }

    /// Start the actor of a thread and remember it as loaded (`sink` hears it first).
    async fn load(
        &self,
        thread: Thread,
        settings: ThreadSettings,
        sink: SharedSink,
        restored: Restored,
    ) -> Result<(ThreadHandle, ThreadSnapshot), CoreError> {
        let (handle, mailbox) = self
            .spawn_actor(thread, settings, sink.clone(), restored)
            .await;
        self.threads.insert(handle.clone(), mailbox, sink);
        let snapshot = handle.snapshot().await?;
        Ok((handle, snapshot))
    }

    /// Start a thread's actor, with its place in its agent tree; returns its handle and the
    /// agent mailbox it reads (both for the registry of loaded threads).
    async fn spawn_actor(
        &self,
        thread: Thread,
        settings: ThreadSettings,
        sink: SharedSink,
        restored: Restored,
    ) -> (ThreadHandle, AgentMailbox) {
        let (place, sink) = self.place(&thread, restored.turns.last(), sink).await;
        let mut restored = restored;
        restored.place = Some(place);
        ThreadActor::spawn(thread, settings, self.services.clone(), sink, restored)
    }

    /// The stored (not archived) rollout of a thread, or the reference's error.
    fn stored_rollout(&self, id: &ThreadId) -> Result<PathBuf, CoreError> {
        match find_rollout(&self.services.config.home, id)? {
            Some(found) if !found.archived => Ok(found.path),
            _ => Err(CoreError::NoRollout(id.to_string())),
        }
    }

    /// `thread/resume`: the live thread when it is loaded (warm; never a second actor),
    /// else the thread rebuilt from its rollout (cold), with `options` applied on top of its
    /// last settings. Returns whether it was already loaded.
    ///
    /// On a cold resume, `sink` hears that the thread is loaded before it becomes visible to
    /// other callers (so a concurrent warm resume finds the subscriber list it stands for,
    /// [`EventSink::loaded`](crate::events::EventSink::loaded)); a warm resume does not use it.
    pub async fn resume_thread(
        &self,
        id: &ThreadId,
        options: StartThreadOptions,
        sink: SharedSink,
    ) -> Result<(ThreadHandle, ThreadSnapshot, bool), CoreError> {
        if let Some(mut warm) = self.warm(id).await? {
            self.decorate(std::slice::from_mut(&mut warm.1.thread))
                .await;
            return Ok(warm);
        }
        // Cold: one loader of this thread at a time. Whoever waited at its gate may find it
        // loaded now.
        let gate = self.threads.gate(id).await;
        if let Some(mut warm) = self.warm(id).await? {
            self.decorate(std::slice::from_mut(&mut warm.1.thread))
                .await;
            return Ok(warm);
        }
        gate.loading();
        let path = self.stored_rollout(id)?;
        let replay = self.lean_replay(&path).await?;
        // The row is marked behind the file only once the thread writes to it: a thread
        // resumed to be read writes nothing to the file or the state DB.
        let writer = RolloutWriter::resume_then(&path, self.dirty_before_writing(id)).await?;
        let mut settings = replay.settings();
        options.apply_to(&mut settings, &self.services.live.current())?;
        let mut thread = replay.thread(Some(&path));
        thread.status = ThreadStatus::Idle;
        let restored = Restored {
            history: replay.history,
            turns: replay.turns,
            token_usage: replay.token_usage,
            rollout: Some(writer),
            place: None,
        };
        let (handle, mailbox) = self
            .spawn_actor(thread, settings, sink.clone(), restored)
            .await;
        gate.loaded(handle.clone(), mailbox, sink);
        let mut snapshot = handle.snapshot().await?;
        self.decorate(std::slice::from_mut(&mut snapshot.thread))
            .await;
        Ok((handle, snapshot, false))
    }

    /// The live thread for a warm resume: `None` when it is not loaded (or its actor just
    /// stopped); the reference's error for an ephemeral thread, which has no rollout to resume
    /// (docs/protocol.md §11.5), even while it is loaded.
    async fn warm(
        &self,
        id: &ThreadId,
    ) -> Result<Option<(ThreadHandle, ThreadSnapshot, bool)>, CoreError> {
        let Some(handle) = self.get(id) else {
            return Ok(None);
        };
        let Ok(snapshot) = handle.snapshot().await else {
            return Ok(None);
        };
        if snapshot.thread.ephemeral {
            return Err(CoreError::NoRollout(id.to_string()));
        }
        Ok(Some((handle, snapshot, true)))
    }

    /// `thread/fork`: a new thread with a copy of a stored thread's history (through
    /// `last_turn_id` when given). A busy source's open turn is closed as interrupted in the
    /// copy. An ephemeral fork stays in memory.
    pub async fn fork_thread(
        &self,
        id: &ThreadId,
        last_turn_id: Option<&weft_protocol::TurnId>,
        options: StartThreadOptions,
        sink: SharedSink,
    ) -> Result<(ThreadHandle, ThreadSnapshot), CoreError> {
        if let Some(handle) = self.get(id) {
            // Everything the source recorded so far must be in its file before it is copied.
            let (tx, rx) = tokio::sync::oneshot::channel();
            handle.send(Op::Flush { reply: tx }).await?;
            let _ = rx.await;
        }
        let path = self.stored_rollout(id)?;
        let fork_error = |err| match err {
            RolloutError::TurnNotFound(turn) => CoreError::ForkTurnNotFound(turn),
            RolloutError::TurnInProgress(turn) => CoreError::ForkTurnInProgress(turn),
            other => CoreError::from(other),
        };
        // The source's settings and metadata from its index (bounded memory, as a cold
        // resume reads it); its lines are read again only to be copied.
        let source = self.lean_replay(&path).await?;
        let mut settings = source.settings();
        options.apply_to(&mut settings, &self.services.live.current())?;
        let new_id = new_thread_id();
        let now = now_secs();
        let mut thread = source.thread(None);
        thread.id = new_id.clone();
        thread.session_id = new_id.to_string();
        thread.forked_from_id = Some(id.clone());
        thread.created_at = now;
        thread.updated_at = now;
        thread.ephemeral = options.ephemeral;
        thread.status = ThreadStatus::Idle;
        thread.model = Some(settings.model.clone());
        thread.model_provider = settings.model_provider.clone();
        thread.cwd = settings.cwd.display().to_string();
        thread.originator = options.originator.clone().or(thread.originator);
        if options.thread_source.is_some() {
            thread.thread_source = options.thread_source.clone();
        }
        let meta = SessionMeta::new(&thread, &settings);
        let last_turn_id = last_turn_id.cloned();
        let restored = if options.ephemeral {
            // An ephemeral fork lives in memory anyway: its copy is built there.
            let source_path = path.clone();
            let (lines, _) =
                tokio::task::spawn_blocking(move || read_lines(&source_path)).await??;
            let body = fork_lines(&lines, last_turn_id.as_ref()).map_err(fork_error)?;
            let mut copy = vec![RolloutLine::now(RolloutRecord::SessionMeta(Box::new(meta)))];
            copy.extend(body);
            let replay = Replay::from_lines(&path, copy, 0)?;
            Restored {
                history: replay.history,
                turns: replay.turns,
                token_usage: replay.token_usage,
                rollout: None,
                place: None,
            }
        } else {
            // Streamed: the source is copied into the new file a line at a time, indexed as
            // it is written, then the new thread is read back from that index, as a cold
            // resume reads it.
            let source_path = path.clone();
            let (new_path, feed) =
                RolloutWriter::write_new(&self.services.config.home, meta, move |out, header| {
                    let mut feed = IndexFeed::new(header);
                    let mut tee = Tee {
                        out,
                        feed: &mut feed,
                    };
                    copy_fork(&source_path, &mut tee, last_turn_id.as_ref())?;
                    Ok(feed)
                })
                .await
                .map_err(fork_error)?;
            let (cache, indexed) = (self.services.history_index.clone(), new_path.clone());
            let adopted =
                tokio::task::spawn_blocking(move || feed.finish(&indexed).map(|i| cache.adopt(i)));
            if let Ok(Err(err)) = adopted.await {
                tracing::warn!(%err, "the fork's copy is read back to be indexed");
            }
            let replay = self.lean_replay(&new_path).await?;
            let writer = RolloutWriter::resume(&new_path).await?;
            thread.path = Some(new_path.display().to_string());
            self.index(&ThreadRow::from_thread(&thread, &new_path, false))
                .await;
            // Only the last turn stays in memory (the file has them all).
            Restored {
                history: replay.history,
                turns: replay.turns,
                token_usage: replay.token_usage,
                rollout: Some(writer),
                place: None,
            }
        };
        self.load(thread, settings, sink, restored).await
    }

    /// `thread/read`: a loaded thread's live state, else its rollout. Never loads it.
    pub async fn read_thread(
        &self,
        id: &ThreadId,
        include_turns: bool,
    ) -> Result<Thread, CoreError> {
        if let Some(handle) = self.get(id)
            && let Ok(snapshot) = handle.snapshot().await
        {
            let mut thread = snapshot.thread;
            if include_turns {
                thread.turns = self.full_turns(id, snapshot.turns).await?;
            }
            self.decorate(std::slice::from_mut(&mut thread)).await;
            return Ok(thread);
        }
        let found = find_rollout(&self.services.config.home, id)?
            .ok_or_else(|| CoreError::NotLoaded(id.to_string()))?;
        let replay = self.lean_summary(&found.path).await?;
        let mut thread = replay.thread(Some(&found.path));
        if include_turns {
            // Not loaded: nothing to write out, and the file is found already.
            thread.turns = self.full_turns_at(found.path, replay.turns).await?;
        }
        self.decorate(std::slice::from_mut(&mut thread)).await;
        Ok(thread)
    }

    /// `thread/list`: a page of the index, with live statuses for loaded threads.
    pub async fn list_threads(&self, query: &ListQuery) -> Result<ThreadList, CoreError> {
        let Some(state) = &self.services.state else {
            return Ok(ThreadList::default());
        };
        let page = state.list(query).await?;
        let ids: Vec<ThreadId> = page.rows.iter().map(|row| row.id.clone()).collect();
        let read_states = state.read_states(&ids).await?;
        let mut threads = Vec::with_capacity(page.rows.len());
        for row in page.rows {
            let status = match self.get(&row.id) {
                Some(handle) => match handle.snapshot().await {
                    Ok(snapshot) => snapshot.thread.status,
                    Err(_) => ThreadStatus::NotLoaded,
                },
                None => ThreadStatus::NotLoaded,
            };
            threads.push(row.to_thread(status));
        }
        self.decorate(&mut threads).await;
        Ok(ThreadList {
            threads,
            next_cursor: page.next_cursor,
            backwards_cursor: page.backwards_cursor,
            read_states,
        })
    }

    /// A durable thread's read state; `None` for a thread the index does not hold (ephemeral
    /// or unknown) or without a state DB.
    pub async fn read_state(&self, id: &ThreadId) -> Result<Option<ThreadReadState>, CoreError> {
        let Some(state) = &self.services.state else {
            return Ok(None);
        };
        if state.get(id).await?.is_none() {
            return Ok(None);
        }
        Ok(Some(state.read_state(id).await?))
    }

    /// `thread/archive`: unload the thread if it is loaded (interrupting a running turn; the
    /// [`Subscribers`] hear [`Unloaded::Archived`] then, before the move, also when the move
    /// then fails), then move its rollout into the archive.
    pub async fn archive_thread(&self, id: &ThreadId) -> Result<(), CoreError> {
        let gate = self.threads.gate(id).await;
        // A loaded ephemeral thread has no rollout either.
        let path = self.stored_rollout(id)?;
        self.unload_gated(&gate, Unloaded::Archived).await;
        let home = self.services.config.home.clone();
        let new_path = tokio::task::spawn_blocking(move || archive(&home, &path)).await??;
        if let Some(state) = &self.services.state
            && let Err(err) = state.set_archived(id, true, &new_path).await
        {
            tracing::warn!(thread = %id, %err, "cannot index the archived thread");
        }
        Ok(())
    }

    /// `thread/unarchive`: move the rollout back; the thread (not loaded).
    pub async fn unarchive_thread(&self, id: &ThreadId) -> Result<Thread, CoreError> {
        let _gate = self.threads.gate(id).await;
        let path = match find_rollout(&self.services.config.home, id)? {
            Some(found) if found.archived => found.path,
            _ => return Err(CoreError::NoArchivedRollout(id.to_string())),
        };
        let home = self.services.config.home.clone();
        let new_path = tokio::task::spawn_blocking(move || unarchive(&home, &path)).await??;
        if let Some(state) = &self.services.state
            && let Err(err) = state.set_archived(id, false, &new_path).await
        {
            tracing::warn!(thread = %id, %err, "cannot index the unarchived thread");
        }
        let replay = self.lean_replay(&new_path).await?;
        let mut thread = replay.thread(Some(&new_path));
        self.decorate(std::slice::from_mut(&mut thread)).await;
        Ok(thread)
    }

    /// `thread/name/set`, on a loaded or a stored thread.
    pub async fn set_thread_name(&self, id: &ThreadId, name: &str) -> Result<(), CoreError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(CoreError::EmptyName);
        }
        let _gate = self.threads.gate(id).await;
        if let Some(handle) = self.get(id) {
            let (tx, rx) = tokio::sync::oneshot::channel();
            handle
                .send(Op::SetName {
                    name: Some(name.to_string()),
                    reply: tx,
                })
                .await?;
            return rx
                .await
                .map_err(|_| CoreError::ThreadNotFound(id.to_string()))?;
        }
        let path = self.stored_rollout(id)?;
        let writer = RolloutWriter::resume(&path).await?;
        self.mark_dirty(id, true).await;
        writer.append(RolloutRecord::ThreadNameSet {
            name: name.to_string(),
        });
        writer.close().await?;
        if let Some(state) = &self.services.state {
            match state.set_name(id, Some(name)).await {
                Ok(_) => self.mark_dirty(id, false).await,
                Err(err) => tracing::warn!(thread = %id, %err, "cannot index the thread name"),
            }
        }
        Ok(())
    }

    /// Stop a loaded thread's actor (interrupting its turn, closing its rollout) and forget
    /// it; its subscribers are told `why`. Returns whether it was loaded.
    pub async fn unload(&self, id: &ThreadId, why: Unloaded) -> bool {
        self.unload_gated(&self.threads.gate(id).await, why).await
    }

    /// Stop a thread's actor (interrupting its turn, closing its rollout) with its gate held,
    /// so no one reaches it meanwhile, and tell its subscribers `why` before the gate opens
    /// (a load that waits at it registers after they forgot). Returns whether it was loaded.
    async fn unload_gated(&self, gate: &loaded::Gate<'_>, why: Unloaded) -> bool {
        let Some(handle) = gate.unloading() else {
            return false;
        };
        handle.shutdown().await;
        gate.unloaded();
        if let Some(subscribers) = &self.subscribers {
            subscribers.unloaded(handle.id(), why).await;
        }
        true
    }

    /// When a loaded thread became idle, or `None` if it is running a turn (or not loaded).
    pub async fn idle_since(&self, id: &ThreadId) -> Option<std::time::Instant> {
        let handle = self.get(id)?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        handle.send(Op::Idle { reply: tx }).await.ok()?;
        rx.await.ok().flatten()
    }

    /// The handle of a loaded thread.
    pub fn get(&self, id: &ThreadId) -> Option<ThreadHandle> {
        self.threads.get(id)
    }

    /// Ids of every loaded thread, sorted.
    pub fn loaded_ids(&self) -> Vec<ThreadId> {
        let mut ids: Vec<ThreadId> = self.threads.ids();
        ids.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        ids
    }

    /// Stop every thread (interrupting running turns), then close the state DB: its last
    /// connection folds the write-ahead log into `state.sqlite`, so the next start does not
    /// replay it.
    pub async fn shutdown(&self) {
        let handles = self.threads.drain();
        // All at once: each actor's last writes wait on the disk and the DB, not on the others.
        futures::future::join_all(handles.iter().map(ThreadHandle::shutdown)).await;
        self.threads.drained();
        if let Some(state) = &self.services.state {
            // A DB still catching up with the rollouts (a first start over many of them) is
            // let finish, within the shutdown grace, so its work is not lost; one cut off is
            // done again at the next start.
            let grace =
                std::time::Duration::from_secs(self.services.config.limits.shutdown_grace_secs);
            match tokio::time::timeout(grace, state.ready()).await {
                Ok(Ok(())) => {}
                Ok(Err(err)) => tracing::warn!(%err, "the state DB did not open"),
                Err(_) => tracing::warn!("the state DB is still catching up; stopping anyway"),
            }
            state.close().await;
        }
    }
}
