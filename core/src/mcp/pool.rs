//! The daemon's one pool of MCP servers, shared by every thread (docs/mcp.md §3): each
//! configured server is started once — on the first thread that needs it — and its session,
//! tool list and status are everyone's. A server that fails to start is retried with backoff
//! when next needed; one that exits or crashes is marked failed and restarted with backoff;
//! stopping the daemon stops every server.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::{McpServerConfig, McpServers};
use super::connection::McpConnection;
use super::names::model_names;

/// The first retry after a failure waits this long; each further failure doubles it.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How often a running server's session is checked for having ended.
const WATCH_INTERVAL: Duration = Duration::from_millis(200);

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// Configured, not started yet (no thread has needed it).
    Idle,
    /// Being started.
    Starting,
    /// Running, tools listed.
    Ready,
    /// The last start failed, or the running server went away; retried after `retry_at`.
    Failed {
        /// What went wrong (one line).
        error: String,
        /// Not retried before this.
        retry_at: Instant,
        /// Failures in a row.
        attempts: u32,
    },
    /// `enabled = false`.
    Disabled,
}

/// One configured server and its session.
#[derive(Debug)]
pub struct Server {
    /// Its entry.
    pub config: McpServerConfig,
    /// Serialises starts, so concurrent first uses start it once.
    starting: tokio::sync::Mutex<()>,
    /// The running session.
    current: RwLock<Option<Arc<McpConnection>>>,
    /// Where it is.
    status: RwLock<ServerStatus>,
    /// What the last warning said was renamed or dropped of its tool list (warned once).
    name_notes: parking_lot::Mutex<Vec<String>>,
}

/// A running server's tools, as a step offers them.
#[derive(Debug, Clone)]
pub struct OfferedServer {
    /// Its entry.
    pub config: McpServerConfig,
    /// `instructions` of its `initialize` answer.
    pub instructions: Option<String>,
    /// Its tools (MCP `Tool` JSON), filtered by `enabled_tools` / `disabled_tools`, each
    /// `name` as the model sees it (docs/mcp.md §4, "Tool names").
    pub tools: Vec<serde_json::Value>,
    /// The model's name → the server's, for the tools whose names were changed.
    pub renamed: BTreeMap<String, String>,
}

impl OfferedServer {
    /// The server's own name of the tool the model calls `name`.
    pub fn server_tool_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.renamed.get(name).map_or(name, String::as_str)
    }
}

/// The pool.
#[derive(Debug)]
pub struct McpPool {
    servers: RwLock<BTreeMap<String, Arc<Server>>>,
    invalid: RwLock<BTreeMap<String, String>>,
    /// `[mcp] eager_start`.
    pub eager_start: bool,
    env: Vec<(String, String)>,
    /// Fired by [`McpPool::shutdown`]: watchers end, nothing starts any more.
    closed: CancellationToken,
    /// Seconds a stopping server gets between SIGTERM and SIGKILL.
    grace: Duration,
    /// `[limits] max_mcp_questions_per_call`.
    max_questions: usize,
    /// The client of every streamable-HTTP server, from the daemon's `[http]`.
    http: crate::http_client::LazyClient,
    /// The OAuth tokens of streamable-HTTP servers (`None`: no home, no OAuth).
    credentials: Option<Arc<super::credentials::CredentialsFile>>,
    /// One permit per login waiting for its browser (`[limits] max_mcp_oauth_logins`).
    oauth_logins: Arc<tokio::sync::Semaphore>,
}

impl McpPool {
    /// A pool of the configured servers (nothing is started yet). `env` is the environment
    /// every stdio server gets (the shell environment policy's), before its entry's `env`;
    /// `limits` gives the stop grace and how many questions one call may leave open; OAuth
    /// tokens are kept under `home` (docs/mcp.md §9).
    pub fn new(
        servers: McpServers,
        env: Vec<(String, String)>,
        limits: &crate::limits::Limits,
        http: &crate::http_client::HttpConfig,
        home: Option<&std::path::Path>,
    ) -> Arc<McpPool> {
        let pool = McpPool {
            servers: RwLock::new(BTreeMap::new()),
            invalid: RwLock::new(servers.invalid.clone()),
            eager_start: servers.eager_start,
            env,
            closed: CancellationToken::new(),
            grace: Duration::from_secs(limits.shutdown_grace_secs.max(1)),
            max_questions: limits.max_mcp_questions_per_call,
            http: crate::http_client::LazyClient::new(http, crate::http_client::HttpUse::Mcp),
            credentials: home.map(super::credentials::CredentialsFile::in_home),
            oauth_logins: Arc::new(tokio::sync::Semaphore::new(limits.max_mcp_oauth_logins)),
        };
        for warning in &servers.warnings {
            tracing::warn!("{warning}");
        }
        *pool.servers.write() = servers
            .servers
            .into_values()
            .map(|config| (config.name.clone(), Arc::new(Server::new(config))))
            .collect();
        Arc::new(pool)
    }

    /// A pool with no servers.
    pub fn empty() -> Arc<McpPool> {
        McpPool::new(
            McpServers::default(),
            Vec::new(),
            &crate::limits::Limits::default(),
            &crate::http_client::HttpConfig::default(),
            None,
        )
    }

    /// The OAuth credentials file, when the pool has a home.
    pub fn credentials(&self) -> Option<&Arc<super::credentials::CredentialsFile>> {
        self.credentials.as_ref()
    }

    /// A place for one more OAuth login waiting for its browser (held until it ends), or
    /// `None` when `[limits] max_mcp_oauth_logins` are already waiting.
    pub fn oauth_login_slot(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        Arc::clone(&self.oauth_logins).try_acquire_owned().ok()
    }

    /// Stops `name`'s session, if running, and forgets a failed start's backoff: the next use
    /// starts it again (after an OAuth login, with the new tokens).
    pub async fn renew(&self, name: &str) {
        let Some(server) = self.server(name) else {
            return;
        };
        let _starting = server.starting.lock().await;
        if let Some(connection) = server.take() {
            stop(connection, self.grace).await;
        }
        if server.config.enabled {
            server.set_status(ServerStatus::Idle);
        }
    }

    /// The configured servers, by name.
    pub fn servers(&self) -> Vec<Arc<Server>> {
        self.servers.read().values().cloned().collect()
    }

    /// One server.
    pub fn server(&self, name: &str) -> Option<Arc<Server>> {
        self.servers.read().get(name).cloned()
    }

    /// Whether any server is configured and enabled.
    pub fn has_servers(&self) -> bool {
        self.servers
            .read()
            .values()
            .any(|server| server.config.enabled)
    }

    /// The entries left out of the config, by name: why.
    pub fn invalid(&self) -> BTreeMap<String, String> {
        self.invalid.read().clone()
    }

    /// The running session of `name`, starting it if needed (once, however many ask at
    /// the same time). A server that failed is not retried before its backoff has passed.
    pub async fn connect(self: &Arc<Self>, name: &str) -> Result<Arc<McpConnection>, String> {
        let server = self
            .server(name)
            .ok_or_else(|| format!("unknown MCP server '{name}'"))?;
        if !server.config.enabled {
            return Err(format!("MCP server '{name}' is disabled"));
        }
        if let Some(connection) = server.live() {
            return Ok(connection);
        }
        let _starting = server.starting.lock().await;
        if let Some(connection) = server.live() {
            return Ok(connection);
        }
        if self.closed.is_cancelled() {
            return Err("the daemon is shutting down".into());
        }
        let attempts = match &*server.status.read() {
            ServerStatus::Failed {
                error,
                retry_at,
                attempts,
            } => {
                if Instant::now() < *retry_at {
                    return Err(error.clone());
                }
                *attempts
            }
            _ => 0,
        };
        server.set_status(ServerStatus::Starting);
        let started = McpConnection::start(
            &server.config,
            &self.env,
            self.max_questions,
            &self.http,
            self.credentials.as_ref(),
        )
        .await;
        match started {
            Ok(connection) => {
                let connection = Arc::new(connection);
                *server.current.write() = Some(Arc::clone(&connection));
                server.set_status(ServerStatus::Ready);
                tracing::info!(server = %name, pid = ?connection.pid, "MCP server ready");
                tokio::spawn(watch(
                    Arc::clone(self),
                    Arc::clone(&server),
                    Arc::clone(&connection),
                ));
                Ok(connection)
            }
            Err(err) => {
                let error = err.to_string();
                if server.config.required {
                    tracing::error!(server = %name, %error, "required MCP server failed to start");
                } else {
                    tracing::warn!(server = %name, %error, "MCP server failed to start");
                }
                server.set_status(failed(error.clone(), attempts + 1));
                Err(error)
            }
        }
    }

    /// Starts every enabled server that is not running, in the background.
    pub fn start_all(self: &Arc<Self>) {
        for server in self.servers() {
            if server.config.enabled && server.live().is_none() {
                let pool = Arc::clone(self);
                tokio::spawn(async move {
                    let _ = pool.connect(&server.config.name).await;
                });
            }
        }
    }

    /// Waits until every enabled server is ready or has failed (each within its own start-up
    /// timeout): a turn's first step offers what is there then.
    pub async fn settle(self: &Arc<Self>) {
        let names: Vec<String> = self
            .servers()
            .into_iter()
            .filter(|server| server.config.enabled)
            .map(|server| server.config.name.clone())
            .collect();
        futures::future::join_all(names.iter().map(|name| self.connect(name))).await;
    }

    /// The running servers' tools, for a step.
    pub fn offered(&self) -> Vec<OfferedServer> {
        self.servers()
            .into_iter()
            .filter_map(|server| {
                let connection = server.live()?;
                let tools = connection
                    .tools()
                    .into_iter()
                    .filter(|tool| {
                        tool.get("name")
                            .and_then(serde_json::Value::as_str)
                            .is_some_and(|name| server.config.tool_allowed(name))
                    })
                    .collect();
                let names = model_names(tools);
                server.warn_names(&names.notes);
                Some(OfferedServer {
                    config: server.config.clone(),
                    instructions: connection.instructions.clone(),
                    tools: names.tools,
                    renamed: names.renamed,
                })
            })
            .collect()
    }

    /// Replaces the configuration (`config/mcpServer/reload`): servers whose entry changed
    /// or went away are stopped, new and changed ones start when next needed. Returns the
    /// names of the servers stopped.
    pub async fn reload(self: &Arc<Self>, servers: McpServers) -> Vec<String> {
        *self.invalid.write() = servers.invalid.clone();
        for warning in &servers.warnings {
            tracing::warn!("{warning}");
        }
        let mut stopped = Vec::new();
        let mut next = BTreeMap::new();
        let old = std::mem::take(&mut *self.servers.write());
        for (name, server) in old {
            match servers.servers.get(&name) {
                Some(config) if *config == server.config => {
                    next.insert(name, server);
                }
                _ => {
                    if let Some(connection) = server.take() {
                        stopped.push(name.clone());
                        stop(connection, self.grace).await;
                    }
                }
            }
        }
        for (name, config) in servers.servers {
            next.entry(name)
                .or_insert_with(|| Arc::new(Server::new(config)));
        }
        *self.servers.write() = next;
        stopped
    }

    /// Stops every server (SIGTERM, then SIGKILL after the grace) and starts no more.
    pub async fn shutdown(&self) {
        self.closed.cancel();
        let connections: Vec<Arc<McpConnection>> = self
            .servers()
            .iter()
            .filter_map(|server| server.take())
            .collect();
        futures::future::join_all(
            connections
                .into_iter()
                .map(|connection| stop(connection, self.grace)),
        )
        .await;
    }
}

impl Server {
    fn new(config: McpServerConfig) -> Server {
        let status = if config.enabled {
            ServerStatus::Idle
        } else {
            ServerStatus::Disabled
        };
        Server {
            config,
            starting: tokio::sync::Mutex::new(()),
            current: RwLock::new(None),
            status: RwLock::new(status),
            name_notes: parking_lot::Mutex::new(Vec::new()),
        }
    }

    /// Logs what was renamed or dropped of the tool list, once for each list that needs it.
    fn warn_names(&self, notes: &[String]) {
        let mut warned = self.name_notes.lock();
        if warned.as_slice() == notes {
            return;
        }
        *warned = notes.to_vec();
        if !notes.is_empty() {
            tracing::warn!(
                server = %self.config.name,
                "MCP server `{}`: tool names the model API refuses: {}",
                self.config.name,
                notes.join("; ")
            );
        }
    }

    /// Where it is.
    pub fn status(&self) -> ServerStatus {
        self.status.read().clone()
    }

    fn set_status(&self, status: ServerStatus) {
        *self.status.write() = status;
    }

    /// The session, if it is running.
    pub fn live(&self) -> Option<Arc<McpConnection>> {
        self.current
            .read()
            .as_ref()
            .filter(|connection| !connection.is_closed())
            .cloned()
    }

    fn take(&self) -> Option<Arc<McpConnection>> {
        self.current.write().take()
    }
}

fn failed(error: String, attempts: u32) -> ServerStatus {
    let backoff = FIRST_BACKOFF
        .saturating_mul(1 << attempts.saturating_sub(1).min(10))
        .min(MAX_BACKOFF);
    ServerStatus::Failed {
        error,
        retry_at: Instant::now() + backoff,
        attempts,
    }
}

/// Stops a session once the last holder lets go of it (calls in flight keep their `Arc`).
async fn stop(connection: Arc<McpConnection>, grace: Duration) {
    match Arc::try_unwrap(connection) {
        Ok(connection) => connection.stop(grace).await,
        Err(shared) => {
            // Still used by a call: kill the group now; the session ends with it.
            #[cfg(unix)]
            if let Some(pid) = shared.pid.and_then(|pid| i32::try_from(pid).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGTERM,
                );
            }
        }
    }
}

/// Notices the end of a running session: the server is marked failed and, after its backoff,
/// started again.
async fn watch(pool: Arc<McpPool>, server: Arc<Server>, connection: Arc<McpConnection>) {
    loop {
        tokio::select! {
            () = pool.closed.cancelled() => return,
            () = tokio::time::sleep(WATCH_INTERVAL) => {}
        }
        let current = server.current.read().clone();
        match current {
            Some(current) if Arc::ptr_eq(&current, &connection) => {
                if connection.is_closed() {
                    break;
                }
            }
            // Replaced or stopped (reload, shutdown): not ours to watch any more.
            _ => return,
        }
    }
    let name = server.config.name.clone();
    tracing::warn!(server = %name, "MCP server exited; restarting it");
    server.take();
    drop(connection);
    let status = failed("MCP server exited".into(), 1);
    let ServerStatus::Failed { retry_at, .. } = &status else {
        return;
    };
    let retry_at = *retry_at;
    server.set_status(status);
    tokio::select! {
        () = pool.closed.cancelled() => {}
        () = tokio::time::sleep_until(retry_at) => restart(pool, name).await,
    }
}

/// `connect` again, boxed: `connect` spawns `watch`, so the future type would otherwise
/// contain itself.
fn restart(pool: Arc<McpPool>, name: String) -> futures::future::BoxFuture<'static, ()> {
    Box::pin(async move {
        let _ = pool.connect(&name).await;
    })
}
