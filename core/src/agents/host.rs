//! [`AgentHost`]: what the multi-agent tools need from the thread layer, and nothing more —
//! create a child thread, load a cold one, give an agent input, interrupt it, hand a thread
//! the mail it waited for, unload an agent, record that one is closed, read an unloaded
//! agent's last turn, and reach a loaded thread's mailbox. The thread manager implements it (`thread/manager/host.rs`) and gives
//! it to the trees when it is made, so `agents/` never names a thread type
//! (docs/architecture.md §2.4).

use std::sync::Arc;

use futures::future::BoxFuture;
use weft_protocol::{ThreadId, Turn, TurnId, UserInput};

use super::mailbox::AgentMailbox;
use crate::model::ResponseItem;
use crate::settings::ThreadSettings;

/// A sub-agent thread to create.
#[derive(Debug, Clone)]
pub struct ChildThread {
    /// The spawning thread.
    pub parent: ThreadId,
    /// Its tree's root.
    pub root: ThreadId,
    /// The child's depth (the parent's + 1).
    pub depth: u32,
    /// Its agent path (v2).
    pub path: Option<String>,
    /// Its nickname.
    pub nickname: String,
    /// Its role.
    pub role: Option<String>,
    /// Its settings (the parent's, with the spawn's overrides).
    pub settings: ThreadSettings,
    /// Kept in memory only (the parent is ephemeral).
    pub ephemeral: bool,
    /// The history it starts with (a fork's).
    pub history: Vec<ResponseItem>,
}

/// How input given to an agent is routed (docs/architecture.md §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendMode {
    /// Start a turn only if the agent is idle (a spawned agent's task).
    StartIfIdle,
    /// Start a turn, or steer the running one (`send_input`).
    StartOrSteer,
}

/// The thread layer as the multi-agent tools see it. Errors are texts for the model.
pub trait AgentHost: Send + Sync + 'static {
    /// Create a child thread and load it, idle, announced to its parent's subscribers.
    /// Returns its id and the settings it got.
    fn spawn(
        &self,
        child: ChildThread,
    ) -> BoxFuture<'_, Result<(ThreadId, ThreadSettings), String>>;

    /// Make sure an agent is loaded: a cold one is loaded again with its parent's
    /// subscribers.
    fn open<'a>(
        &'a self,
        id: &'a ThreadId,
        parent: &'a ThreadId,
    ) -> BoxFuture<'a, Result<(), String>>;

    /// Give a loaded agent input as a client would (`turn/start`); a turn it starts has
    /// `root_turn` as its `rootTurnId`.
    fn send<'a>(
        &'a self,
        id: &'a ThreadId,
        input: Vec<UserInput>,
        mode: SendMode,
        root_turn: TurnId,
    ) -> BoxFuture<'a, Result<(), String>>;

    /// Interrupt a loaded agent's running turn, if any.
    fn interrupt<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, ()>;

    /// Have a loaded thread take its mail now (a wait returned on it: the running turn reads
    /// it at its next step).
    fn deliver_mail<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, ()>;

    /// Unload an agent (its subscribers see it `notLoaded`). Returns whether it was loaded.
    fn close<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, bool>;

    /// Record that an agent was closed or opened again, for restarts.
    fn set_closed<'a>(
        &'a self,
        id: &'a ThreadId,
        closed: bool,
    ) -> BoxFuture<'a, Result<(), String>>;

    /// An agent's last turn (live or stored); `Err` when the thread cannot be read.
    fn last_turn<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, Result<Option<Turn>, String>>;

    /// The mailbox of a thread, from when its actor is started until it has stopped (`None`
    /// otherwise): the registry of loaded threads holds it beside the thread's handle.
    fn mailbox(&self, id: &ThreadId) -> Option<AgentMailbox>;
}

/// What a tree's control plane (`control.rs`) needs of the daemon's multi-agent state
/// (`hub.rs`'s `Agents` implements it): the thread layer, and the record of which tree a new
/// child belongs to. It keeps `control.rs` below `hub.rs`: the hub holds the trees, a tree
/// reaches back only through this.
pub trait TreeHost: Send + Sync {
    /// The thread layer; `None` once the daemon is shutting down.
    fn host(&self) -> Option<Arc<dyn AgentHost>>;

    /// Remember that `child` belongs to the tree under `root`.
    fn remember_root(&self, child: &ThreadId, root: &ThreadId);
}

impl<T: TreeHost + ?Sized> TreeHost for Arc<T> {
    fn host(&self) -> Option<Arc<dyn AgentHost>> {
        (**self).host()
    }

    fn remember_root(&self, child: &ThreadId, root: &ThreadId) {
        (**self).remember_root(child, root);
    }
}
