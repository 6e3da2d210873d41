//! Who hears a thread: its subscribers get its turn and item events; every initialized
//! connection gets the broadcast ones (`thread/started`, `thread/status/changed`, …). Each
//! loaded thread has one [`ThreadSubscribers`], which is also the thread's event sink: an event
//! is serialized once and the same bytes are queued on every receiving connection. Queuing never
//! waits, so a slow subscriber never holds up the others (`connection::outbound`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Weak};

use bytes::Bytes;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use tokio::sync::oneshot;
use weft_core::events::{EventSink, ServerRequestOutcome, ServerRequestParams, ThreadEvent};
use weft_protocol::ThreadId;
use weft_protocol::jsonrpc::RequestId;
use weft_protocol::notifications::*;
use weft_protocol::server_requests::ServerRequest;

use crate::connection::{Connection, ConnectionId};
use crate::outgoing;

mod notification;
mod registry;

pub use notification::to_notification;
pub use registry::Subscriptions;

/// Every open connection, by id.
#[derive(Default)]
pub struct Connections {
    all: Mutex<HashMap<ConnectionId, Arc<Connection>>>,
}

impl Connections {
    /// Register a connection.
    pub fn insert(&self, connection: Arc<Connection>) {
        self.all.lock().insert(connection.id, connection);
    }

    /// Forget a connection.
    pub fn remove(&self, id: ConnectionId) {
        self.all.lock().remove(&id);
    }

    /// Initialized connections that want `method`.
    fn broadcast_targets(&self, method: &str) -> Vec<Arc<Connection>> {
        self.all
            .lock()
            .values()
            .filter(|c| c.wants_notification(method))
            .cloned()
            .collect()
    }

    /// Send a notification to every initialized connection.
    pub async fn broadcast(&self, notification: &ServerNotification) {
        notify_all(&self.broadcast_targets(notification.method()), notification);
    }
}

/// Server → client requests waiting for their first answer. Ids are integers from 0, unique
/// across the process (so unique per connection too); a request fanned out to several
/// connections has the same id on each. Ids are easy to guess, so an answer counts only when
/// it comes from a connection the request was sent to.
#[derive(Default)]
pub struct PendingRequests {
    next_id: AtomicI64,
    pending: Mutex<HashMap<i64, PendingRequest>>,
}

struct PendingRequest {
    thread_id: ThreadId,
    /// The connections the request went to: the only ones whose answer counts.
    asked: Vec<ConnectionId>,
    answer: oneshot::Sender<ServerRequestOutcome>,
}

/// What became of a client's answer to a server request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// It was the first answer: the request is resolved with it.
    Resolved,
    /// No request with this id is pending (answered already, withdrawn, or never sent).
    Unknown,
    /// The request is pending but was not sent to this connection: the answer is ignored.
    NotAsked,
}

impl PendingRequests {
    /// A new pending request of `thread_id` (not yet sent to anyone).
    fn register(&self, thread_id: &ThreadId) -> (i64, oneshot::Receiver<ServerRequestOutcome>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, rx) = oneshot::channel();
        self.pending.lock().insert(
            id,
            PendingRequest {
                thread_id: thread_id.clone(),
                asked: Vec::new(),
                answer,
            },
        );
        (id, rx)
    }

    /// Record the connections request `id` is about to be sent to. Recorded before the
    /// request is queued, so that a fast answer always finds its connection listed.
    fn asked(&self, id: i64, connections: &[Arc<Connection>]) {
        if let Some(entry) = self.pending.lock().get_mut(&id) {
            entry.asked = connections.iter().map(|c| c.id).collect();
        }
    }

    /// `from`'s answer to request `id`. Only the first answer from a connection the request
    /// was sent to resolves it; anything else leaves the request as it was.
    pub fn resolve(
        &self,
        id: &RequestId,
        from: ConnectionId,
        outcome: ServerRequestOutcome,
    ) -> Resolution {
        let RequestId::Integer(id) = id else {
            return Resolution::Unknown;
        };
        let mut pending = self.pending.lock();
        match pending.get(id) {
            None => return Resolution::Unknown,
            Some(entry) if !entry.asked.contains(&from) => return Resolution::NotAsked,
            Some(_) => {}
        }
        if let Some(entry) = pending.remove(id) {
            let _ = entry.answer.send(outcome);
        }
        Resolution::Resolved
    }

    fn withdraw(&self, id: i64) -> bool {
        self.pending.lock().remove(&id).is_some()
    }

    /// A connection closed: it can answer nothing any more. A request every asked connection
    /// of which is gone is cancelled (its turn goes on without the answer).
    pub fn connection_closed(&self, id: ConnectionId) {
        self.pending.lock().retain(|_, entry| {
            let before = entry.asked.len();
            entry.asked.retain(|asked| *asked != id);
            before == 0 || !entry.asked.is_empty()
        });
    }

    /// Cancel every request of a thread that has nobody left to answer it.
    pub fn cancel_thread(&self, thread_id: &ThreadId) {
        self.pending
            .lock()
            .retain(|_, entry| entry.thread_id != *thread_id);
    }
}

/// The subscribers of one thread, and its event sink.
pub struct ThreadSubscribers {
    connections: Weak<Connections>,
    pending: Arc<PendingRequests>,
    subscribers: Mutex<Vec<Arc<Connection>>>,
    /// The registry this list enters once its thread is loaded ([`EventSink::loaded`]).
    registry: Weak<registry::Lists>,
}

impl ThreadSubscribers {
    /// No subscribers yet; the list enters `registry` when the manager loads its thread.
    fn new(
        connections: &Arc<Connections>,
        pending: &Arc<PendingRequests>,
        registry: Weak<registry::Lists>,
    ) -> Arc<ThreadSubscribers> {
        Arc::new(ThreadSubscribers {
            connections: Arc::downgrade(connections),
            pending: pending.clone(),
            subscribers: Mutex::new(Vec::new()),
            registry,
        })
    }

    /// `serverRequest/resolved` for `id`, as bytes, and who should get it.
    fn resolved_frame(&self, thread: &ThreadId, id: i64) -> (Vec<Arc<Connection>>, Bytes) {
        let notification: ServerNotification = ServerRequestResolvedNotification {
            thread_id: thread.clone(),
            request_id: RequestId::Integer(id),
        }
        .into();
        (
            self.subscriber_targets(notification.method()),
            outgoing::notification(&notification),
        )
    }

    /// Add a subscriber (idempotent). Returns false if it was already subscribed.
    pub fn subscribe(&self, connection: &Arc<Connection>) -> bool {
        let mut subscribers = self.subscribers.lock();
        if subscribers.iter().any(|c| c.id == connection.id) {
            return false;
        }
        subscribers.push(connection.clone());
        true
    }

    /// Remove a subscriber. Returns false if it was not subscribed.
    pub fn unsubscribe(&self, id: ConnectionId) -> bool {
        let mut subscribers = self.subscribers.lock();
        let before = subscribers.len();
        subscribers.retain(|c| c.id != id);
        subscribers.len() != before
    }

    /// Sends `notification` to the thread's subscribers that want it.
    pub async fn notify(&self, notification: &ServerNotification) {
        notify_all(
            &self.subscriber_targets(notification.method()),
            notification,
        );
    }

    /// The subscribed connections.
    pub fn connections(&self) -> Vec<Arc<Connection>> {
        self.subscribers.lock().clone()
    }

    /// Whether anyone listens.
    pub fn is_empty(&self) -> bool {
        self.subscribers.lock().is_empty()
    }

    fn subscriber_targets(&self, method: &str) -> Vec<Arc<Connection>> {
        self.subscribers
            .lock()
            .iter()
            .filter(|c| !c.closed.is_cancelled() && c.wants_notification(method))
            .cloned()
            .collect()
    }
}

/// Withdraws a server request whose future was dropped (the turn was interrupted) and tells
/// the subscribers it is resolved.
struct Withdraw<'a> {
    subscribers: &'a ThreadSubscribers,
    thread: &'a ThreadId,
    id: i64,
    armed: bool,
    /// Whether the clients are told (`serverRequest/resolved`).
    announce: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if !self.armed || !self.subscribers.pending.withdraw(self.id) || !self.announce {
            return;
        }
        let (targets, frame) = self.subscribers.resolved_frame(self.thread, self.id);
        send_all(&targets, &frame, None);
    }
}

impl EventSink for ThreadSubscribers {
    /// The thread is loaded: from now on this is its subscriber list in the registry.
    fn loaded(self: Arc<Self>, thread: &ThreadId) {
        if let Some(lists) = self.registry.upgrade() {
            lists.lock().insert(thread.clone(), self);
        }
    }

    fn request<'a>(
        &'a self,
        thread: &'a ThreadId,
        params: ServerRequestParams,
    ) -> BoxFuture<'a, ServerRequestOutcome> {
        Box::pin(async move {
            let (id, answer) = self.pending.register(thread);
            let request_id = RequestId::Integer(id);
            // As in the reference, `item/tool/call` is not followed by `serverRequest/resolved`
            // (the `dynamicToolCall` item's completion says it is over); approvals are.
            let announce = !matches!(params, ServerRequestParams::DynamicToolCall(_));
            let request = match params {
                ServerRequestParams::CommandApproval(params) => {
                    ServerRequest::CommandExecutionRequestApproval {
                        id: request_id,
                        params: *params,
                    }
                }
                ServerRequestParams::FileChangeApproval(params) => {
                    ServerRequest::FileChangeRequestApproval {
                        id: request_id,
                        params,
                    }
                }
                ServerRequestParams::DynamicToolCall(params) => ServerRequest::DynamicToolCall {
                    id: request_id,
                    params,
                },
                ServerRequestParams::UserInput(params) => ServerRequest::ToolRequestUserInput {
                    id: request_id,
                    params,
                },
                ServerRequestParams::McpElicitation(params) => {
                    ServerRequest::McpServerElicitationRequest {
                        id: request_id,
                        params: *params,
                    }
                }
            };
            let targets: Vec<Arc<Connection>> = self
                .subscribers
                .lock()
                .iter()
                .filter(|c| !c.closed.is_cancelled())
                .cloned()
                .collect();
            if targets.is_empty() {
                self.pending.withdraw(id);
                return ServerRequestOutcome::Cancelled;
            }
            let mut guard = Withdraw {
                subscribers: self,
                thread,
                id,
                armed: true,
                announce,
            };
            self.pending.asked(id, &targets);
            send_all(&targets, &outgoing::server_request(&request), None);
            let outcome = answer.await.unwrap_or(ServerRequestOutcome::Cancelled);
            guard.armed = false;
            drop(guard);
            if announce {
                let (targets, frame) = self.resolved_frame(thread, id);
                send_all(&targets, &frame, None);
            }
            outcome
        })
    }

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
            notify_all(&targets, &notification);
        })
    }
}

/// Send `notification` to every target (serialized once, and only if there is one).
fn notify_all(targets: &[Arc<Connection>], notification: &ServerNotification) {
    if !targets.is_empty() {
        send_all(
            targets,
            &outgoing::notification(notification),
            Some(notification),
        );
    }
}

/// Queue the same bytes on every target; `source` is what they were serialized from, for
/// merging into a full queue's tail.
fn send_all(targets: &[Arc<Connection>], frame: &Bytes, source: Option<&ServerNotification>) {
    for connection in targets {
        connection.send_notification(frame, source);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_asked_connection_resolves_a_request() {
        let pending = PendingRequests::default();
        let thread = ThreadId::from("t".to_string());
        let (id, mut answer) = pending.register(&thread);
        let (asked, _rx) = Connection::test(7);
        pending.asked(id, &[Arc::new(asked)]);
        let accept = || ServerRequestOutcome::Answered(serde_json::json!({"decision": "accept"}));
        let request = RequestId::Integer(id);
        assert_eq!(pending.resolve(&request, 8, accept()), Resolution::NotAsked);
        assert!(
            answer.try_recv().is_err(),
            "a stranger's answer resolved it"
        );
        assert_eq!(pending.resolve(&request, 7, accept()), Resolution::Resolved);
        assert!(answer.try_recv().is_ok());
        assert_eq!(pending.resolve(&request, 7, accept()), Resolution::Unknown);
    }

    #[test]
    fn a_request_whose_asked_connections_closed_is_cancelled() {
        let pending = PendingRequests::default();
        let thread = ThreadId::from("t".to_string());
        let connection = |id| Arc::new(Connection::test(id).0);
        let (both, mut both_answer) = pending.register(&thread);
        pending.asked(both, &[connection(1), connection(2)]);
        let (only, mut only_answer) = pending.register(&thread);
        pending.asked(only, &[connection(1)]);
        // Registered, not yet sent: nobody was asked, nothing to cancel.
        let (unsent, mut unsent_answer) = pending.register(&thread);
        pending.connection_closed(1);
        // The request only 1 was asked is over (its sender dropped: `Cancelled`).
        assert!(matches!(
            only_answer.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
        assert!(matches!(
            both_answer.try_recv(),
            Err(oneshot::error::TryRecvError::Empty)
        ));
        assert!(matches!(
            unsent_answer.try_recv(),
            Err(oneshot::error::TryRecvError::Empty)
        ));
        // 2 can still answer the other one; 1 no longer can.
        let done = || ServerRequestOutcome::Answered(serde_json::json!({}));
        assert_eq!(
            pending.resolve(&RequestId::Integer(both), 1, done()),
            Resolution::NotAsked
        );
        assert_eq!(
            pending.resolve(&RequestId::Integer(both), 2, done()),
            Resolution::Resolved
        );
        assert_eq!(
            pending.resolve(&RequestId::Integer(only), 1, done()),
            Resolution::Unknown
        );
        assert!(pending.withdraw(unsent));
    }
}
