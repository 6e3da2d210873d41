//! WebSocket: one JSON message per text frame, many connections. The same listener answers
//! `GET /readyz` and `GET /healthz`. Any request with an `Origin` header is refused (403) so
//! that a browser page cannot reach a local agent daemon by accident.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::connection::{Backpressure, Connection};
use crate::transport::ingress::{Ingress, classify, log_dropped};

/// Largest message accepted on a connection.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// How WebSocket upgrades are authenticated.
#[derive(Debug, Clone)]
pub enum WsAuth {
    /// No authentication (loopback binds only).
    None,
    /// `Authorization: Bearer <token>` must equal this token.
    CapabilityToken(String),
}

/// Resolved WebSocket listener options.
#[derive(Debug, Clone)]
pub struct WsOptions {
    /// Address to bind (port 0 picks one).
    pub addr: SocketAddr,
    /// Upgrade authentication.
    pub auth: WsAuth,
}

#[derive(Clone)]
struct WsState {
    ingress: Ingress,
    auth: Arc<WsAuth>,
    shutdown: CancellationToken,
}

/// Bind the listener. Separate from [`serve`] so that a bind failure is a start-up error.
pub async fn bind(options: &WsOptions) -> std::io::Result<TcpListener> {
    let listener = TcpListener::bind(options.addr).await?;
    let local = listener.local_addr()?;
    tracing::info!("listening on ws://{local}");
    Ok(listener)
}

/// Serve WebSocket connections and health probes until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    options: WsOptions,
    ingress: Ingress,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let state = WsState {
        ingress,
        auth: Arc::new(options.auth),
        shutdown: shutdown.clone(),
    };
    let app = Router::new()
        .route("/readyz", get(health))
        .route("/healthz", get(health))
        .fallback(upgrade)
        .layer(middleware::from_fn(refuse_browser_origins))
        .with_state(state);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}

async fn health() -> StatusCode {
    StatusCode::OK
}

async fn refuse_browser_origins(request: Request, next: Next) -> Response {
    if request.headers().contains_key(header::ORIGIN) {
        return StatusCode::FORBIDDEN.into_response();
    }
    next.run(request).await
}

async fn upgrade(
    State(state): State<WsState>,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    if let WsAuth::CapabilityToken(expected) = state.auth.as_ref() {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match bearer {
            None => {
                return (StatusCode::UNAUTHORIZED, "missing websocket bearer token")
                    .into_response();
            }
            Some(token) if !bool::from(token.trim().as_bytes().ct_eq(expected.as_bytes())) => {
                return (StatusCode::UNAUTHORIZED, "invalid websocket bearer token")
                    .into_response();
            }
            Some(_) => {}
        }
    }
    upgrade
        .max_message_size(MAX_MESSAGE_BYTES)
        .max_frame_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| connection(socket, state))
}

/// Run one WebSocket connection until either side closes it.
async fn connection(socket: WebSocket, state: WsState) {
    let ingress = state.ingress;
    let closed = state.shutdown.child_token();
    let (connection, outbound) = Connection::new(
        ingress.next_connection_id(),
        Backpressure::Disconnect,
        closed.clone(),
    );
    let connection = Arc::new(connection);
    let span = connection.span().clone();
    async move {
        tracing::debug!(connection = connection.id, "websocket connection opened");
        ingress.opened(connection.clone());
        let (sink, stream) = socket.split();
        let writer = tokio::spawn(
            write_frames(sink, outbound, closed.clone()).instrument(tracing::Span::current()),
        );
        read_frames(stream, &ingress, &connection, &closed).await;
        closed.cancel();
        ingress.closed(connection.id).await;
        let _ = writer.await;
        tracing::debug!(connection = connection.id, "websocket connection closed");
    }
    .instrument(span)
    .await;
}

/// Hand the client's text frames to the ingress until either side closes the connection.
async fn read_frames(
    mut stream: futures::stream::SplitStream<WebSocket>,
    ingress: &Ingress,
    connection: &Arc<Connection>,
    closed: &CancellationToken,
) {
    loop {
        let frame = tokio::select! {
            frame = stream.next() => frame,
            () = closed.cancelled() => break,
        };
        match frame {
            Some(Ok(Message::Text(text))) => match classify(text.as_str()) {
                Ok(message) => ingress.submit(connection, message).await,
                Err(reason) => log_dropped(connection.id, &reason, text.as_str()),
            },
            Some(Ok(Message::Binary(_))) => {
                tracing::warn!(
                    connection = connection.id,
                    "ignoring a binary frame: messages must be text frames"
                );
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Ok(Message::Close(_))) | None => break,
            Some(Err(err)) => {
                tracing::debug!(connection = connection.id, %err, "websocket read failed");
                break;
            }
        }
    }
}

async fn write_frames(
    mut sink: futures::stream::SplitSink<WebSocket, Message>,
    mut outbound: mpsc::Receiver<Bytes>,
    closed: CancellationToken,
) {
    loop {
        let frame = tokio::select! {
            biased;
            frame = outbound.recv() => frame,
            () = closed.cancelled() => break,
        };
        let Some(frame) = frame else { break };
        let Ok(text) = axum::extract::ws::Utf8Bytes::try_from(frame) else {
            continue;
        };
        let sent = tokio::select! {
            sent = sink.send(Message::Text(text)) => sent.is_ok(),
            () = closed.cancelled() => false,
        };
        if !sent {
            break;
        }
    }
    closed.cancel();
    // A client that stopped reading may never accept the close frame: don't wait for it.
    let _ = tokio::time::timeout(std::time::Duration::from_millis(500), sink.close()).await;
}
