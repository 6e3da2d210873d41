//! [`Agents`]: the daemon's multi-agent state, held in the threads' shared services — one
//! [`AgentControl`] per root thread tree, the root of every sub-agent seen since start, and
//! the thread layer behind the [`AgentHost`] trait, given when the services are made. A loaded
//! thread's mailbox is not here: the thread layer's registry of loaded threads holds it, and
//! [`Agents::mailbox`] asks the host for it (docs/agents.md §5).

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use weft_protocol::{SessionSource, SubAgentSource, Thread, ThreadId, TurnId};

use super::control::{AgentControl, SpawnParent, SpawnRequest, Spawned, TreePlace};
use super::host::{AgentHost, TreeHost};
use super::mailbox::AgentMailbox;
use super::registry::{AgentLimits, AgentRecord};
use crate::config::{AgentSurface, Config};
use crate::history::History;
use crate::settings::ThreadSettings;
use crate::state::{ListQuery, StateDb};

/// What a tool call knows about the agent making it.
#[derive(Clone)]
pub struct AgentCaller {
    /// The daemon's multi-agent state.
    pub hub: Arc<Agents>,
    /// The calling thread.
    pub thread_id: ThreadId,
    /// Its running turn.
    pub turn_id: TurnId,
    /// Where it stands.
    pub place: TreePlace,
    /// Its settings as of this turn (what a child inherits).
    pub settings: ThreadSettings,
    /// An ephemeral caller spawns ephemeral children.
    pub ephemeral: bool,
    /// Its model-facing history (what a forked child starts from).
    pub history: Arc<Mutex<History>>,
    /// Its tools are deferred behind `tool_search` (the fork says they were removed).
    pub tool_search: bool,
}

impl AgentCaller {
    /// Whether the caller may spawn (its children would not be past `max_depth`).
    pub fn can_spawn(&self) -> bool {
        self.place.depth < self.hub.limits().max_depth
    }

    /// Spawn a child of the caller in its tree (`AgentControl::spawn`).
    pub async fn spawn(
        &self,
        control: &AgentControl,
        request: SpawnRequest,
    ) -> Result<Spawned, String> {
        let parent = SpawnParent {
            thread_id: &self.thread_id,
            place: &self.place,
            ephemeral: self.ephemeral,
        };
        control.spawn(&self.hub, &parent, request).await
    }
}

/// The daemon's multi-agent state.
pub struct Agents {
    /// Which tools the model gets.
    pub surface: AgentSurface,
    /// `[agents] default_subagent_model`.
    pub default_subagent_model: Option<String>,
    limits: AgentLimits,
    /// The thread layer (the manager, which holds every actor and so these services: the
    /// reference is weak so the trees never keep it alive). `None` when sub-agents cannot be
    /// spawned (unit tests of the runtime).
    host: Option<Weak<dyn AgentHost>>,
    state: Option<StateDb>,
    trees: tokio::sync::Mutex<HashMap<ThreadId, Arc<AgentControl>>>,
    /// Sub-agent → its root, for every sub-agent seen since start, loaded or not (a cold
    /// child restored from the state DB, a parent walked in [`Agents::root_of`], a child
    /// since unloaded): it outlives loading, so it is kept here and not in the thread
    /// layer's registry of loaded threads.
    roots: Mutex<HashMap<ThreadId, ThreadId>>,
}

impl TreeHost for Agents {
    fn host(&self) -> Option<Arc<dyn AgentHost>> {
        Agents::host(self)
    }

    fn remember_root(&self, child: &ThreadId, root: &ThreadId) {
        self.roots.lock().insert(child.clone(), root.clone());
    }
}

impl std::fmt::Debug for Agents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agents")
            .field("surface", &self.surface)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Agents {
    /// The multi-agent state of a daemon with this config, reaching threads through `host`.
    pub fn new(
        config: &Config,
        state: Option<StateDb>,
        host: Option<Weak<dyn AgentHost>>,
    ) -> Agents {
        let surface = config.features.agent_surface();
        Agents {
            surface,
            default_subagent_model: config.agents.default_subagent_model.clone(),
            limits: AgentLimits {
                max_threads: config
                    .agents
                    .sub_agent_cap(surface, &config.features.multi_agent_v2),
                max_depth: config.agents.max_depth,
            },
            host,
            state,
            trees: tokio::sync::Mutex::new(HashMap::new()),
            roots: Mutex::new(HashMap::new()),
        }
    }

    /// The limits every tree gets.
    pub fn limits(&self) -> &AgentLimits {
        &self.limits
    }

    /// The thread layer, while the daemon runs; `None` in unit tests of the runtime or at
    /// shutdown.
    pub fn host(&self) -> Option<Arc<dyn AgentHost>> {
        self.host.as_ref()?.upgrade()
    }

    /// Whether sub-agents can be spawned (there is a thread layer to create them).
    pub fn attached(&self) -> bool {
        self.host().is_some()
    }

    /// The mailbox of a loaded thread: the thread layer's registry of loaded threads holds
    /// it ([`AgentHost::mailbox`]); `None` when the thread is not loaded or there is no thread
    /// layer.
    pub fn mailbox(&self, thread: &ThreadId) -> Option<AgentMailbox> {
        self.host()?.mailbox(thread)
    }

    /// The root of a thread's tree: itself for a root; for a sub-agent, the end of its
    /// chain of parents (known since start, else read from the state DB).
    pub async fn root_of(&self, thread: &Thread) -> ThreadId {
        let Some(mut parent) = SubAgentSource::parent_of(&thread.source) else {
            return thread.id.clone();
        };
        if let Some(root) = self.roots.lock().get(&thread.id) {
            return root.clone();
        }
        // A chain is at most `max_depth` long; the bound only guards against a cycle in a
        // damaged index.
        for _ in 0..=self.limits.max_depth.max(1) * 4 {
            if let Some(root) = self.roots.lock().get(&parent) {
                return root.clone();
            }
            let row = match &self.state {
                Some(state) => state.get(&parent).await.ok().flatten(),
                None => None,
            };
            match row.as_ref().and_then(|row| row.parent_thread_id()) {
                Some(next) => parent = next,
                None => break,
            }
        }
        self.remember_root(&thread.id, &parent);
        parent
    }

    /// The control plane of the tree under `root`, made (and, after a restart, filled from
    /// the state DB: children come back cold) on first use.
    pub async fn control(self: &Arc<Self>, root: &ThreadId) -> Arc<AgentControl> {
        let mut trees = self.trees.lock().await;
        if let Some(control) = trees.get(root) {
            return control.clone();
        }
        let hub: Weak<Agents> = Arc::downgrade(self);
        let control = AgentControl::new(root.clone(), self.limits, hub);
        for record in self.stored_children(root).await {
            self.remember_root(&record.thread_id, root);
            control.restore(record);
        }
        trees.insert(root.clone(), control.clone());
        control
    }

    /// The control plane of a tree, if it was made.
    pub async fn existing_control(&self, root: &ThreadId) -> Option<Arc<AgentControl>> {
        self.trees.lock().await.get(root).cloned()
    }

    /// Forget a tree (its root was closed or archived).
    pub async fn forget_tree(&self, root: &ThreadId) -> Option<Arc<AgentControl>> {
        self.trees.lock().await.remove(root)
    }

    /// The stored sub-agents of a tree, parents before children.
    async fn stored_children(&self, root: &ThreadId) -> Vec<AgentRecord> {
        let Some(state) = &self.state else {
            return Vec::new();
        };
        let mut records = Vec::new();
        let mut cursor = None;
        loop {
            let query = ListQuery {
                limit: crate::state::MAX_LIST_LIMIT,
                cursor: cursor.take(),
                direction: weft_protocol::SortDirection::Asc,
                source_kinds: Some(vec!["subAgent".to_string()]),
                lineage: Some(crate::state::Lineage::Ancestor(root.to_string())),
                ..ListQuery::default()
            };
            let page = match state.list(&query).await {
                Ok(page) => page,
                Err(err) => {
                    tracing::warn!(%root, %err, "cannot read the agent tree from the index");
                    break;
                }
            };
            for row in &page.rows {
                if let SessionSource::SubAgent(SubAgentSource::ThreadSpawn {
                    parent_thread_id,
                    depth,
                    agent_path,
                    agent_nickname,
                    agent_role,
                }) = &row.source
                {
                    records.push(AgentRecord {
                        thread_id: row.id.clone(),
                        parent_thread_id: parent_thread_id.clone(),
                        depth: u32::try_from(*depth).unwrap_or(1),
                        path: agent_path.clone(),
                        nickname: agent_nickname.clone().unwrap_or_default(),
                        role: agent_role.clone(),
                        closed: row.agent_closed,
                    });
                }
            }
            match page.next_cursor {
                Some(next) if !page.rows.is_empty() => cursor = Some(next),
                _ => break,
            }
        }
        records.sort_by_key(|record| record.depth);
        records
    }
}
