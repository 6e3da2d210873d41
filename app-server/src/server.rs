//! Start-up, signals and graceful shutdown: resolve the flags and the config, open the thread
//! manager, start request processing and the chosen transport, and wind everything down when
//! the transport ends or a signal arrives.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use weft_core::config::{Config, ConfigError};
use weft_core::state::StateError;
use weft_core::thread::ThreadManager;

use crate::cli::{AppServerArgs, Listen, ListenError};
use crate::connection::{ConnectionLimits, QueueLimits};
use crate::processor;
use crate::state::AppState;
use crate::transport;
use crate::transport::ingress::Ingress;
use crate::transport::lines::LineLimits;
use crate::transport::ws::auth::WsAuthError;
use crate::transport::ws::{WsAuth, WsLimits, WsOptions};
use crate::web::WebAccess;

/// A failure to start the daemon; printed as one line.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// `--listen` is not a supported URL.
    #[error(transparent)]
    Listen(#[from] ListenError),
    /// The `--ws-*` flags do not make an authentication policy.
    #[error(transparent)]
    WsAuth(#[from] WsAuthError),
    /// A non-loopback WebSocket bind without authentication.
    #[error(
        "refusing to listen on non-loopback address {0} without authentication: \
         pass --ws-auth capability-token --ws-token-file PATH (or --ws-auth signed-bearer-token)"
    )]
    UnauthenticatedBind(SocketAddr),
    /// `--strict-config` and the config file has keys Weft does not know.
    #[error(
        "failed to load configuration: {}: unknown configuration field{} {} (--strict-config)",
        .path.display(),
        if .keys.len() == 1 { "" } else { "s" },
        .keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
    )]
    StrictConfig {
        /// The config file.
        path: PathBuf,
        /// The keys it does not know.
        keys: Vec<String>,
    },
    /// `--startup-client-info` is not a `ClientInfo` object.
    #[error("invalid --startup-client-info: {0}")]
    StartupClientInfo(#[source] serde_json::Error),
    /// `--print-startup-config` could not write to stdout.
    #[error("cannot print the start-up config: {0}")]
    Print(#[source] std::io::Error),
    /// The config file or a `-c` override is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `$WEFT_HOME` cannot be created.
    #[error("cannot create home directory {}: {source}", .path.display())]
    Home {
        /// The home directory.
        path: PathBuf,
        /// Why it cannot be created.
        source: std::io::Error,
    },
    /// The async runtime cannot start.
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The thread manager (state database, rollouts) cannot open.
    #[error("{0}")]
    Threads(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The WebSocket listener cannot bind.
    #[error("cannot listen on ws://{addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why binding failed.
        source: std::io::Error,
    },
    /// The WebSocket server stopped with an error.
    #[error("websocket server failed: {0}")]
    WebSocket(#[source] std::io::Error),
    /// The `unix://` control socket cannot be bound (in use, not a socket, …).
    #[error("cannot listen on unix://{}: {source}", .path.display())]
    UnixBind {
        /// The socket path.
        path: PathBuf,
        /// Why binding failed.
        source: std::io::Error,
    },
}

impl StartError {
    /// The process exit code for this error: 2 for bad flags or config, 1 for anything else
    /// (cannot bind, cannot create the home…).
    pub fn exit_code(&self) -> u8 {
        match self {
            StartError::Listen(_)
            | StartError::WsAuth(_)
            | StartError::UnauthenticatedBind(_)
            | StartError::StrictConfig { .. }
            | StartError::StartupClientInfo(_)
            | StartError::Config(_) => 2,
            StartError::Print(_) => 1,
            StartError::Home { .. }
            | StartError::Runtime(_)
            | StartError::Threads(_)
            | StartError::Bind { .. }
            | StartError::WebSocket(_)
            | StartError::UnixBind { .. } => 1,
        }
    }
}

/// The transport `--listen` resolved to.
enum Transport {
    Stdio,
    Ws(WsOptions),
    /// The control socket; `None` for the default path under the home.
    Unix(Option<PathBuf>),
    Off,
}

/// Start the daemon with these arguments and run until shutdown.
pub fn run(args: AppServerArgs) -> Result<(), StartError> {
    if let Some(info) = &args.startup_client_info {
        let info: weft_protocol::initialize::ClientInfo =
            serde_json::from_str(info).map_err(StartError::StartupClientInfo)?;
        tracing::info!(client = %info.name, version = %info.version, "launched by this client");
    }
    if let Some(path) = &args.cloud_skills_snapshot {
        tracing::warn!(
            "ignoring --cloud-skills-snapshot {}: Weft has no cloud skill service",
            path.display()
        );
    }
    if let Some(url) = &args.code_mode_host {
        tracing::warn!("ignoring --code-mode-host {url}: Weft has no code-mode host");
    }
    let transport = match Listen::parse(args.listen_url())? {
        Listen::Stdio => Transport::Stdio,
        Listen::Ws(addr) => Transport::Ws(ws_options(&args, addr)?),
        Listen::Unix(path) => {
            // As in the reference: the socket file's mode is the authentication.
            if args.ws_auth.is_some() {
                tracing::warn!(
                    "ignoring --ws-auth on unix://: the socket file's mode (0600) is its authentication"
                );
            }
            Transport::Unix(path)
        }
        Listen::Off => Transport::Off,
    };
    let home = Config::default_home();
    std::fs::create_dir_all(&home).map_err(|source| StartError::Home {
        path: home.clone(),
        source,
    })?;
    let home = std::fs::canonicalize(&home).unwrap_or(home);
    let (config, report) = Config::load(&home, &args.overrides())?;
    if args.strict_config && !report.ignored_file_keys.is_empty() {
        return Err(StartError::StrictConfig {
            path: config.layers.file_path.clone(),
            keys: report.ignored_file_keys,
        });
    }
    if args.print_startup_config {
        return print_startup_config();
    }
    for key in &report.ignored_override_keys {
        tracing::warn!("ignoring unknown config key or feature `{key}`");
    }
    for key in &report.ignored_file_keys {
        tracing::debug!("ignoring unknown config key `{key}`");
    }
    for warning in &config.hooks.warnings {
        tracing::warn!("{warning}");
    }
    for error in &config.hooks.errors {
        tracing::warn!(
            "{}: {}; no stop hooks from it run",
            error.path,
            error.message
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(StartError::Runtime)?;
    let result = runtime.block_on(serve(config, transport));
    // A blocking read of stdin may still be parked on a runtime thread; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}

/// `--print-startup-config`: the config loaded (so it is valid), print what a client would
/// read at start (`configRequirements/read`) with Weft's version, as one JSON line.
fn print_startup_config() -> Result<(), StartError> {
    use std::io::Write;
    let line = serde_json::json!({
        "appServerVersion": env!("CARGO_PKG_VERSION"),
        "configRequirements": crate::handlers::config::requirements(),
    });
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .map_err(StartError::Print)
}

/// Resolve the WebSocket options for `addr`, refusing a non-loopback bind without auth.
fn ws_options(args: &AppServerArgs, addr: SocketAddr) -> Result<WsOptions, StartError> {
    let auth = WsAuth::from_args(args)?;
    if !auth.is_required() && !addr.ip().is_loopback() {
        return Err(StartError::UnauthenticatedBind(addr));
    }
    Ok(WsOptions { addr, auth })
}

/// The daemon without its transport: request processing and everything it serves. The
/// transports (or an in-process test, over `transport::lines`) feed its [`Ingress`].
pub struct Daemon {
    /// What every connection and handler shares.
    pub state: Arc<AppState>,
    /// The way into request processing.
    pub ingress: Ingress,
    /// Cancelled to shut the daemon down; every connection's `closed` token is its child.
    pub shutdown: CancellationToken,
    processor: JoinHandle<()>,
    db_failure: Arc<parking_lot::Mutex<Option<StateError>>>,
}

/// Open the thread manager and start request processing with `config`.
pub async fn start(config: Config) -> Result<Daemon, StartError> {
    let shutdown = CancellationToken::new();
    let config = Arc::new(config);
    let subscriptions = Arc::new(crate::subscriptions::Subscriptions::new(
        Arc::default(),
        Arc::default(),
    ));
    let threads = ThreadManager::open(config.clone(), subscriptions.clone())
        .await
        .map_err(|err| StartError::Threads(err.into()))?;
    // The state DB opens while the transport starts (`initialize` does not wait for it); a
    // DB that cannot be opened stops the daemon as it did before it served anything.
    let db_failure = Arc::new(parking_lot::Mutex::new(None));
    if let Some(db) = threads.services().state.clone() {
        let (failure, shutdown) = (db_failure.clone(), shutdown.clone());
        tokio::spawn(async move {
            match db.ready().await {
                // The kernel's sandboxing support is probed once per process: here, once the
                // start-up's DB work is done (not beside it, nor on the first thread's path).
                Ok(()) => drop(tokio::task::spawn_blocking(
                    weft_core::sandbox::sandbox_support,
                )),
                Err(err) => {
                    tracing::error!(%err, "cannot open the state DB; shutting down");
                    *failure.lock() = Some(err);
                    shutdown.cancel();
                }
            }
        });
    }
    let state = Arc::new(AppState::new(config, threads.clone(), subscriptions));
    tokio::spawn(unload_idle_threads(state.clone(), shutdown.clone()));
    // `[mcp] eager_start`: every enabled MCP server now, not with the first thread.
    let mcp = &state.threads.services().mcp;
    if mcp.eager_start {
        mcp.start_all();
    }
    let (ingress, events) = Ingress::new(state.connections.clone());
    let processor = tokio::spawn(processor::run(state.clone(), events));
    Ok(Daemon {
        state,
        ingress,
        shutdown,
        processor,
        db_failure,
    })
}

impl Daemon {
    /// What bounds one line connection (stdio, or an in-memory pair), from `[limits]`. The
    /// transports return once their connections are closed and their handler tasks drained,
    /// each within the shutdown grace.
    pub fn line_limits(&self) -> LineLimits {
        let limits = &self.state.config.limits;
        LineLimits {
            max_line_bytes: limits.max_message_bytes,
            shutdown_grace: Duration::from_secs(limits.shutdown_grace_secs),
            connection: self.connection_limits(),
            stall: Duration::from_secs(limits.outbound_stall_secs),
        }
    }

    /// What bounds the WebSocket listener and its connections, from `[limits]`.
    pub fn ws_limits(&self) -> WsLimits {
        let limits = &self.state.config.limits;
        WsLimits {
            max_message_bytes: limits.max_message_bytes,
            max_connections: limits.max_connections,
            handshake_timeout: Duration::from_secs(limits.handshake_timeout_secs),
            connection: self.connection_limits(),
            stall: Duration::from_secs(limits.outbound_stall_secs),
            shutdown_grace: Duration::from_secs(limits.shutdown_grace_secs),
        }
    }

    fn connection_limits(&self) -> ConnectionLimits {
        let limits = &self.state.config.limits;
        ConnectionLimits {
            queue: QueueLimits {
                messages: limits.outbound_queue_messages,
                bytes: limits.outbound_queue_bytes,
            },
            max_running: limits.max_running_requests,
        }
    }

    /// Shut down, once the transports have returned: processing stops, the threads and the
    /// MCP servers are shut down. An error if the state DB could not be opened.
    pub async fn stop(self) -> Result<(), StartError> {
        self.shutdown.cancel();
        self.processor.abort();
        self.state.threads.shutdown().await;
        // Every MCP server the daemon started: SIGTERM, then SIGKILL after the grace.
        self.state.threads.services().mcp.shutdown().await;
        tracing::info!("shut down");
        match self.db_failure.lock().take() {
            Some(err) => Err(StartError::Threads(err.into())),
            None => Ok(()),
        }
    }
}

async fn serve(config: Config, transport: Transport) -> Result<(), StartError> {
    let daemon = start(config).await?;
    let shutdown = daemon.shutdown.clone();
    tokio::spawn(shutdown_on_signal(shutdown.clone()));
    let ingress = daemon.ingress.clone();
    match transport {
        Transport::Stdio => {
            transport::stdio::serve(ingress, shutdown, daemon.line_limits()).await;
        }
        Transport::Ws(options) => {
            let listener =
                transport::ws::bind(&options)
                    .await
                    .map_err(|source| StartError::Bind {
                        addr: options.addr,
                        source,
                    })?;
            let limits = daemon.ws_limits();
            let web = web_access(&daemon.state.config, &listener);
            transport::ws::serve(listener, options, limits, web, ingress, shutdown)
                .await
                .map_err(StartError::WebSocket)?;
        }
        Transport::Unix(path) => {
            let path = path
                .unwrap_or_else(|| transport::unix::default_socket_path(&daemon.state.config.home));
            let socket = transport::unix::ControlSocket::bind(&path)
                .await
                .map_err(|source| StartError::UnixBind { path, source })?;
            transport::unix::serve(socket, daemon.ws_limits(), ingress, shutdown)
                .await
                .map_err(StartError::WebSocket)?;
        }
        Transport::Off => {
            tracing::info!("listening: off (no transport); waiting for a signal");
            drop(ingress);
            shutdown.cancelled().await;
        }
    }
    daemon.stop().await
}

/// The web access of a WebSocket listener, with `[web] enabled`: a fresh sign-in token,
/// whose URL goes to stdout and `$WEFT_HOME/web-sign-in.url`, never to the log.
fn web_access(config: &Config, listener: &tokio::net::TcpListener) -> Option<Arc<WebAccess>> {
    if !config.web.enabled {
        return None;
    }
    let bound = listener.local_addr().ok()?;
    let web = match WebAccess::new(&config.web, bound) {
        Ok(web) => web,
        Err(err) => {
            tracing::warn!(%err, "web client off: the system has no random source for its token");
            return None;
        }
    };
    match web.write_sign_in_file(&config.home) {
        Ok(path) => tracing::info!(
            "web client at {} (sign-in URL on stdout and in {})",
            web.home_url(),
            path.display()
        ),
        Err(err) => tracing::warn!(
            %err,
            "web client at {} (sign-in URL on stdout; cannot write it under the home)",
            web.home_url()
        ),
    }
    // In WebSocket mode stdout carries no protocol: it is where the sign-in URL goes, apart
    // from the log on stderr.
    #[allow(clippy::print_stdout)]
    {
        println!("weft: open the web client: {}", web.sign_in_url());
    }
    Some(Arc::new(web))
}

/// Every so often, unload threads nobody listens to and nothing runs in.
async fn unload_idle_threads(state: Arc<AppState>, shutdown: CancellationToken) {
    let idle = Duration::from_secs(state.config.thread_idle_timeout_secs.max(1));
    let period = (idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(30));
    loop {
        tokio::select! {
            () = tokio::time::sleep(period) => state.unload_idle_threads(idle).await,
            () = shutdown.cancelled() => return,
        }
    }
}

async fn shutdown_on_signal(shutdown: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::warn!("cannot install signal handlers");
        return;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received; shutting down"),
        _ = int.recv() => tracing::info!("SIGINT received; shutting down"),
    }
    shutdown.cancel();
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    #[test]
    fn non_loopback_needs_auth() {
        let cli = Cli::try_parse_from(["weft", "app-server"]).unwrap();
        let Command::AppServer(args) = cli.command else {
            panic!("expected app-server");
        };
        let err = ws_options(&args, "0.0.0.0:4500".parse().unwrap()).unwrap_err();
        assert!(err.to_string().contains("--ws-auth"));
        assert!(ws_options(&args, "127.0.0.1:0".parse().unwrap()).is_ok());
    }
}
