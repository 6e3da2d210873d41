//! One client connection: its lifecycle ([`Lifecycle`]: awaiting `initialize`, ready with the
//! choices it made there, closing), its outbound queue and its running handler tasks
//! ([`tasks`]).
//!
//! The queue ([`outbound`]) is bounded the same way on both transports (docs/protocol.md §2.5):
//! notifications never wait; past the capacity, deltas and progress of one item are merged
//! ([`coalesce`]); a connection whose queue still reaches its hard bound, or whose transport
//! takes nothing for `limits.outbound_stall_secs` (the writer's clock, `transport::stall`),
//! is closed.

pub mod coalesce;
pub mod outbound;
pub mod tasks;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use weft_protocol::InitializeParams;
use weft_protocol::notifications::ServerNotification;

pub use self::outbound::{Batch, Outbound, QueueLimits};
use self::outbound::{Pushed, Queue};
use self::tasks::HandlerTasks;

/// Identifies a connection for the lifetime of the process.
pub type ConnectionId = u64;

/// How answers to the connection's own requests meet a full outbound queue. Notifications and
/// server requests never wait, on either transport: one slow connection must not hold up a
/// thread that others follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backpressure {
    /// stdio: an answer waits for room below the capacity, so a client that does not read its
    /// answers stops being served new requests (nothing is dropped).
    Wait,
    /// WebSocket: nothing waits (request processing is shared by every connection); a queue
    /// past its hard bound closes the connection.
    Disconnect,
}

/// What a connection chose in its `initialize` request. Set once.
#[derive(Debug)]
pub struct InitializeChoices {
    /// `clientInfo.name`.
    pub client_name: String,
    /// `capabilities.experimentalApi`.
    pub experimental_api: bool,
    /// `capabilities.optOutNotificationMethods`.
    pub opt_out: HashSet<String>,
}

impl From<&InitializeParams> for InitializeChoices {
    fn from(params: &InitializeParams) -> Self {
        let capabilities = params.capabilities.clone().unwrap_or_default();
        InitializeChoices {
            client_name: params.client_info.name.clone(),
            experimental_api: capabilities.experimental_api,
            opt_out: capabilities
                .opt_out_notification_methods
                .unwrap_or_default()
                .into_iter()
                .collect(),
        }
    }
}

/// Where a connection is in its life. It starts awaiting `initialize` (every other request is
/// refused `Not initialized`), is ready once `initialize` succeeded, with the choices made
/// there, and ends closing (by its peer, by shutdown, or for not reading), for good.
#[derive(Debug, Clone)]
pub enum Lifecycle {
    /// No successful `initialize` yet.
    AwaitingInitialize,
    /// Initialized with these choices.
    Ready(Arc<InitializeChoices>),
    /// Closed or closing; the choices, if it was ready.
    Closing(Option<Arc<InitializeChoices>>),
}

impl Lifecycle {
    /// The choices made at `initialize`, once made (still known while closing).
    pub fn choices(&self) -> Option<&Arc<InitializeChoices>> {
        match self {
            Lifecycle::Ready(choices) => Some(choices),
            Lifecycle::Closing(choices) => choices.as_ref(),
            Lifecycle::AwaitingInitialize => None,
        }
    }
}

/// What bounds one connection (`[limits]`).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Its outbound queue.
    pub queue: QueueLimits,
    /// Handler tasks running at once (`limits.max_running_requests`).
    pub max_running: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            queue: QueueLimits::default(),
            max_running: tasks::DEFAULT_MAX_RUNNING,
        }
    }
}

/// A client connection, shared by the transport, the request processor and the threads the
/// connection is subscribed to.
pub struct Connection {
    /// The connection's id.
    pub id: ConnectionId,
    queue: Arc<Queue>,
    backpressure: Backpressure,
    /// The stage of its [`Lifecycle`]; `Closing` is also signalled by `closed`.
    lifecycle: parking_lot::RwLock<Lifecycle>,
    /// Cancelled when the connection starts closing: the signal the transport's reader and
    /// writer and every waiting send select on. A child of the daemon's shutdown token, so
    /// shutdown closes every connection.
    pub closed: CancellationToken,
    /// The handlers of its requests that run in tasks of their own.
    tasks: HandlerTasks,
    /// Requests handed to request processing and not answered yet.
    unanswered: AtomicUsize,
    /// Signalled when `unanswered` drops to zero.
    all_answered: Notify,
    span: tracing::Span,
}

impl Connection {
    /// A new connection with the default queue limits, and the receiving end of its
    /// outbound queue, for the transport writer.
    pub fn new(
        id: ConnectionId,
        backpressure: Backpressure,
        closed: CancellationToken,
    ) -> (Connection, Outbound) {
        Connection::with_limits(id, backpressure, closed, ConnectionLimits::default())
    }

    /// [`Connection::new`] with these limits (`[limits]`).
    pub fn with_limits(
        id: ConnectionId,
        backpressure: Backpressure,
        closed: CancellationToken,
        limits: ConnectionLimits,
    ) -> (Connection, Outbound) {
        let queue = Queue::new(limits.queue);
        let rx = Outbound::new(queue.clone());
        let connection = Connection {
            id,
            queue,
            backpressure,
            lifecycle: parking_lot::RwLock::new(Lifecycle::AwaitingInitialize),
            closed,
            tasks: HandlerTasks::new(limits.max_running),
            unanswered: AtomicUsize::new(0),
            all_answered: Notify::new(),
            span: tracing::debug_span!("connection", connection_id = id),
        };
        (connection, rx)
    }

    /// Where the connection is in its life.
    pub fn lifecycle(&self) -> Lifecycle {
        let stage = self.lifecycle.read().clone();
        match stage {
            Lifecycle::Ready(choices) if self.closed.is_cancelled() => {
                Lifecycle::Closing(Some(choices))
            }
            Lifecycle::AwaitingInitialize if self.closed.is_cancelled() => Lifecycle::Closing(None),
            stage => stage,
        }
    }

    /// The choices from `initialize`, once initialized (still known while closing).
    pub fn initialize_choices(&self) -> Option<Arc<InitializeChoices>> {
        self.lifecycle.read().choices().cloned()
    }

    /// Record a successful `initialize`: awaiting initialize → ready. Returns false if the
    /// connection was already initialized (or is closing).
    pub fn initialize(&self, choices: InitializeChoices) -> bool {
        let mut stage = self.lifecycle.write();
        if !matches!(*stage, Lifecycle::AwaitingInitialize) || self.closed.is_cancelled() {
            return false;
        }
        *stage = Lifecycle::Ready(Arc::new(choices));
        true
    }

    /// Start closing: → closing, for good, and the `closed` signal. Returns false if it was
    /// already closing by this call's path (so what caused it is logged once).
    pub fn close(&self) -> bool {
        let first = {
            let mut stage = self.lifecycle.write();
            match &*stage {
                Lifecycle::Closing(_) => false,
                Lifecycle::Ready(choices) => {
                    *stage = Lifecycle::Closing(Some(choices.clone()));
                    true
                }
                Lifecycle::AwaitingInitialize => {
                    *stage = Lifecycle::Closing(None);
                    true
                }
            }
        };
        self.closed.cancel();
        first
    }

    /// The handlers of this connection's requests that run in tasks of their own.
    pub fn tasks(&self) -> &HandlerTasks {
        &self.tasks
    }

    /// The `connection{connection_id}` span: the transport runs the connection's tasks in it and
    /// each request's span is its child, so logs can be filtered per connection.
    pub fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Whether this connection wants notifications of `method`: it must be initialized, must
    /// not have opted out of it, and must have opted into `experimentalApi` for the
    /// notifications the reference sends only to such connections.
    pub fn wants_notification(&self, method: &str) -> bool {
        let stage = self.lifecycle.read();
        stage.choices().is_some_and(|s| {
            (s.opt_out.is_empty() || !s.opt_out.contains(method))
                && (s.experimental_api
                    || !weft_protocol::notifications::EXPERIMENTAL_NOTIFICATIONS.contains(&method))
        })
    }

    /// Queue one serialized message (a response, or a message following one). On stdio it
    /// waits for room below the capacity (see [`Backpressure`]). Returns false when the
    /// connection is gone (or has just been closed for not reading).
    pub async fn send(&self, frame: Bytes) -> bool {
        if self.closed.is_cancelled() {
            return false;
        }
        if frame.is_empty() {
            return true;
        }
        let pushed = match self.backpressure {
            Backpressure::Wait => tokio::select! {
                pushed = self.queue.push_with_room(frame) => pushed,
                () = self.closed.cancelled() => Pushed::Closed,
            },
            Backpressure::Disconnect => self.queue.push(frame, None),
        };
        self.pushed(pushed)
    }

    /// Queue one serialized notification (or server request) without ever waiting; `source`
    /// is what `frame` was serialized from, merged into the queued tail while the queue is
    /// full. Returns false when the connection is gone or has just been closed.
    pub fn send_notification(&self, frame: &Bytes, source: Option<&ServerNotification>) -> bool {
        if self.closed.is_cancelled() {
            return false;
        }
        if frame.is_empty() {
            return true;
        }
        self.pushed(self.queue.push(frame.clone(), source))
    }

    fn pushed(&self, pushed: Pushed) -> bool {
        match pushed {
            Pushed::Queued => true,
            Pushed::Closed => false,
            Pushed::Overflow => {
                self.close_slow("its queue is full even with deltas merged");
                false
            }
        }
    }

    /// Close the connection because its client does not keep up (`why`); logged once.
    pub fn close_slow(&self, why: &str) {
        if self.close() {
            tracing::warn!(
                connection = self.id,
                "client is not reading its messages ({why}); closing the connection"
            );
        }
    }

    /// A request from this connection was handed to request processing: it is owed an answer,
    /// sent with [`Connection::answer`].
    pub fn request_received(&self) {
        self.unanswered.fetch_add(1, Ordering::AcqRel);
    }

    /// Queue the answer (response or error) to one of this connection's requests.
    pub async fn answer(&self, frame: Bytes) -> bool {
        let sent = self.send(frame).await;
        self.answered();
        sent
    }

    /// [`Connection::answer`] without waiting: the answer is dropped if there is no room (the
    /// overload reply, which must never block the reader). An empty frame only settles the
    /// count (a request that can no longer be processed).
    pub fn try_answer(&self, frame: Bytes) -> bool {
        let sent = frame.is_empty() || self.try_send(frame);
        self.answered();
        sent
    }

    /// The answer to one request, and whatever follows it, is queued (for answers not sent
    /// with [`Connection::answer`]).
    pub fn answered(&self) {
        let before = self
            .unanswered
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        if before == Ok(1) {
            self.all_answered.notify_waiters();
        }
    }

    /// Wait until every request received so far has its answer queued.
    pub async fn answered_all(&self) {
        loop {
            let notified = self.all_answered.notified();
            tokio::pin!(notified);
            // Register before checking, so that no wake-up is missed.
            notified.as_mut().enable();
            if self.unanswered.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Queue a message without waiting, dropping it if there is no room (used for the
    /// overload reply, which must never block the reader).
    pub fn try_send(&self, frame: Bytes) -> bool {
        self.queue.try_push(frame)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The writer's `recv_many` ends, as a channel's receiver would once its senders are gone.
        self.queue.close();
    }
}

/// Test connections and clients.
#[cfg(test)]
impl Connection {
    /// Connection `id`, waiting when its queue is full, closed by nothing else; and its queue.
    pub(crate) fn test(id: ConnectionId) -> (Connection, Outbound) {
        Connection::new(id, Backpressure::Wait, CancellationToken::new())
    }

    /// Test connection 1, initialized by client `t` ([`InitializeChoices::test`]).
    pub(crate) fn initialized(experimental_api: bool) -> (Connection, Outbound) {
        let (connection, rx) = Connection::test(1);
        assert!(connection.initialize(InitializeChoices::test(experimental_api)));
        (connection, rx)
    }
}

#[cfg(test)]
impl InitializeChoices {
    /// The choices of test client `t`, which opts out of nothing.
    pub(crate) fn test(experimental_api: bool) -> Self {
        InitializeChoices {
            client_name: "t".into(),
            experimental_api,
            opt_out: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(messages: usize) -> ConnectionLimits {
        ConnectionLimits {
            queue: QueueLimits {
                messages,
                bytes: 1 << 20,
            },
            ..ConnectionLimits::default()
        }
    }

    #[tokio::test]
    async fn a_websocket_queue_past_its_hard_bound_is_disconnected() {
        let (conn, _rx) = Connection::with_limits(
            1,
            Backpressure::Disconnect,
            CancellationToken::new(),
            small(8),
        );
        for _ in 0..8 * outbound::HARD_BOUND_FACTOR {
            assert!(conn.send(Bytes::from_static(b"{}")).await);
        }
        assert!(
            !conn.closed.is_cancelled(),
            "full is not yet too far behind"
        );
        assert!(!conn.send(Bytes::from_static(b"{}")).await);
        assert!(conn.closed.is_cancelled());
    }

    #[tokio::test]
    async fn a_full_queue_merges_deltas_instead_of_disconnecting() {
        use weft_protocol::notifications::AgentMessageDeltaNotification;
        let (conn, mut rx) = Connection::with_limits(
            1,
            Backpressure::Disconnect,
            CancellationToken::new(),
            small(8),
        );
        for i in 0..10_000 {
            let delta: ServerNotification = AgentMessageDeltaNotification {
                thread_id: "t".to_string().into(),
                turn_id: "u".to_string().into(),
                item_id: "a".to_string().into(),
                delta: format!("{i} "),
            }
            .into();
            let frame = crate::outgoing::notification(&delta);
            assert!(conn.send_notification(&frame, Some(&delta)));
        }
        assert!(!conn.closed.is_cancelled());
        let mut frames = Vec::new();
        while rx.try_recv_many(&mut frames, 1000) {}
        assert_eq!(frames.len(), 9, "eight frames, then one merged delta");
        let text: String = frames
            .iter()
            .map(|f| {
                let v: serde_json::Value = serde_json::from_slice(f).unwrap();
                v["params"]["delta"].as_str().unwrap().to_string()
            })
            .collect();
        let expected: String = (0..10_000).map(|i| format!("{i} ")).collect();
        assert_eq!(text, expected);
    }

    #[tokio::test]
    async fn a_stdio_answer_waits_for_room_until_closed() {
        let closed = CancellationToken::new();
        let (conn, _rx) = Connection::with_limits(1, Backpressure::Wait, closed.clone(), small(1));
        assert!(conn.send(Bytes::from_static(b"1")).await);
        let conn = std::sync::Arc::new(conn);
        let waiting = tokio::spawn({
            let conn = conn.clone();
            async move { conn.send(Bytes::from_static(b"2")).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        closed.cancel();
        assert!(!waiting.await.unwrap());
    }

    #[tokio::test]
    async fn answered_all_waits_for_every_answer() {
        let (conn, _rx) = Connection::test(1);
        conn.answered_all().await;
        conn.request_received();
        conn.request_received();
        let conn = std::sync::Arc::new(conn);
        let waiter = tokio::spawn({
            let conn = conn.clone();
            async move { conn.answered_all().await }
        });
        conn.answer(Bytes::from_static(b"{}")).await;
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        conn.answer(Bytes::from_static(b"{}")).await;
        waiter.await.unwrap();
    }

    #[test]
    fn opt_out_is_exact_and_needs_initialize() {
        let (conn, _rx) = Connection::test(1);
        assert!(!conn.wants_notification("turn/started"));
        assert!(
            conn.initialize(InitializeChoices {
                client_name: "t".into(),
                experimental_api: false,
                opt_out: ["item/agentMessage/delta".to_string()]
                    .into_iter()
                    .collect(),
            })
        );
        assert!(conn.wants_notification("turn/started"));
        assert!(!conn.wants_notification("item/agentMessage/delta"));
        assert!(conn.wants_notification("item/agentMessage"));
        assert!(!conn.wants_notification("thread/readState/changed"));
    }

    #[test]
    fn the_lifecycle_goes_one_way() {
        let (conn, _rx) = Connection::test(1);
        assert!(matches!(conn.lifecycle(), Lifecycle::AwaitingInitialize));
        let choices = || InitializeChoices::test(false);
        assert!(conn.initialize(choices()));
        assert!(matches!(conn.lifecycle(), Lifecycle::Ready(_)));
        assert!(!conn.initialize(choices()), "initialized once");
        assert!(conn.close());
        assert!(!conn.close(), "the close is reported once");
        assert!(matches!(conn.lifecycle(), Lifecycle::Closing(Some(_))));
        assert!(conn.closed.is_cancelled());
        assert!(
            conn.initialize_choices().is_some(),
            "choices outlive the close"
        );

        // Shutdown closes through the token, a child of the daemon's.
        let shutdown = CancellationToken::new();
        let (conn, _rx) = Connection::new(2, Backpressure::Wait, shutdown.child_token());
        shutdown.cancel();
        assert!(matches!(conn.lifecycle(), Lifecycle::Closing(None)));
        assert!(
            !conn.initialize(choices()),
            "a closing connection is not initialized"
        );
    }

    #[test]
    fn experimental_notifications_need_the_opt_in() {
        let (conn, _rx) = Connection::initialized(true);
        assert!(conn.wants_notification("thread/readState/changed"));
        assert!(conn.wants_notification("turn/started"));
    }
}
