//! [`Subscriptions`]: the subscriber registry — each loaded thread's [`ThreadSubscribers`].
//! It is made before the thread manager, which gets it as its [`Subscribers`] and keeps it in
//! step with its loaded threads (docs/architecture.md §2.1): a list handed to the manager as a
//! thread's sink enters the registry when the manager reports the thread loaded
//! ([`EventSink::loaded`](weft_core::events::EventSink::loaded)), and leaves it when the manager
//! reports the unload ([`Subscribers::unloaded`]). A sub-agent's sink is a list with its
//! parent's subscribers (docs/agents.md §4); the manager's idle unloader asks who is unwatched.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use weft_core::events::SharedSink;
use weft_core::thread::{Subscribers, Unloaded};
use weft_protocol::notifications::{ThreadClosedNotification, ThreadStatusChangedNotification};
use weft_protocol::{ThreadId, ThreadStatus};

use super::{Connections, PendingRequests, ThreadSubscribers};
use crate::connection::ConnectionId;

/// The loaded threads' subscriber lists, by id.
pub(super) type Lists = Mutex<HashMap<ThreadId, Arc<ThreadSubscribers>>>;

/// Each loaded thread's subscribers.
pub struct Subscriptions {
    connections: Arc<Connections>,
    pending: Arc<PendingRequests>,
    threads: Arc<Lists>,
}

impl Subscriptions {
    /// An empty registry over these connections and pending requests.
    pub fn new(connections: Arc<Connections>, pending: Arc<PendingRequests>) -> Subscriptions {
        Subscriptions {
            connections,
            pending,
            threads: Arc::default(),
        }
    }

    /// Every open connection.
    pub fn connections(&self) -> &Arc<Connections> {
        &self.connections
    }

    /// Server → client requests waiting for an answer.
    pub fn pending(&self) -> &Arc<PendingRequests> {
        &self.pending
    }

    /// A new subscriber list for a thread about to be loaded: it enters the registry when the
    /// manager reports the thread loaded.
    pub fn new_subscribers(&self) -> Arc<ThreadSubscribers> {
        ThreadSubscribers::new(
            &self.connections,
            &self.pending,
            Arc::downgrade(&self.threads),
        )
    }

    /// The subscribers of a loaded thread.
    pub fn get(&self, id: &ThreadId) -> Option<Arc<ThreadSubscribers>> {
        self.threads.lock().get(id).cloned()
    }

    /// Forget an unloaded thread's subscribers (cancelling its pending requests); the
    /// subscribers it had.
    fn forget(&self, id: &ThreadId) -> Option<Arc<ThreadSubscribers>> {
        let subscribers = self.threads.lock().remove(id);
        self.pending.cancel_thread(id);
        subscribers
    }

    /// Loaded threads nobody subscribes to.
    pub fn unsubscribed(&self) -> Vec<ThreadId> {
        self.threads
            .lock()
            .iter()
            .filter(|(_, subscribers)| subscribers.is_empty())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// A closed connection is no one's subscriber any more: requests of threads left with no
    /// subscriber are cancelled.
    pub fn connection_closed(&self, id: ConnectionId) {
        for (thread_id, subscribers) in self.threads.lock().iter() {
            if subscribers.unsubscribe(id) && subscribers.is_empty() {
                self.pending.cancel_thread(thread_id);
            }
        }
    }

    /// A sub-agent's subscribers: whoever subscribes to its parent now (docs/agents.md §4).
    pub fn child_subscribers(&self, parent: &ThreadId) -> Arc<ThreadSubscribers> {
        let subscribers = self.new_subscribers();
        if let Some(parent) = self.get(parent) {
            for connection in parent.connections() {
                subscribers.subscribe(&connection);
            }
        }
        subscribers
    }
}

impl Subscribers for Subscriptions {
    fn child_sink(&self, parent: &ThreadId) -> SharedSink {
        self.child_subscribers(parent)
    }

    fn unloaded<'a>(&'a self, id: &'a ThreadId, why: Unloaded) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let subscribers = self.forget(id);
            let not_loaded = ThreadStatusChangedNotification {
                thread_id: id.clone(),
                status: ThreadStatus::NotLoaded,
            };
            match why {
                // Everyone, before the archived thread's sub-agents are closed and before the
                // archiving client's answer (also when the move then fails).
                Unloaded::Archived => self.connections.broadcast(&not_loaded.into()).await,
                Unloaded::Closed => {
                    if let Some(subscribers) = subscribers {
                        subscribers.notify(&not_loaded.into()).await;
                    }
                }
                Unloaded::Idle => {
                    self.connections.broadcast(&not_loaded.into()).await;
                    let closed = ThreadClosedNotification {
                        thread_id: id.clone(),
                    };
                    self.connections.broadcast(&closed.into()).await;
                }
            }
        })
    }

    fn unwatched(&self) -> Vec<ThreadId> {
        self.unsubscribed()
    }

    fn is_unwatched(&self, id: &ThreadId) -> bool {
        self.get(id)
            .is_some_and(|subscribers| subscribers.is_empty())
    }
}
