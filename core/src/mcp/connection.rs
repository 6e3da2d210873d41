//! One live MCP client session (rmcp): start it over stdio or streamable HTTP, list its tools
//! and resources, call a tool with progress and cancellation, stop it (docs/mcp.md §3).
//!
//! MCP values cross this boundary as JSON (`serde_json::Value`, the wire shape), so the rest
//! of Weft never depends on rmcp's types.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, Implementation, JsonObject,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ReadResourceRequestParams,
    ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use super::config::{McpServerConfig, McpTransport};

/// Why a server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The program could not be spawned.
    #[error("failed to start `{command}`: {source}")]
    Spawn {
        /// The program.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The handshake or the first tool list took longer than `startup_timeout_sec`.
    #[error("MCP server did not start within {0:.1} s")]
    Timeout(f64),
    /// The handshake failed.
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    /// The first `tools/list` failed.
    #[error("listing the MCP server's tools failed: {0}")]
    ListTools(String),
    /// A variable the entry names is not set.
    #[error("environment variable `{0}` is not set")]
    MissingVariable(String),
    /// A header name or value is not valid HTTP.
    #[error("invalid HTTP header `{0}`")]
    Header(String),
}

/// Why a request to a running server failed.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum CallError {
    /// `tool_timeout_sec` passed (a cancellation was sent).
    #[error("timed out after {0:.1} s awaiting the MCP server's answer")]
    Timeout(f64),
    /// The caller gave up (interrupt): a cancellation was sent.
    #[error("MCP tool call was cancelled")]
    Cancelled,
    /// The connection is gone (the server exited or crashed).
    #[error("MCP server connection closed: {0}")]
    Closed(String),
    /// The server answered with an error, or with something that is not the answer.
    #[error("{0}")]
    Protocol(String),
}

/// One MCP progress notification, as JSON-RPC gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The progress so far.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A message, when the server sent one.
    pub message: Option<String>,
}

use super::questions::Questions;
pub use super::questions::{AskFn, Asker, WarnFn};

/// What the client handler shares with the connection.
struct Shared {
    /// The requests in flight, to which the server's questions are attributed.
    questions: Questions,
    /// Progress token → the call waiting for its progress.
    progress: Mutex<HashMap<ProgressToken, tokio::sync::mpsc::UnboundedSender<Progress>>>,
    /// The server's tools (JSON `Tool` objects), refreshed on `list_changed`.
    tools: RwLock<Vec<Value>>,
    /// The server's name (for logs).
    name: String,
}

/// Weft's side of the MCP session.
#[derive(Clone)]
struct Handler {
    shared: Arc<Shared>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.client_info = Implementation::new("weft", env!("CARGO_PKG_VERSION"));
        // Form elicitations are forwarded to the thread's clients (docs/mcp.md §5).
        info.capabilities.elicitation = Some(
            rmcp::model::ElicitationCapability::new()
                .with_form(rmcp::model::FormElicitationCapability::default()),
        );
        info
    }

    /// A question from the server: asked of the clients of the call that asked it, when
    /// Weft can tell which did (`questions.rs`).
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        self.shared.questions.ask(to_json(&request), &context).await
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let sender = self
            .shared
            .progress
            .lock()
            .get(&params.progress_token)
            .cloned();
        if let Some(sender) = sender {
            let _ = sender.send(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        let shared = Arc::clone(&self.shared);
        let peer = context.peer.clone();
        // Not awaited here: the handler runs inside the session's loop, which must go on to
        // deliver the answer of this very request.
        tokio::spawn(async move {
            match peer.list_all_tools().await {
                Ok(tools) => {
                    *shared.tools.write() = tools.iter().map(to_json).collect();
                    tracing::info!(server = %shared.name, count = tools.len(), "MCP tool list changed");
                }
                Err(err) => {
                    tracing::warn!(server = %shared.name, %err, "cannot refresh the MCP tool list");
                }
            }
        });
    }
}

/// A started server.
pub struct McpConnection {
    service: RunningService<RoleClient, Handler>,
    shared: Arc<Shared>,
    /// The child's pid (stdio servers); the child leads its own process group.
    pub pid: Option<u32>,
    /// `serverInfo` of its `initialize` answer (`{name, version, …}`), `null` when it sent none.
    pub server_info: Value,
    /// `instructions` of its `initialize` answer.
    pub instructions: Option<String>,
    /// Whether it offers resources.
    pub has_resources: bool,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field("server", &self.shared.name)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl McpConnection {
    /// Starts the server `config` describes (its environment: `env`, already filtered by the
    /// shell environment policy) and lists its tools, all within `startup_timeout_sec`. One
    /// call may hold `max_questions` open questions of the server; a streamable-HTTP server is
    /// reached with `http`'s client, through OAuth when `credentials` holds tokens for it and
    /// no bearer token is configured (docs/mcp.md §9).
    pub async fn start(
        config: &McpServerConfig,
        env: &[(String, String)],
        max_questions: usize,
        http: &crate::http_client::LazyClient,
        credentials: Option<&Arc<super::credentials::CredentialsFile>>,
    ) -> Result<McpConnection, StartError> {
        let shared = Arc::new(Shared {
            questions: Questions::new(&config.name, max_questions),
            progress: Mutex::new(HashMap::new()),
            tools: RwLock::new(Vec::new()),
            name: config.name.clone(),
        });
        let handler = Handler {
            shared: Arc::clone(&shared),
        };
        let timeout = config.startup_timeout;
        let started = tokio::time::timeout(timeout, async {
            let (service, pid) = match &config.transport {
                McpTransport::Stdio {
                    command,
                    args,
                    env: extra,
                    env_vars,
                    cwd,
                } => {
                    let mut cmd = tokio::process::Command::new(command);
                    cmd.args(args).env_clear().envs(env.iter().cloned());
                    for name in env_vars {
                        if let Some(value) = std::env::var_os(name) {
                            cmd.env(name, value);
                        }
                    }
                    cmd.envs(extra);
                    if let Some(cwd) = cwd {
                        cmd.current_dir(cwd);
                    }
                    cmd.process_group(0).kill_on_drop(true);
                    #[cfg(target_os = "linux")]
                    die_with_the_daemon(&mut cmd);
                    let spawn = |source| StartError::Spawn {
                        command: command.clone(),
                        source,
                    };
                    let (transport, stderr) = TokioChildProcess::builder(cmd)
                        .stderr(Stdio::piped())
                        .spawn()
                        .map_err(spawn)?;
                    let pid = transport.id();
                    if let Some(stderr) = stderr {
                        tokio::spawn(log_stderr(config.name.clone(), stderr));
                    }
                    let service = handler
                        .serve(transport)
                        .await
                        .map_err(|err| StartError::Handshake(err.to_string()))?;
                    (service, pid)
                }
                McpTransport::Http {
                    url,
                    bearer_token_env_var,
                    http_headers,
                    env_http_headers,
                } => {
                    let mut transport_config =
                        StreamableHttpClientTransportConfig::with_uri(url.as_str());
                    if let Some(variable) = bearer_token_env_var {
                        let token = std::env::var(variable)
                            .map_err(|_| StartError::MissingVariable(variable.clone()))?;
                        transport_config.auth_header = Some(token);
                    }
                    let mut headers = http_headers.clone();
                    for (header, variable) in env_http_headers {
                        let value = std::env::var(variable)
                            .map_err(|_| StartError::MissingVariable(variable.clone()))?;
                        headers.insert(header.clone(), value);
                    }
                    for (name, value) in headers {
                        let bad = || StartError::Header(name.clone());
                        let name_parsed = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                            .map_err(|_| bad())?;
                        let value =
                            reqwest::header::HeaderValue::from_str(&value).map_err(|_| bad())?;
                        transport_config.custom_headers.insert(name_parsed, value);
                    }
                    let client = http
                        .get()
                        .map_err(|err| StartError::Handshake(err.to_string()))?;
                    let oauth = match credentials {
                        Some(file)
                            if transport_config.auth_header.is_none()
                                && !transport_config
                                    .custom_headers
                                    .contains_key(&reqwest::header::AUTHORIZATION) =>
                        {
                            super::oauth::authorized_client(config, file, client.clone())
                                .await
                                .map_err(StartError::Handshake)?
                        }
                        _ => None,
                    };
                    let service = match oauth {
                        Some(client) => handler
                            .serve(StreamableHttpClientTransport::with_client(
                                client,
                                transport_config,
                            ))
                            .await
                            .map_err(|err| StartError::Handshake(err.to_string()))?,
                        None => handler
                            .serve(StreamableHttpClientTransport::with_client(
                                client,
                                transport_config,
                            ))
                            .await
                            .map_err(|err| StartError::Handshake(err.to_string()))?,
                    };
                    (service, None)
                }
            };
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|err| StartError::ListTools(err.to_string()))?;
            *shared.tools.write() = tools.iter().map(to_json).collect();
            Ok::<_, StartError>((service, pid))
        })
        .await;
        let (service, pid) = match started {
            Ok(result) => result?,
            Err(_) => return Err(StartError::Timeout(timeout.as_secs_f64())),
        };
        let info = service.peer().peer_info();
        let server_info = info
            .as_ref()
            .and_then(|info| info.server_info.as_ref())
            .map(to_json)
            .unwrap_or(Value::Null);
        let instructions = info.as_ref().and_then(|info| info.instructions.clone());
        let has_resources = info
            .as_ref()
            .is_some_and(|info| info.capabilities.resources.is_some());
        Ok(McpConnection {
            service,
            shared,
            pid,
            server_info,
            instructions,
            has_resources,
        })
    }

    /// The server's tools (MCP `Tool` objects), as last listed.
    pub fn tools(&self) -> Vec<Value> {
        self.shared.tools.read().clone()
    }

    /// Whether the session is over (the process exited, the stream closed).
    pub fn is_closed(&self) -> bool {
        self.service.peer().is_transport_closed() || self.service.is_closed()
    }

    /// Calls `tool`: the `CallToolResult` as JSON. Progress notifications go to `progress`,
    /// the questions the server asks for this call to `asker` (docs/mcp.md §5); `cancel` or
    /// the timeout end the wait and send the server `notifications/cancelled`. When the call
    /// is over, the questions it left open are withdrawn and answered `cancel`.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
        progress: Option<tokio::sync::mpsc::UnboundedSender<Progress>>,
        asker: Option<Asker>,
        cancel: &CancellationToken,
    ) -> Result<Value, CallError> {
        let in_flight = self.shared.questions.begin(asker);
        let result = self
            .call_tool_inner(tool, arguments, timeout, progress, cancel, &in_flight)
            .await;
        in_flight.end().await;
        result
    }

    async fn call_tool_inner(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
        progress: Option<tokio::sync::mpsc::UnboundedSender<Progress>>,
        cancel: &CancellationToken,
        in_flight: &super::questions::InFlightGuard<'_>,
    ) -> Result<Value, CallError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut handle = self
            .service
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|err| CallError::Closed(err.to_string()))?;
        let token = handle.progress_token.clone();
        in_flight.sent(handle.id.clone(), token.clone());
        if let Some(progress) = progress {
            self.shared.progress.lock().insert(token.clone(), progress);
        }
        let outcome = tokio::select! {
            answer = &mut handle.rx => Some(answer),
            () = cancel.cancelled() => None,
            () = tokio::time::sleep(timeout) => {
                self.shared.progress.lock().remove(&token);
                let _ = handle.cancel(Some("timeout".into())).await;
                return Err(CallError::Timeout(timeout.as_secs_f64()));
            }
        };
        self.shared.progress.lock().remove(&token);
        let Some(answer) = outcome else {
            let _ = handle.cancel(Some("cancelled by the user".into())).await;
            return Err(CallError::Cancelled);
        };
        match answer {
            Err(_) => Err(CallError::Closed("the server went away".into())),
            Ok(Err(err)) => Err(service_error(err)),
            Ok(Ok(ServerResult::CallToolResult(result))) => Ok(to_json(&result)),
            Ok(Ok(_)) => Err(CallError::Protocol(
                "the MCP server answered tools/call with something else".into(),
            )),
        }
    }

    /// `resources/list` (one page).
    pub async fn list_resources(&self, cursor: Option<String>) -> Result<Value, CallError> {
        self.resource_request(self.service.peer().list_resources(page_params(cursor)))
            .await
    }

    /// `resources/templates/list` (one page).
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<Value, CallError> {
        self.resource_request(
            self.service
                .peer()
                .list_resource_templates(page_params(cursor)),
        )
        .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, CallError> {
        self.resource_request(
            self.service
                .peer()
                .read_resource(ReadResourceRequestParams::new(uri.to_string())),
        )
        .await
    }

    /// Run a resource request (counted in flight until it is answered); its answer as JSON.
    async fn resource_request<T: serde::Serialize>(
        &self,
        request: impl Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<Value, CallError> {
        let _in_flight = self.shared.questions.begin(None);
        request
            .await
            .map(|answer| to_json(&answer))
            .map_err(service_error)
    }

    /// Ends the session: closes the transport, then SIGTERM to the server's process group,
    /// then SIGKILL after `grace`.
    pub async fn stop(mut self, grace: Duration) {
        let _ = tokio::time::timeout(grace, self.service.close()).await;
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|pid| i32::try_from(pid).ok()) {
            use nix::sys::signal::{Signal, killpg};
            use nix::unistd::Pid;
            let group = Pid::from_raw(pid);
            if killpg(group, Signal::SIGTERM).is_ok() {
                let deadline = tokio::time::Instant::now() + grace;
                while tokio::time::Instant::now() < deadline {
                    if killpg(group, None).is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                let _ = killpg(group, Signal::SIGKILL);
            }
        }
    }
}

/// The params of a list request: the cursor of the page, none for the first.
fn page_params(cursor: Option<String>) -> Option<PaginatedRequestParams> {
    cursor.map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)))
}

fn service_error(err: rmcp::ServiceError) -> CallError {
    match err {
        rmcp::ServiceError::McpError(data) => CallError::Protocol(data.message.to_string()),
        rmcp::ServiceError::TransportClosed => CallError::Closed("the server went away".into()),
        other => CallError::Protocol(other.to_string()),
    }
}

/// Any serializable rmcp value as JSON (`null` if it cannot be; it always can).
fn to_json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The server's stderr, line by line, at debug level (it is the server's log, not ours).
async fn log_stderr(name: String, stderr: tokio::process::ChildStderr) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %name, "mcp stderr: {line}");
    }
}

/// The child gets SIGTERM when the daemon dies, even by SIGKILL, so no server outlives it
/// (docs/mcp.md §3). The signal is tied to the spawning thread; tokio's worker threads live
/// as long as the runtime.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_the_daemon(cmd: &mut tokio::process::Command) {
    // SAFETY: the hook runs in the forked child before `exec` and makes one system call
    // (`prctl`) on no shared data, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM))?;
            Ok(())
        });
    }
}
