//! Who listens to loaded threads ([`Subscribers`], the app-server's subscriber registry) and
//! the idle unloader: a loaded thread nobody subscribes to is unloaded once it and its tree
//! have been idle long enough (docs/agents.md §4).

use std::time::Duration;

use futures::future::BoxFuture;
use weft_protocol::ThreadId;

use super::ThreadManager;
use crate::events::SharedSink;

/// Why a loaded thread was unloaded, as its [`Subscribers`] are told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unloaded {
    /// Archived by a client (`thread/archive`): the client's answer tells everyone.
    Archived,
    /// A sub-agent closed by the multi-agent tools, or unloaded with its tree: its
    /// subscribers are told it is `notLoaded`.
    Closed,
    /// Nobody subscribed and it was idle long enough: everyone is told it is `notLoaded` and
    /// closed.
    Idle,
}

/// Who listens to loaded threads (the app-server's subscriber registry): where a sub-agent's
/// events go (the subscribers its parent has, docs/agents.md §4), which threads nobody
/// subscribes to, and every unload. A load is told to the sink the loader handed in
/// ([`EventSink::loaded`](crate::events::EventSink::loaded)), an unload here, both by the
/// manager while it holds the thread's gate, so the registry never lags behind it.
pub trait Subscribers: Send + Sync + 'static {
    /// The sink of a child thread about to be loaded, subscribed by whoever subscribes to
    /// `parent` now.
    fn child_sink(&self, parent: &ThreadId) -> SharedSink;
    /// A thread was unloaded (before anyone can load it again): forget its subscribers and
    /// tell whoever `why` says.
    fn unloaded<'a>(&'a self, id: &'a ThreadId, why: Unloaded) -> BoxFuture<'a, ()>;
    /// The loaded threads nobody subscribes to now.
    fn unwatched(&self) -> Vec<ThreadId>;
    /// Whether a loaded thread has no subscriber now.
    fn is_unwatched(&self, id: &ThreadId) -> bool;
}

impl ThreadManager {
    /// Unload every loaded thread that has had no subscriber and no activity for `idle`.
    ///
    /// A root of a sub-agent tree is unloaded with its tree. Its idle time is the tree's
    /// ([`tree_idle_since`](ThreadManager::tree_idle_since)): it stays while any loaded
    /// sub-agent runs a turn, and until `idle` after the last one finished, whatever its own
    /// last activity. Only the root's subscribers count (a client still subscribed to a child
    /// does not keep the tree). Once the root is unloaded (and its subscribers told), its
    /// loaded sub-agents are unloaded too, each told to its own subscribers, and the tree's
    /// control plane is forgotten (closed agents stay closed: that is stored); the children
    /// load again, cold, when the root's tools need them. A sub-agent with no subscriber of
    /// its own is unloaded alone, like any thread, once it is idle.
    pub async fn unload_idle_threads(&self, idle: Duration) {
        let Some(subscribers) = self.subscribers.clone() else {
            return;
        };
        for id in subscribers.unwatched() {
            let Some(since) = self.tree_idle_since(&id).await else {
                continue;
            };
            if since.elapsed() < idle || !subscribers.is_unwatched(&id) {
                continue;
            }
            if !self.unload(&id, Unloaded::Idle).await {
                continue;
            }
            tracing::info!(thread = %id, "unloaded an idle thread with no subscribers");
            // A sub-agent that started a turn since the check is interrupted: its root is gone.
            self.close_tree(&id).await;
        }
    }
}
