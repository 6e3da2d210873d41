//! Who hears a thread: its subscribers get its turn and item events; every initialized
//! connection gets the broadcast ones (`thread/started`, `thread/status/changed`, …). Each
//! loaded thread has one [`ThreadSubscribers`], which is also the thread's event sink: an event
//! is serialized once and the same bytes are queued on every receiving connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;
use futures::future::BoxFuture;
use weft_core::events::{EventSink, ThreadEvent};
use weft_protocol::ThreadId;
use weft_protocol::notifications::*;

use crate::connection::{Connection, ConnectionId};
use crate::outgoing;

/// Every open connection, by id.
#[derive(Default)]
pub struct Connections {
    all: Mutex<HashMap<ConnectionId, Arc<Connection>>>,
}

impl Connections {
    /// Register a connection.
    pub fn insert(&self, connection: Arc<Connection>) {
        if let Ok(mut all) = self.all.lock() {
            all.insert(connection.id, connection);
        }
    }

    /// Forget a connection.
    pub fn remove(&self, id: ConnectionId) {
        if let Ok(mut all) = self.all.lock() {
            all.remove(&id);
        }
    }

    /// Initialized connections that want `method`.
    fn broadcast_targets(&self, method: &str) -> Vec<Arc<Connection>> {
        self.all
            .lock()
            .map(|all| {
                all.values()
                    .filter(|c| c.wants_notification(method))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Send a notification to every initialized connection.
    pub async fn broadcast(&self, notification: &ServerNotification) {
        let targets = self.broadcast_targets(notification.method());
        send_all(&targets, outgoing::notification(notification)).await;
    }
}

/// The subscribers of one thread, and its event sink.
pub struct ThreadSubscribers {
    connections: Weak<Connections>,
    subscribers: Mutex<Vec<Arc<Connection>>>,
}

impl ThreadSubscribers {
    /// No subscribers yet.
    pub fn new(connections: &Arc<Connections>) -> Arc<ThreadSubscribers> {
        Arc::new(ThreadSubscribers {
            connections: Arc::downgrade(connections),
            subscribers: Mutex::new(Vec::new()),
        })
    }

    /// Add a subscriber (idempotent). Returns false if it was already subscribed.
    pub fn subscribe(&self, connection: &Arc<Connection>) -> bool {
        let Ok(mut subscribers) = self.subscribers.lock() else {
            return false;
        };
        if subscribers.iter().any(|c| c.id == connection.id) {
            return false;
        }
        subscribers.push(connection.clone());
        true
    }

    /// Remove a subscriber. Returns false if it was not subscribed.
    pub fn unsubscribe(&self, id: ConnectionId) -> bool {
        let Ok(mut subscribers) = self.subscribers.lock() else {
            return false;
        };
        let before = subscribers.len();
        subscribers.retain(|c| c.id != id);
        subscribers.len() != before
    }

    /// Whether anyone listens.
    pub fn is_empty(&self) -> bool {
        self.subscribers
            .lock()
            .map(|s| s.is_empty())
            .unwrap_or(true)
    }

    fn subscriber_targets(&self, method: &str) -> Vec<Arc<Connection>> {
        self.subscribers
            .lock()
            .map(|subscribers| {
                subscribers
                    .iter()
                    .filter(|c| !c.closed.is_cancelled() && c.wants_notification(method))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl EventSink for ThreadSubscribers {
    fn emit<'a>(&'a self, thread: &'a ThreadId, event: ThreadEvent) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let (notification, broadcast) = to_notification(thread, event);
            let method = notification.method();
            let targets = if broadcast {
                match self.connections.upgrade() {
                    Some(connections) => connections.broadcast_targets(method),
                    None => Vec::new(),
                }
            } else {
                self.subscriber_targets(method)
            };
            if targets.is_empty() {
                return;
            }
            send_all(&targets, outgoing::notification(&notification)).await;
        })
    }
}

async fn send_all(targets: &[Arc<Connection>], frame: Bytes) {
    for connection in targets {
        connection.send(frame.clone()).await;
    }
}

/// The notification for a thread event, and whether it is broadcast to every connection.
pub fn to_notification(thread: &ThreadId, event: ThreadEvent) -> (ServerNotification, bool) {
    let thread_id = thread.clone();
    match event {
        ThreadEvent::StatusChanged(status) => (
            ThreadStatusChangedNotification { thread_id, status }.into(),
            true,
        ),
        ThreadEvent::TurnStarted(turn) => {
            (TurnStartedNotification { thread_id, turn }.into(), false)
        }
        ThreadEvent::TurnCompleted(turn) => {
            (TurnCompletedNotification { thread_id, turn }.into(), false)
        }
        ThreadEvent::ItemStarted { turn_id, item } => (
            ItemStartedNotification {
                started_at_ms: item.started_at_ms.unwrap_or_else(outgoing::now_ms),
                item,
                thread_id,
                turn_id,
            }
            .into(),
            false,
        ),
        ThreadEvent::ItemCompleted { turn_id, item } => (
            ItemCompletedNotification {
                completed_at_ms: item.completed_at_ms.unwrap_or_else(outgoing::now_ms),
                item,
                thread_id,
                turn_id,
                content_token_count: None,
            }
            .into(),
            false,
        ),
        ThreadEvent::AgentMessageDelta {
            turn_id,
            item_id,
            delta,
        } => (
            AgentMessageDeltaNotification {
                thread_id,
                turn_id,
                item_id: item_id.into(),
                delta,
            }
            .into(),
            false,
        ),
        ThreadEvent::ReasoningSummaryTextDelta {
            turn_id,
            item_id,
            delta,
            summary_index,
        } => (
            ReasoningSummaryTextDeltaNotification {
                thread_id,
                turn_id,
                item_id: item_id.into(),
                delta,
                summary_index,
            }
            .into(),
            false,
        ),
        ThreadEvent::ReasoningSummaryPartAdded {
            turn_id,
            item_id,
            summary_index,
        } => (
            ReasoningSummaryPartAddedNotification {
                thread_id,
                turn_id,
                item_id: item_id.into(),
                summary_index,
            }
            .into(),
            false,
        ),
        ThreadEvent::ReasoningTextDelta {
            turn_id,
            item_id,
            delta,
            content_index,
        } => (
            ReasoningTextDeltaNotification {
                thread_id,
                turn_id,
                item_id: item_id.into(),
                delta,
                content_index,
            }
            .into(),
            false,
        ),
        ThreadEvent::TokenUsage { turn_id, usage } => (
            ThreadTokenUsageUpdatedNotification {
                thread_id,
                turn_id,
                token_usage: usage,
            }
            .into(),
            false,
        ),
        ThreadEvent::Error {
            turn_id,
            error,
            will_retry,
        } => (
            ErrorNotification {
                error,
                will_retry,
                thread_id,
                turn_id,
            }
            .into(),
            false,
        ),
        ThreadEvent::Warning { message, .. } => (
            WarningNotification {
                thread_id: Some(thread_id),
                message,
            }
            .into(),
            false,
        ),
    }
}
