//! One WebSocket connection, once upgraded: the client's text frames go to the processor, the
//! connection's outbound queue goes out as text frames. Every WebSocket listener runs it, the
//! `ws://` one and the `unix://` control socket (`transport::unix`), whose connections upgrade
//! through the same router. It is written against [`Frame`] and [`ReadError`], what it needs of
//! a WebSocket library's messages and errors (axum's here), rather than one socket type.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::{Sink, SinkExt, Stream, StreamExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::connection::{Backpressure, Batch, Connection, ConnectionLimits, Outbound};
use crate::transport::ingress::{Ingress, oversized_error};
use crate::transport::link::{CloseBounds, Link};
use crate::transport::stall::{Progress, Stalled, watched};

/// What a received frame is, as far as the connection cares.
pub enum Kind<'a> {
    /// A text frame: one JSON-RPC message.
    Text(&'a str),
    /// A binary frame: not a message (logged and dropped).
    Binary,
    /// A ping or a pong: the library answers pings itself.
    Control,
    /// The client closes the connection.
    Close,
}

/// A WebSocket message type: how to read one and how to make the ones the writer sends.
pub trait Frame: Sized {
    /// What this frame is.
    fn kind(&self) -> Kind<'_>;
    /// A text frame of serialized JSON; `None` if it is not UTF-8 (never, for our frames).
    fn text(frame: Bytes) -> Option<Self>;
    /// A close frame.
    fn close(code: u16, reason: String) -> Self;
}

/// A read error: whether it is a frame or message over the size limit.
pub trait ReadError {
    /// Whether the message was refused from its length.
    fn is_too_long(&self) -> bool;
}

impl Frame for axum::extract::ws::Message {
    fn kind(&self) -> Kind<'_> {
        use axum::extract::ws::Message;
        match self {
            Message::Text(text) => Kind::Text(text.as_str()),
            Message::Binary(_) => Kind::Binary,
            Message::Ping(_) | Message::Pong(_) => Kind::Control,
            Message::Close(_) => Kind::Close,
        }
    }

    fn text(frame: Bytes) -> Option<Self> {
        axum::extract::ws::Utf8Bytes::try_from(frame)
            .ok()
            .map(axum::extract::ws::Message::Text)
    }

    fn close(code: u16, reason: String) -> Self {
        axum::extract::ws::Message::Close(Some(axum::extract::ws::CloseFrame {
            code,
            reason: reason.into(),
        }))
    }
}

impl ReadError for axum::Error {
    fn is_too_long(&self) -> bool {
        use tokio_tungstenite::tungstenite::Error;
        std::error::Error::source(self)
            .and_then(|source| source.downcast_ref::<Error>())
            .is_some_and(|err| matches!(err, Error::Capacity(_)))
    }
}

/// What every connection of a listener shares.
#[derive(Clone)]
pub struct Session {
    /// Into request processing.
    pub ingress: Ingress,
    /// Cancelled at shutdown.
    pub shutdown: CancellationToken,
    /// Largest message accepted, in bytes.
    pub max_message_bytes: usize,
    /// What bounds each connection.
    pub connection: ConnectionLimits,
    /// How long a connection's socket may take nothing before the connection is closed.
    pub stall: Duration,
    /// How long a closing connection's running handlers may take before they are aborted.
    pub grace: Duration,
    /// Held by every connection until it has closed: shutdown waits for them.
    pub open: mpsc::Sender<()>,
}

/// Close code 1009: the message is too big.
const CLOSE_TOO_BIG: u16 = 1009;

/// Run one WebSocket connection until either side closes it; `written` counts the bytes its
/// socket takes (the stall clock).
pub async fn run<S, M, E>(socket: S, session: Session, written: Arc<Progress>, transport: &str)
where
    S: Stream<Item = Result<M, E>> + Sink<M> + Send + 'static,
    M: Frame + Send + 'static,
    E: ReadError,
{
    let Session {
        ingress,
        shutdown,
        max_message_bytes,
        connection: limits,
        stall,
        grace,
        open: _open,
    } = session;
    let (link, outbound) = Link::open(
        ingress,
        Backpressure::Disconnect,
        shutdown.child_token(),
        limits,
    );
    let connection = link.connection().clone();
    let span = connection.span().clone();
    async move {
        tracing::debug!(connection = connection.id, transport, "connection opened");
        let (sink, stream) = socket.split();
        let close_frame = Arc::new(OnceLock::new());
        let stall = StallClock {
            written,
            after: stall,
        };
        let writer = tokio::spawn(
            write_frames(
                sink,
                outbound,
                connection.clone(),
                stall,
                close_frame.clone(),
            )
            .instrument(tracing::Span::current()),
        );
        if let Some(frame) = read_frames(stream, &link, max_message_bytes).await {
            let _ = close_frame.set(frame);
        }
        // The writer bounds its own finish (500 ms).
        let bounds = CloseBounds {
            writer: None,
            tasks: grace,
        };
        link.close(writer, bounds).await;
        tracing::debug!(connection = connection.id, transport, "connection closed");
    }
    .instrument(span)
    .await;
}

/// Hand the client's text frames to the connection until either side closes it. Returns the
/// close frame (code, reason) to send when the connection ends for a reason of ours.
async fn read_frames<R, M, E>(
    mut stream: R,
    link: &Link,
    max_message_bytes: usize,
) -> Option<(u16, String)>
where
    R: Stream<Item = Result<M, E>> + Unpin,
    M: Frame,
    E: ReadError,
{
    let connection = link.connection();
    let closed = connection.closed.clone();
    loop {
        let frame = tokio::select! {
            frame = stream.next() => frame,
            () = closed.cancelled() => return None,
        };
        let frame = match frame {
            Some(Ok(frame)) => frame,
            None => return None,
            Some(Err(err)) if err.is_too_long() => {
                // The message was refused from its length alone: its id is unknown.
                tracing::warn!(
                    connection = connection.id,
                    max_message_bytes,
                    "closing a connection that sent a message over the size limit"
                );
                connection
                    .send(oversized_error(b"", None, max_message_bytes))
                    .await;
                let reason = format!("message over {max_message_bytes} bytes");
                return Some((CLOSE_TOO_BIG, reason));
            }
            Some(Err(_)) => {
                tracing::debug!(connection = connection.id, "websocket read failed");
                return None;
            }
        };
        match frame.kind() {
            Kind::Text(text) => link.receive(text).await,
            Kind::Binary => {
                tracing::warn!(
                    connection = connection.id,
                    "ignoring a binary frame: messages must be text frames"
                );
            }
            Kind::Control => {}
            Kind::Close => return None,
        }
    }
}

/// Most frames written between two flushes.
const MAX_BATCH: usize = 256;

/// Queue one frame on the socket's buffer (written when it fills or at the next flush);
/// `false` when the connection failed or closed meanwhile.
async fn feed<K, M>(sink: &mut K, frame: Bytes, closed: &CancellationToken) -> bool
where
    K: Sink<M> + Unpin,
    M: Frame,
{
    let Some(message) = M::text(frame) else {
        // Never happens (frames are serialized JSON); the frame is skipped.
        return true;
    };
    tokio::select! {
        biased;
        fed = sink.feed(message) => fed.is_ok(),
        () = closed.cancelled() => false,
    }
}

/// The stall clock of one connection: its socket's bytes taken, and the time it may stand still.
struct StallClock {
    written: Arc<Progress>,
    after: Duration,
}

async fn write_frames<K, M>(
    mut sink: K,
    mut outbound: Outbound,
    connection: Arc<Connection>,
    stall: StallClock,
    close_frame: Arc<OnceLock<(u16, String)>>,
) where
    K: Sink<M> + Unpin,
    M: Frame,
{
    let closed = connection.closed.clone();
    let mut frames = Vec::with_capacity(MAX_BATCH);
    // Set when the socket stalled: the backlog is what the client did not take, so it is
    // dropped rather than offered again while the connection closes.
    let mut stalled = false;
    loop {
        if outbound.next_batch(&mut frames, MAX_BATCH, &closed).await != Batch::Frames {
            break;
        }
        // The frames queued together go out together: one flush (one write, as far as the
        // socket takes it) per burst instead of one per frame, so a streaming turn's deltas
        // drain as fast as they are made.
        let send = async {
            for frame in frames.drain(..) {
                if !feed(&mut sink, frame, &closed).await {
                    return false;
                }
            }
            // A send that can finish at once goes out even when the connection is closing (an
            // error about the message that closes it); only a stuck one is abandoned.
            tokio::select! {
                biased;
                flushed = sink.flush() => flushed.is_ok(),
                () = closed.cancelled() => false,
            }
        };
        match watched(send, &stall.written, stall.after).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(Stalled) => {
                let why = format!("its socket has taken nothing for {:?}", stall.after);
                connection.close_slow(&why);
                stalled = true;
                break;
            }
        }
    }
    closed.cancel();
    // What was queued before the close (an error about the message that caused it) goes
    // first, then the close frame; a client that stopped reading may never accept them, so
    // neither is waited for long.
    let finish = async {
        while !stalled && outbound.try_recv_many(&mut frames, MAX_BATCH) {
            for frame in frames.drain(..) {
                let Some(message) = M::text(frame) else {
                    continue;
                };
                if sink.feed(message).await.is_err() {
                    return;
                }
            }
        }
        if let Some((code, reason)) = close_frame.get() {
            let _ = sink.send(M::close(*code, reason.clone())).await;
        }
        let _ = sink.close().await;
    };
    let _ = tokio::time::timeout(Duration::from_millis(500), finish).await;
}
