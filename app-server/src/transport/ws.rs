//! WebSocket: one JSON message per text frame, many connections. The same listener answers
//! `GET /readyz` and `GET /healthz` and, with `[web] enabled`, serves the web client
//! ([`crate::web`]). A request with an `Origin` header comes from a browser: it is refused
//! (403) unless the web client is on and its origin is admitted, and its upgrade needs a
//! signed-in session or the sign-in token ([`WebAccess::admit_socket`]), so that a foreign
//! page cannot reach a local agent daemon. Every response carries the web client's security
//! headers. How many connections may be open and how long an upgrade may take is
//! [`listener`]'s; a message over the size limit closes its connection with close code 1009.

pub mod auth;
pub mod listener;

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use self::listener::{Handshake, LimitedListener};
use crate::connection::{Backpressure, Batch, Connection, ConnectionLimits, Outbound};
use crate::transport::ingress::{Ingress, oversized_error};
use crate::transport::link::{CloseBounds, Link};
use crate::transport::stall::{Progress, Stalled, watched};
use crate::web::{SUBPROTOCOL, WebAccess, pages};

pub use self::auth::WsAuth;

/// Resolved WebSocket listener options.
#[derive(Debug, Clone)]
pub struct WsOptions {
    /// Address to bind (port 0 picks one).
    pub addr: SocketAddr,
    /// Upgrade authentication.
    pub auth: WsAuth,
}

/// What bounds the WebSocket listener (`[limits]` in the config).
#[derive(Debug, Clone, Copy)]
pub struct WsLimits {
    /// Largest message (and frame) accepted, in bytes.
    pub max_message_bytes: usize,
    /// Connections open at once, handshakes included.
    pub max_connections: usize,
    /// Time a connection has to complete its upgrade.
    pub handshake_timeout: Duration,
    /// What bounds each connection.
    pub connection: ConnectionLimits,
    /// How long a connection's socket may take nothing before the connection is closed.
    pub stall: Duration,
    /// How long a closing connection's running handlers may take before they are aborted,
    /// and how long shutdown waits for the connections to close.
    pub shutdown_grace: Duration,
}

#[derive(Clone)]
struct WsState {
    ingress: Ingress,
    auth: Arc<WsAuth>,
    /// The web client's access, when it is on.
    web: Option<Arc<WebAccess>>,
    shutdown: CancellationToken,
    max_message_bytes: usize,
    connection: ConnectionLimits,
    stall: Duration,
    grace: Duration,
    /// Held by every upgraded connection until it has closed: shutdown waits for them.
    open: mpsc::Sender<()>,
}

/// Bind the listener. Separate from [`serve`] so that a bind failure is a start-up error.
pub async fn bind(options: &WsOptions) -> std::io::Result<TcpListener> {
    let listener = TcpListener::bind(options.addr).await?;
    let local = listener.local_addr()?;
    tracing::info!("listening on ws://{local}");
    Ok(listener)
}

/// Serve WebSocket connections and health probes until `shutdown` is cancelled; then wait
/// (within the shutdown grace) for the upgraded connections to close and drain.
pub async fn serve(
    listener: TcpListener,
    options: WsOptions,
    limits: WsLimits,
    web: Option<Arc<WebAccess>>,
    ingress: Ingress,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let listener = LimitedListener::new(listener, limits.max_connections, limits.handshake_timeout);
    let (open, mut closed) = mpsc::channel(1);
    let state = WsState {
        ingress,
        auth: Arc::new(options.auth),
        web,
        shutdown: shutdown.clone(),
        max_message_bytes: limits.max_message_bytes,
        connection: limits.connection,
        stall: limits.stall,
        grace: limits.shutdown_grace,
        open,
    };
    let app = Router::new()
        .route("/readyz", get(health))
        .route("/healthz", get(health))
        .fallback(upgrade)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            refuse_foreign_origins,
        ))
        .layer(middleware::from_fn(pages::security_headers))
        .with_state(state);
    let served = axum::serve(
        listener,
        app.into_make_service_with_connect_info::<Handshake>(),
    )
    .with_graceful_shutdown(async move { shutdown.cancelled().await })
    .await;
    // Every connection holds a sender; `recv` ends once the last one has closed. A closing
    // connection's own waits are bounded, so this one is too (by a second grace, for slack).
    let all_closed = async { while closed.recv().await.is_some() {} };
    if tokio::time::timeout(2 * limits.shutdown_grace, all_closed)
        .await
        .is_err()
    {
        tracing::warn!("websocket connections still closing after the shutdown grace");
    }
    served
}

async fn health() -> StatusCode {
    StatusCode::OK
}

/// A request from a browser page (it carries `Origin`) goes on only when the web client is
/// on and admits that origin.
async fn refuse_foreign_origins(
    State(state): State<WsState>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let admitted = match (&state.web, origin.to_str()) {
            (Some(web), Ok(origin)) => web.admits_origin(origin),
            _ => false,
        };
        if !admitted {
            return StatusCode::FORBIDDEN.into_response();
        }
    }
    next.run(request).await
}

/// Whether a request asks for a WebSocket upgrade.
fn is_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

async fn upgrade(
    State(state): State<WsState>,
    ConnectInfo(handshake): ConnectInfo<Handshake>,
    uri: Uri,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    if let Some(web) = &state.web
        && !is_upgrade(&headers)
    {
        return pages::answer(web, uri.path(), &headers, uri.query());
    }
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    if headers.contains_key(header::ORIGIN) {
        // A browser (its origin admitted by `refuse_foreign_origins`): signed in, or
        // carrying the token, instead of the bearer it cannot set.
        let admitted = match &state.web {
            Some(web) => web.admit_socket(&headers, uri.query()),
            None => Err(crate::web::Refusal::Forbidden("the web client is off")),
        };
        if let Err(refusal) = admitted {
            return refusal.into_response();
        }
    } else if let Err(refusal) = state.auth.authorize(&headers) {
        return (StatusCode::UNAUTHORIZED, refusal).into_response();
    }
    handshake.upgraded();
    let written = handshake.written();
    // tungstenite refuses a frame over the limit from its header, before reading its payload,
    // and a message of several frames as soon as they add up to more.
    upgrade
        .protocols([SUBPROTOCOL])
        .max_message_size(state.max_message_bytes)
        .max_frame_size(state.max_message_bytes)
        .on_upgrade(move |socket| connection(socket, state, written))
}

/// Run one WebSocket connection until either side closes it.
async fn connection(socket: WebSocket, state: WsState, written: Arc<Progress>) {
    let WsState {
        ingress,
        shutdown,
        max_message_bytes,
        connection: limits,
        stall,
        grace,
        open: _open,
        ..
    } = state;
    let (link, outbound) = Link::open(
        ingress,
        Backpressure::Disconnect,
        shutdown.child_token(),
        limits,
    );
    let connection = link.connection().clone();
    let span = connection.span().clone();
    async move {
        tracing::debug!(connection = connection.id, "websocket connection opened");
        let (sink, stream) = socket.split();
        let close_frame = Arc::new(OnceLock::new());
        let stall = Stall {
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
        tracing::debug!(connection = connection.id, "websocket connection closed");
    }
    .instrument(span)
    .await;
}

/// Hand the client's text frames to the connection until either side closes it. Returns the
/// close frame to send when the connection ends for a reason of ours.
async fn read_frames(
    mut stream: futures::stream::SplitStream<WebSocket>,
    link: &Link,
    max_message_bytes: usize,
) -> Option<CloseFrame> {
    let connection = link.connection();
    let closed = connection.closed.clone();
    loop {
        let frame = tokio::select! {
            frame = stream.next() => frame,
            () = closed.cancelled() => return None,
        };
        match frame {
            Some(Ok(Message::Text(text))) => link.receive(text.as_str()).await,
            Some(Ok(Message::Binary(_))) => {
                tracing::warn!(
                    connection = connection.id,
                    "ignoring a binary frame: messages must be text frames"
                );
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Ok(Message::Close(_))) | None => return None,
            Some(Err(err)) if is_too_long(&err) => {
                // The message was refused from its length alone: its id is unknown.
                tracing::warn!(
                    connection = connection.id,
                    max_message_bytes,
                    "closing a connection that sent a message over the size limit"
                );
                connection
                    .send(oversized_error(b"", None, max_message_bytes))
                    .await;
                return Some(CloseFrame {
                    code: close_code::SIZE,
                    reason: format!("message over {max_message_bytes} bytes").into(),
                });
            }
            Some(Err(_)) => {
                tracing::debug!(connection = connection.id, "websocket read failed");
                return None;
            }
        }
    }
}

/// Whether a read failed because a frame or message is over the size limit.
fn is_too_long(err: &axum::Error) -> bool {
    use tokio_tungstenite::tungstenite::Error;
    std::error::Error::source(err)
        .and_then(|source| source.downcast_ref::<Error>())
        .is_some_and(|err| matches!(err, Error::Capacity(_)))
}

/// Most frames written between two flushes.
const MAX_BATCH: usize = 256;

/// Queue one frame on the socket's buffer (written when it fills or at the next flush);
/// `false` when the connection failed or closed meanwhile.
async fn feed(
    sink: &mut futures::stream::SplitSink<WebSocket, Message>,
    frame: Bytes,
    closed: &CancellationToken,
) -> bool {
    let Ok(text) = axum::extract::ws::Utf8Bytes::try_from(frame) else {
        // Never happens (frames are serialized JSON); the frame is skipped.
        return true;
    };
    tokio::select! {
        biased;
        fed = sink.feed(Message::Text(text)) => fed.is_ok(),
        () = closed.cancelled() => false,
    }
}

/// The stall clock of one connection: its socket's bytes taken, and the time it may stand still.
struct Stall {
    written: Arc<Progress>,
    after: Duration,
}

async fn write_frames(
    mut sink: futures::stream::SplitSink<WebSocket, Message>,
    mut outbound: Outbound,
    connection: Arc<Connection>,
    stall: Stall,
    close_frame: Arc<OnceLock<CloseFrame>>,
) {
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
                let Ok(text) = axum::extract::ws::Utf8Bytes::try_from(frame) else {
                    continue;
                };
                if sink.feed(Message::Text(text)).await.is_err() {
                    return;
                }
            }
        }
        if let Some(frame) = close_frame.get() {
            let _ = sink.send(Message::Close(Some(frame.clone()))).await;
        }
        let _ = sink.close().await;
    };
    let _ = tokio::time::timeout(Duration::from_millis(500), finish).await;
}
