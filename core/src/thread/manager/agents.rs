//! The manager's side of sub-agents (docs/agents.md §4): creating a child thread, loading a
//! cold one again, unloading one the tools closed, and giving every sub-agent's events to
//! its tree (the [`AgentSink`] wrapper).

use weft_protocol::{SessionSource, SubAgentSource, Thread, ThreadId, ThreadStatus};

use super::ThreadManager;
use crate::agents::{AgentSink, AgentStatus, ChildThread, TreePlace};
use crate::events::{SharedSink, ThreadEvent};
use crate::rollout::{RolloutRecord, RolloutWriter, SessionMeta};
use crate::state::ThreadRow;
use crate::thread::error::CoreError;
use crate::thread::handle::{Restored, ThreadHandle, ThreadSnapshot};
use crate::thread::options::StartThreadOptions;

impl ThreadManager {
    /// Create a sub-agent's thread (persisted unless its parent is ephemeral), load it, and
    /// announce it idle to its subscribers (`thread/status/changed`, as the reference: no
    /// `thread/started`).
    pub(super) async fn spawn_child(
        &self,
        child: ChildThread,
    ) -> Result<(ThreadHandle, ThreadSnapshot), CoreError> {
        let sinks = self.subscribers.clone().ok_or(CoreError::Overloaded)?;
        let settings = child.settings;
        let mut thread = super::new_thread(&settings, child.ephemeral);
        let id = thread.id.clone();
        thread.session_id = child.root.to_string();
        thread.parent_thread_id = Some(child.parent.clone());
        thread.source = SessionSource::SubAgent(SubAgentSource::ThreadSpawn {
            parent_thread_id: child.parent.clone(),
            depth: i32::try_from(child.depth).unwrap_or(i32::MAX),
            agent_path: child.path.clone(),
            agent_nickname: Some(child.nickname.clone()),
            agent_role: child.role.clone(),
        });
        thread.thread_source = Some("subagent".to_string());
        thread.agent_nickname = Some(child.nickname.clone());
        thread.agent_role = child.role.clone();
        let mut restored = Restored {
            history: child.history,
            ..Restored::default()
        };
        if !child.ephemeral {
            let writer = RolloutWriter::create(
                &self.services.config.home,
                SessionMeta::new(&thread, &settings),
            )
            .await?;
            for item in &restored.history {
                writer.append(RolloutRecord::ResponseItem(item.clone()));
            }
            writer.flush(true).await?;
            thread.path = Some(writer.path().display().to_string());
            self.index(&ThreadRow::from_thread(&thread, writer.path(), false))
                .await;
            restored.rollout = Some(writer);
        }
        let sink = sinks.child_sink(&child.parent);
        let (handle, snapshot) = self.load(thread, settings, sink.clone(), restored).await?;
        sink.emit(&id, ThreadEvent::StatusChanged(ThreadStatus::Idle))
            .await;
        Ok((handle, snapshot))
    }

    /// Load a cold sub-agent again (its tree's tools need it), with its parent's subscribers.
    pub(super) async fn resume_child(
        &self,
        id: &ThreadId,
        parent: &ThreadId,
    ) -> Result<ThreadHandle, CoreError> {
        let sinks = self.subscribers.clone().ok_or(CoreError::Overloaded)?;
        let sink = sinks.child_sink(parent);
        let (handle, _, warm) = self
            .resume_thread(id, StartThreadOptions::default(), sink.clone())
            .await?;
        if !warm {
            sink.emit(id, ThreadEvent::StatusChanged(ThreadStatus::Idle))
                .await;
        }
        Ok(handle)
    }

    /// Unload a sub-agent the tools closed (or its tree); its subscribers see it `notLoaded`
    /// ([`Unloaded::Closed`](super::Unloaded::Closed)). Returns whether it was loaded.
    pub async fn unload_child(&self, id: &ThreadId) -> bool {
        self.unload(id, super::Unloaded::Closed).await
    }

    /// Record that a sub-agent was closed or opened again: in its rollout (the durable truth)
    /// and its index row, so a restarted daemon gives it no slot while it is closed. The agent
    /// is not loaded (it is closed, or not yet opened). An ephemeral agent has nowhere to
    /// record it.
    pub async fn set_agent_closed(&self, id: &ThreadId, closed: bool) -> Result<(), CoreError> {
        let _gate = self.threads.gate(id).await;
        let path = match self.stored_rollout(id) {
            Ok(path) => path,
            Err(CoreError::NoRollout(_)) => return Ok(()),
            Err(err) => return Err(err),
        };
        let writer = RolloutWriter::resume(&path).await?;
        self.mark_dirty(id, true).await;
        writer.append(RolloutRecord::AgentClosed { closed });
        writer.close().await?;
        if let Some(state) = &self.services.state {
            match state.set_agent_closed(id, closed).await {
                Ok(_) => self.mark_dirty(id, false).await,
                Err(err) => {
                    tracing::warn!(thread = %id, %err, "cannot index the agent's closed state");
                }
            }
        }
        Ok(())
    }

    /// Close a root's tree (its root was archived, or unloaded as idle): every loaded
    /// sub-agent under it is unloaded, deepest first (a running turn is interrupted), and the
    /// tree's control plane is forgotten, so an idle daemon holds nothing for it. A later use
    /// rebuilds it from the state DB: its children cold, its closed agents still closed (that
    /// is stored). Returns the ids unloaded; none when `root` roots no tree (a sub-agent, or
    /// a root that never spawned).
    pub async fn close_tree(&self, root: &ThreadId) -> Vec<ThreadId> {
        match self.services.agents.forget_tree(root).await {
            Some(control) => self.unload_agents(&control).await,
            None => Vec::new(),
        }
    }

    /// When the tree under `root` went idle: the latest [`idle_since`](ThreadManager::idle_since)
    /// of the root and of its loaded sub-agents. `None` while the root or any loaded sub-agent
    /// runs a turn (a running child keeps its tree alive), or when the root is not loaded. For
    /// a thread that roots no tree, its own `idle_since`.
    pub async fn tree_idle_since(&self, root: &ThreadId) -> Option<std::time::Instant> {
        let mut since = self.idle_since(root).await?;
        for agent in self.loaded_agents(root).await {
            match self.idle_since(&agent).await {
                Some(idle) => since = since.max(idle),
                // Unloaded since it was listed: it no longer counts.
                None if self.get(&agent).is_none() => {}
                None => return None,
            }
        }
        Some(since)
    }

    /// The loaded sub-agents of the tree under `root`, deepest first.
    async fn loaded_agents(&self, root: &ThreadId) -> Vec<ThreadId> {
        let Some(control) = self.services.agents.existing_control(root).await else {
            return Vec::new();
        };
        deepest_first(&control)
            .into_iter()
            .filter(|id| self.get(id).is_some())
            .collect()
    }

    async fn unload_agents(&self, control: &crate::agents::AgentControl) -> Vec<ThreadId> {
        let mut unloaded = Vec::new();
        for id in deepest_first(control) {
            if self.unload_child(&id).await {
                unloaded.push(id);
            }
        }
        unloaded
    }

    /// Where a thread about to be loaded stands in its tree, and its sink: a sub-agent's
    /// events also go to its tree (its status, its parent's notification).
    pub(super) async fn place(
        &self,
        thread: &Thread,
        last_turn: Option<&weft_protocol::Turn>,
        sink: SharedSink,
    ) -> (TreePlace, SharedSink) {
        let agents = &self.services.agents;
        let Some(parent) = weft_protocol::SubAgentSource::parent_of(&thread.source) else {
            return (TreePlace::root(&thread.id), sink);
        };
        let (depth, path) = match &thread.source {
            SessionSource::SubAgent(SubAgentSource::ThreadSpawn {
                depth, agent_path, ..
            }) => (u32::try_from(*depth).unwrap_or(1), agent_path.clone()),
            _ => (1, None),
        };
        let root = agents.root_of(thread).await;
        let place = TreePlace {
            root: root.clone(),
            depth,
            path,
            parent: Some(parent.clone()),
        };
        let control = agents.control(&root).await;
        let status = match last_turn {
            Some(turn) => AgentStatus::after_turn(turn, crate::agents::last_agent_message(turn)),
            None => AgentStatus::PendingInit,
        };
        control.init_status(&thread.id, status);
        let parent_name = match spawn_parent_place(&parent, &root, &control) {
            Some(name) => name,
            None => parent.to_string(),
        };
        let sink = AgentSink::wrap(
            sink,
            control,
            agents,
            parent,
            place.name(&thread.id),
            parent_name,
        );
        (place, sink)
    }
}

/// Every sub-agent of a tree, deepest first: a parent is unloaded after everything under it.
fn deepest_first(control: &crate::agents::AgentControl) -> Vec<ThreadId> {
    let mut records = control.registry().agents();
    records.sort_by_key(|record| std::cmp::Reverse(record.depth));
    records.into_iter().map(|record| record.thread_id).collect()
}

/// The parent's name as a child addresses it: `/root`, a sub-agent's path, or its id.
fn spawn_parent_place(
    parent: &ThreadId,
    root: &ThreadId,
    control: &crate::agents::AgentControl,
) -> Option<String> {
    if parent == root {
        return Some(crate::agents::ROOT_PATH.to_string());
    }
    control
        .registry()
        .get(parent)
        .and_then(|record| record.path)
}
