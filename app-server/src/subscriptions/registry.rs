//! [`Subscriptions`]: the subscriber registry — each loaded thread's [`ThreadSubscribers`].
//! It is made before the thread manager, which gets it as its [`Subscribers`]: a sub-agent's
//! sink is a subscriber list with its parent's subscribers, registered like any loaded
//! thread's (docs/agents.md §4), and the manager's idle unloader asks it who is unwatched and
//! tells it what it unloaded.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use weft_core::events::SharedSink;
use weft_core::thread::Subscribers;
use weft_protocol::notifications::{ThreadClosedNotification, ThreadStatusChangedNotification};
use weft_protocol::{ThreadId, ThreadStatus};

use super::{Connections, PendingRequests, ThreadSubscribers};
use crate::connection::ConnectionId;

/// Each loaded thread's subscribers.
pub struct Subscriptions {
    connections: Arc<Connections>,
    pending: Arc<PendingRequests>,
    threads: Mutex<HashMap<ThreadId, Arc<ThreadSubscribers>>>,
}

impl Subscriptions {
    /// An empty registry over these connections and pending requests.
    pub fn new(connections: Arc<Connections>, pending: Arc<PendingRequests>) -> Subscriptions {
        Subscriptions {
            connections,
            pending,
            threads: Mutex::new(HashMap::new()),
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

    /// A new subscriber list for a thread about to be created.
    pub fn new_subscribers(&self) -> Arc<ThreadSubscribers> {
        ThreadSubscribers::new(&self.connections, &self.pending)
    }

    /// The subscribers of a loaded thread.
    pub fn get(&self, id: &ThreadId) -> Option<Arc<ThreadSubscribers>> {
        self.threads.lock().get(id).cloned()
    }

    /// Remember a loaded thread's subscribers.
    pub fn add(&self, id: ThreadId, subscribers: Arc<ThreadSubscribers>) {
        self.threads.lock().insert(id, subscribers);
    }

    /// Forget an unloaded thread's subscribers (cancelling its pending requests); the
    /// subscribers it had.
    pub fn forget(&self, id: &ThreadId) -> Option<Arc<ThreadSubscribers>> {
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
    pub fn child_subscribers(&self, parent: &ThreadId, child: &ThreadId) -> Arc<ThreadSubscribers> {
        let subscribers = self.new_subscribers();
        if let Some(parent) = self.get(parent) {
            for connection in parent.connections() {
                subscribers.subscribe(&connection);
            }
        }
        self.add(child.clone(), subscribers.clone());
        subscribers
    }
}

impl Subscribers for Subscriptions {
    fn child_sink(&self, parent: &ThreadId, child: &ThreadId) -> SharedSink {
        self.child_subscribers(parent, child)
    }

    fn child_unloaded<'a>(&'a self, child: &'a ThreadId) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(subscribers) = self.forget(child) {
                let notification = ThreadStatusChangedNotification {
                    thread_id: child.clone(),
                    status: ThreadStatus::NotLoaded,
                };
                subscribers.notify(&notification.into()).await;
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

    fn idle_unloaded<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.forget(id);
            self.connections
                .broadcast(
                    &ThreadStatusChangedNotification {
                        thread_id: id.clone(),
                        status: ThreadStatus::NotLoaded,
                    }
                    .into(),
                )
                .await;
            self.connections
                .broadcast(
                    &ThreadClosedNotification {
                        thread_id: id.clone(),
                    }
                    .into(),
                )
                .await;
        })
    }
}
