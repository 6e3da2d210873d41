//! One client connection: its outbound queue and the choices it made at `initialize`.

use std::collections::HashSet;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;
use weft_protocol::InitializeParams;

/// Identifies a connection for the lifetime of the process.
pub type ConnectionId = u64;

/// Capacity of each connection's outbound queue (messages).
pub const OUTBOUND_CAPACITY: usize = 4096;

/// How a full outbound queue is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backpressure {
    /// stdio: the sender waits for room; nothing is ever dropped.
    Wait,
    /// WebSocket: a client that stops reading is disconnected, so it never stalls anyone.
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

/// A client connection, shared by the transport, the request processor and the threads the
/// connection is subscribed to.
#[derive(Debug)]
pub struct Connection {
    /// The connection's id.
    pub id: ConnectionId,
    outbound: mpsc::Sender<Bytes>,
    backpressure: Backpressure,
    choices: OnceLock<InitializeChoices>,
    /// Cancelled when the connection is closed (by the peer, by shutdown or for being slow).
    pub closed: CancellationToken,
    overflowed: AtomicBool,
    /// Requests handed to request processing and not answered yet.
    unanswered: AtomicUsize,
    /// Signalled when `unanswered` drops to zero.
    all_answered: Notify,
    span: tracing::Span,
}

impl Connection {
    /// A new connection and the receiving end of its outbound queue, for the transport writer.
    pub fn new(
        id: ConnectionId,
        backpressure: Backpressure,
        closed: CancellationToken,
    ) -> (Connection, mpsc::Receiver<Bytes>) {
        let (outbound, rx) = mpsc::channel(OUTBOUND_CAPACITY);
        let connection = Connection {
            id,
            outbound,
            backpressure,
            choices: OnceLock::new(),
            closed,
            overflowed: AtomicBool::new(false),
            unanswered: AtomicUsize::new(0),
            all_answered: Notify::new(),
            span: tracing::debug_span!("connection", connection_id = id),
        };
        (connection, rx)
    }

    /// The choices from `initialize`, once initialized.
    pub fn initialize_choices(&self) -> Option<&InitializeChoices> {
        self.choices.get()
    }

    /// Record a successful `initialize`. Returns false if the connection was already initialized.
    pub fn initialize(&self, choices: InitializeChoices) -> bool {
        self.choices.set(choices).is_ok()
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
        self.choices.get().is_some_and(|s| {
            (s.opt_out.is_empty() || !s.opt_out.contains(method))
                && (s.experimental_api
                    || !weft_protocol::notifications::EXPERIMENTAL_NOTIFICATIONS.contains(&method))
        })
    }

    /// Queue one serialized message. Returns false when the connection is gone (or has just
    /// been disconnected for not reading).
    pub async fn send(&self, frame: Bytes) -> bool {
        if self.closed.is_cancelled() {
            return false;
        }
        if frame.is_empty() {
            return true;
        }
        match self.backpressure {
            Backpressure::Wait => self.outbound.send(frame).await.is_ok(),
            Backpressure::Disconnect => match self.outbound.try_send(frame) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    if !self.overflowed.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            connection = self.id,
                            "client is not reading its messages; disconnecting it"
                        );
                    }
                    self.closed.cancel();
                    false
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            },
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
        self.outbound.try_send(frame).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn slow_websocket_client_is_disconnected() {
        let (conn, _rx) = Connection::new(1, Backpressure::Disconnect, CancellationToken::new());
        for _ in 0..OUTBOUND_CAPACITY {
            assert!(conn.send(Bytes::from_static(b"{}")).await);
        }
        assert!(!conn.send(Bytes::from_static(b"{}")).await);
        assert!(conn.closed.is_cancelled());
    }

    #[tokio::test]
    async fn answered_all_waits_for_every_answer() {
        let (conn, _rx) = Connection::new(1, Backpressure::Wait, CancellationToken::new());
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
        let (conn, _rx) = Connection::new(1, Backpressure::Wait, CancellationToken::new());
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
    fn experimental_notifications_need_the_opt_in() {
        let (conn, _rx) = Connection::new(1, Backpressure::Wait, CancellationToken::new());
        assert!(conn.initialize(InitializeChoices {
            client_name: "t".into(),
            experimental_api: true,
            opt_out: Default::default(),
        }));
        assert!(conn.wants_notification("thread/readState/changed"));
        assert!(conn.wants_notification("turn/started"));
    }
}
