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
pub mod session;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use self::listener::{Handshake, LimitedListener};
use self::session::Session;
use crate::connection::ConnectionLimits;
use crate::transport::ingress::Ingress;
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

/// What a connection reads from its socket at once. Client messages are small but for the
/// odd image; tungstenite's default, 128 KiB, kept for every connection, was a twentieth of the
/// heap of ten busy connections (bench/README.md, "Issue 29"). A bigger message still arrives
/// whole, in several reads.
const READ_BUFFER_BYTES: usize = 16 << 10;

/// What a connection's frames gather to before they are written (a flush writes them anyway):
/// over a hundred deltas per write.
const WRITE_BUFFER_BYTES: usize = 32 << 10;

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

impl WsLimits {
    /// What the connections of a listener with these limits share.
    pub fn session(
        &self,
        ingress: Ingress,
        shutdown: CancellationToken,
        open: mpsc::Sender<()>,
    ) -> Session {
        Session {
            ingress,
            shutdown,
            max_message_bytes: self.max_message_bytes,
            connection: self.connection,
            stall: self.stall,
            grace: self.shutdown_grace,
            open,
        }
    }
}

#[derive(Clone)]
struct WsState {
    auth: Arc<WsAuth>,
    /// The web client's access, when it is on.
    web: Option<Arc<WebAccess>>,
    /// What the upgraded connections share.
    session: Session,
    /// Whether a browser can reach the listener (TCP): then `Origin` is checked.
    browsers: bool,
    /// The transport's name in the connections' logs.
    transport: &'static str,
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
    let reach = Reach::Network(web);
    serve_on(listener, options.auth, limits, reach, ingress, shutdown).await
}

/// Who can reach a listener.
pub enum Reach {
    /// A TCP port, which any page in a local browser can open: a request carrying `Origin` is
    /// a browser's, admitted only by the web client (when it is on).
    Network(Option<Arc<WebAccess>>),
    /// A Unix socket, which no browser can open: `Origin` means nothing there and is not
    /// checked, as in the reference; the web client is not served.
    UnixSocket,
}

/// [`serve`] on any guarded listener: the TCP one, or the `unix://` control socket
/// (`transport::unix`), whose connections upgrade the same way.
pub async fn serve_on<L>(
    listener: L,
    auth: WsAuth,
    limits: WsLimits,
    reach: Reach,
    ingress: Ingress,
    shutdown: CancellationToken,
) -> std::io::Result<()>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
    Handshake: for<'a> axum::extract::connect_info::Connected<axum::serve::IncomingStream<'a, L>>,
{
    let (open, mut closed) = mpsc::channel(1);
    let (web, browsers) = match reach {
        Reach::Network(web) => (web, true),
        Reach::UnixSocket => (None, false),
    };
    let state = WsState {
        auth: Arc::new(auth),
        web,
        browsers,
        transport: if browsers { "ws" } else { "unix" },
        session: limits.session(ingress, shutdown.clone(), open),
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
    if let Some(origin) = request.headers().get(header::ORIGIN)
        && state.browsers
    {
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
    if state.browsers && headers.contains_key(header::ORIGIN) {
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
    let max = state.session.max_message_bytes;
    // tungstenite refuses a frame over the limit from its header, before reading its payload,
    // and a message of several frames as soon as they add up to more.
    upgrade
        .protocols([SUBPROTOCOL])
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(WRITE_BUFFER_BYTES)
        .max_message_size(max)
        .max_frame_size(max)
        .on_upgrade(move |socket| session::run(socket, state.session, written, state.transport))
}
