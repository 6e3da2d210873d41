//! [`AgentControl`]: the control plane of one root thread tree (docs/agents.md §3). It holds
//! the tree's registry and each agent's status; the operations the multi-agent tools share —
//! spawn, resume, close, status, interrupt — go through it. A sub-agent is an ordinary thread:
//! this only decides who may exist and reaches threads through the [`AgentHost`].

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tokio::sync::watch;
use weft_protocol::ThreadId;

use super::host::{AgentHost, ChildThread, TreeHost};
use super::registry::{AgentLimits, AgentRecord, AgentRegistry, SpawnReservation};
use super::status::AgentStatus;
use crate::model::ResponseItem;
use crate::settings::ThreadSettings;

/// Where a thread stands in its tree (computed when it is loaded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreePlace {
    /// The tree's root thread.
    pub root: ThreadId,
    /// 0 for the root.
    pub depth: u32,
    /// The agent's path: `/root` for the root, `/root/NAME…` for a v2 sub-agent; `None` for
    /// a v1 sub-agent (v1 agents are named by id).
    pub path: Option<String>,
    /// The parent, for a sub-agent.
    pub parent: Option<ThreadId>,
}

impl TreePlace {
    /// The place of a root thread.
    pub fn root(id: &ThreadId) -> TreePlace {
        TreePlace {
            root: id.clone(),
            depth: 0,
            path: Some(ROOT_PATH.to_string()),
            parent: None,
        }
    }

    /// The agent's name as the other agents address it: its path, else its id.
    pub fn name(&self, id: &ThreadId) -> String {
        self.path.clone().unwrap_or_else(|| id.to_string())
    }
}

/// The root's agent path.
pub const ROOT_PATH: &str = "/root";

/// What a spawn asks for, resolved by the tool from its arguments.
pub struct SpawnRequest {
    /// The child's agent path (v2), checked for uniqueness.
    pub path: Option<String>,
    /// The child's settings.
    pub settings: ThreadSettings,
    /// The history it starts with (empty for a fresh child).
    pub history: Vec<ResponseItem>,
    /// The agent role, when one was given.
    pub role: Option<String>,
}

/// The thread a child is spawned from, as far as the tree needs to know.
pub struct SpawnParent<'a> {
    /// The spawning thread.
    pub thread_id: &'a ThreadId,
    /// Where it stands.
    pub place: &'a TreePlace,
    /// An ephemeral parent spawns ephemeral children.
    pub ephemeral: bool,
}

/// A spawned child, loaded and idle.
pub struct Spawned {
    /// Its thread.
    pub id: ThreadId,
    /// Its registry record.
    pub record: AgentRecord,
    /// The settings it got.
    pub settings: ThreadSettings,
}

/// The control plane of one tree.
pub struct AgentControl {
    registry: Arc<AgentRegistry>,
    hub: Weak<dyn TreeHost>,
    statuses: Mutex<HashMap<ThreadId, watch::Sender<AgentStatus>>>,
}

impl AgentControl {
    pub(super) fn new(root: ThreadId, limits: AgentLimits, hub: Weak<dyn TreeHost>) -> Arc<Self> {
        Arc::new(AgentControl {
            registry: AgentRegistry::new(root, limits),
            hub,
            statuses: Mutex::new(HashMap::new()),
        })
    }

    /// The tree's registry.
    pub fn registry(&self) -> &Arc<AgentRegistry> {
        &self.registry
    }

    /// Put a stored sub-agent back after a restart (cold: loaded when needed).
    pub(super) fn restore(&self, record: AgentRecord) {
        self.registry.restore(record);
    }

    /// Record an agent's status.
    pub fn set_status(&self, id: &ThreadId, status: AgentStatus) {
        let mut statuses = self.statuses.lock();
        match statuses.get(id) {
            Some(sender) => {
                sender.send_replace(status);
            }
            None => {
                statuses.insert(id.clone(), watch::channel(status).0);
            }
        }
    }

    /// Set the status unless one is known (a cold child loaded again keeps what it had).
    pub fn init_status(&self, id: &ThreadId, status: AgentStatus) {
        self.statuses
            .lock()
            .entry(id.clone())
            .or_insert_with(|| watch::channel(status).0);
    }

    /// A watch of an agent's status; `None` when the tree does not know it.
    pub async fn watch(&self, id: &ThreadId) -> Option<watch::Receiver<AgentStatus>> {
        if let Some(sender) = self.statuses.lock().get(id) {
            return Some(sender.subscribe());
        }
        let record = self.registry.get(id)?;
        // A child restored after a restart: its status is its last stored turn's.
        let status = if record.closed {
            AgentStatus::Shutdown
        } else {
            self.stored_status(id).await
        };
        self.init_status(id, status);
        self.statuses.lock().get(id).map(watch::Sender::subscribe)
    }

    /// An agent's status now (`NotFound` when the tree does not know it).
    pub async fn status(&self, id: &ThreadId) -> AgentStatus {
        match self.watch(id).await {
            Some(watch) => watch.borrow().clone(),
            None => AgentStatus::NotFound,
        }
    }

    async fn stored_status(&self, id: &ThreadId) -> AgentStatus {
        let Some(host) = self.hub.upgrade().and_then(|hub| hub.host()) else {
            return AgentStatus::NotFound;
        };
        match host.last_turn(id).await {
            Ok(Some(turn)) => AgentStatus::after_turn(&turn, last_agent_message(&turn)),
            Ok(None) => AgentStatus::PendingInit,
            Err(_) => AgentStatus::NotFound,
        }
    }

    /// Spawn a child of `parent`: reserve its slot, create and load its thread, commit. Every
    /// failure gives the slot back (the reservation's drop guard). The error is the text for
    /// the model.
    pub async fn spawn(
        &self,
        hub: &impl TreeHost,
        parent: &SpawnParent<'_>,
        request: SpawnRequest,
    ) -> Result<Spawned, String> {
        let failed = |why: String| format!("collab spawn failed: {why}");
        let reservation = self
            .registry
            .reserve(parent.place.depth, request.path.clone())
            .map_err(|refusal| failed(refusal.to_string()))?;
        let host = hub
            .host()
            .ok_or_else(|| failed("the daemon is shutting down".into()))?;
        let child = child_thread(parent, &reservation, &request);
        let (id, settings) = host.spawn(child).await.map_err(failed)?;
        let record = reservation.commit(id.clone(), parent.thread_id.clone(), request.role.clone());
        hub.remember_root(&id, &parent.place.root);
        self.set_status(&id, AgentStatus::PendingInit);
        Ok(Spawned {
            id,
            record,
            settings,
        })
    }

    /// Make sure an open agent of this tree is loaded, loading a cold one; the host to reach
    /// it through. `Err` is the status to report instead (not found, or closed).
    pub async fn open(
        &self,
        hub: &impl TreeHost,
        id: &ThreadId,
    ) -> Result<Arc<dyn AgentHost>, AgentStatus> {
        let record = self.registry.get(id).ok_or(AgentStatus::NotFound)?;
        if record.closed {
            return Err(AgentStatus::Shutdown);
        }
        let host = hub.host().ok_or(AgentStatus::NotFound)?;
        host.open(id, &record.parent_thread_id)
            .await
            .map_err(|err| {
                tracing::warn!(agent = %id, %err, "cannot load a sub-agent");
                AgentStatus::NotFound
            })?;
        Ok(host)
    }

    /// `close_agent`: its status before, then the agent and everything under it are unloaded
    /// (a running turn is interrupted) and marked shut down. Cancellation only goes down.
    pub async fn close(&self, hub: &impl TreeHost, id: &ThreadId) -> AgentStatus {
        let previous = self.status(id).await;
        if matches!(previous, AgentStatus::NotFound) {
            return previous;
        }
        let mut doomed = vec![id.clone()];
        let mut index = 0;
        while index < doomed.len() {
            let parent = doomed[index].clone();
            doomed.extend(
                self.registry
                    .agents()
                    .into_iter()
                    .filter(|record| record.parent_thread_id == parent && !record.closed)
                    .map(|record| record.thread_id),
            );
            index += 1;
        }
        for agent in doomed.iter().rev() {
            self.unload(hub, agent).await;
            if self.registry.close(agent).is_some() {
                persist_closed(hub, agent, true).await;
            }
            self.set_status(agent, AgentStatus::Shutdown);
        }
        previous
    }

    /// `resume_agent`: a closed agent takes a slot again and is loaded (idle).
    pub async fn resume(&self, hub: &impl TreeHost, id: &ThreadId) -> Result<AgentStatus, String> {
        let record = self
            .registry
            .get(id)
            .ok_or_else(|| format!("agent with id {id} not found"))?;
        if record.closed {
            self.registry
                .reopen(id)
                .map_err(|refusal| format!("collab resume failed: {refusal}"))?;
            persist_closed(hub, id, false).await;
            self.set_status(id, AgentStatus::PendingInit);
        }
        if let Err(status) = self.open(hub, id).await {
            if record.closed {
                self.registry.close(id);
                persist_closed(hub, id, true).await;
            }
            return Err(format!(
                "collab resume failed: agent {id} is {}",
                status.to_model()
            ));
        }
        Ok(self.status(id).await)
    }

    /// Interrupt an agent's running turn; its status before.
    pub async fn interrupt(&self, hub: &impl TreeHost, id: &ThreadId) -> AgentStatus {
        let previous = self.status(id).await;
        if let Some(host) = hub.host() {
            host.interrupt(id).await;
        }
        previous
    }

    /// Shut every loaded agent of the tree down (its root was closed).
    pub async fn close_all(&self, hub: &impl TreeHost) {
        let mut agents = self.registry.agents();
        agents.sort_by_key(|record| std::cmp::Reverse(record.depth));
        for record in agents {
            self.unload(hub, &record.thread_id).await;
        }
    }

    async fn unload(&self, hub: &impl TreeHost, id: &ThreadId) {
        if let Some(host) = hub.host() {
            host.close(id).await;
        }
    }
}

/// Record an agent's closed state for restarts (a failure is logged: the tree goes on).
async fn persist_closed(hub: &impl TreeHost, id: &ThreadId, closed: bool) {
    if let Some(host) = hub.host()
        && let Err(err) = host.set_closed(id, closed).await
    {
        tracing::warn!(agent = %id, %err, "cannot record that the agent is closed");
    }
}

/// The text of a turn's last agent message.
pub fn last_agent_message(turn: &weft_protocol::Turn) -> Option<String> {
    turn.items
        .iter()
        .rev()
        .find_map(|item| match &item.details {
            weft_protocol::ThreadItemDetails::AgentMessage(message) => Some(message.text.clone()),
            _ => None,
        })
}

fn child_thread(
    parent: &SpawnParent<'_>,
    reservation: &SpawnReservation,
    request: &SpawnRequest,
) -> ChildThread {
    ChildThread {
        parent: parent.thread_id.clone(),
        root: parent.place.root.clone(),
        depth: reservation.depth(),
        path: reservation.path().map(str::to_string),
        nickname: reservation.nickname().to_string(),
        role: request.role.clone(),
        settings: request.settings.clone(),
        ephemeral: parent.ephemeral,
        history: request.history.clone(),
    }
}
