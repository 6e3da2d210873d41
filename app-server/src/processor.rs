//! Request processing: the bounded ingress queue, decoding, the `initialize` gate, experimental
//! gating, and dispatch to the handlers. Also the daemon's start-up and shutdown.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde::de::Error as _;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use weft_core::config::Config;
use weft_core::events::ServerRequestOutcome;
use weft_core::thread::ThreadManager;
use weft_protocol::ClientRequest;
use weft_protocol::jsonrpc::{JsonRpcError, RequestId};
use weft_protocol::notifications::{ThreadClosedNotification, ThreadStatusChangedNotification};
use weft_protocol::{ThreadId, ThreadStatus, ThreadUnsubscribeStatus};

use crate::cli::{AppServerArgs, Listen, StartError};
use crate::connection::{Connection, ConnectionId, Session};
use crate::handlers;
use crate::outgoing;
use crate::subscriptions::{Connections, PendingRequests, ThreadSubscribers};
use crate::transport::{self, IncomingMessage};

/// Capacity of the queue between the transports and request processing.
pub const INGRESS_CAPACITY: usize = 128;

/// The methods Weft serves, in the order the unknown-method error lists them.
pub const SERVED_METHODS: &[&str] = &[
    "initialize",
    "thread/start",
    "thread/resume",
    "thread/fork",
    "thread/list",
    "thread/read",
    "thread/loaded/list",
    "thread/archive",
    "thread/unarchive",
    "thread/unsubscribe",
    "thread/name/set",
    "thread/compact/start",
    "turn/start",
    "turn/steer",
    "turn/interrupt",
    "model/list",
];

/// Params that are experimental in the reference (protocol.md §4): rejected without
/// `experimentalApi`, and with it rejected as unsupported, since Weft does not implement them.
const EXPERIMENTAL_PARAMS: &[(&str, &[&str])] = &[
    (
        "thread/start",
        &[
            "dynamicTools",
            "permissions",
            "environments",
            "historyMode",
            "experimentalRawEvents",
            "runtimeWorkspaceRoots",
            "projectId",
            "selectedCapabilityRoots",
            "daybreakEnabled",
            "allowProviderModelFallback",
            "multiAgentMode",
            "mockExperimentalField",
        ],
    ),
    (
        "thread/resume",
        &[
            "history",
            "path",
            "initialTurnsPage",
            "permissions",
            "runtimeWorkspaceRoots",
        ],
    ),
    (
        "thread/fork",
        &[
            "beforeTurnId",
            "path",
            "attachToSource",
            "permissions",
            "runtimeWorkspaceRoots",
            "deferGoalContinuation",
            "experimentalPredictionMode",
            "experimentalDisablePredictionMcp",
        ],
    ),
    (
        "turn/start",
        &[
            "collaborationMode",
            "environments",
            "permissions",
            "additionalContext",
            "cyberAccessProgram",
            "responsesapiClientMetadata",
            "responsesapiClientMetadataPatch",
            "runtimeWorkspaceRoots",
            "multiAgentMode",
        ],
    ),
    (
        "turn/steer",
        &[
            "additionalContext",
            "responsesapiClientMetadata",
            "responsesapiClientMetadataPatch",
        ],
    ),
];

enum IngressEvent {
    Message(Arc<Connection>, IncomingMessage),
    Closed(ConnectionId),
}

/// The transports' handle on request processing. Cheap to clone.
#[derive(Clone)]
pub struct Ingress {
    tx: mpsc::Sender<IngressEvent>,
    state: Arc<AppState>,
}

impl Ingress {
    /// A fresh connection id.
    pub fn next_connection_id(&self) -> ConnectionId {
        self.state.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    /// Register a new connection.
    pub fn opened(&self, connection: Arc<Connection>) {
        self.state.connections.insert(connection);
    }

    /// Hand a message to the processor. A request that finds the queue full is answered at
    /// once with `-32001`; other messages wait for room.
    pub async fn submit(&self, connection: &Arc<Connection>, message: IncomingMessage) {
        match message {
            IncomingMessage::Request { id, method, raw } => {
                let reject_id = id.clone();
                let request = IncomingMessage::Request { id, method, raw };
                let event = IngressEvent::Message(connection.clone(), request);
                if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(event) {
                    tracing::debug!(
                        connection = connection.id,
                        "ingress queue full; rejecting request"
                    );
                    connection.try_send(outgoing::error(&reject_id, &JsonRpcError::overloaded()));
                }
            }
            other => {
                let _ = self
                    .tx
                    .send(IngressEvent::Message(connection.clone(), other))
                    .await;
            }
        }
    }

    /// A connection has closed.
    pub async fn closed(&self, id: ConnectionId) {
        let _ = self.tx.send(IngressEvent::Closed(id)).await;
    }
}

/// State shared by every connection and handler.
pub struct AppState {
    /// The daemon's configuration.
    pub config: Arc<Config>,
    /// Absolute path of `$WEFT_HOME`.
    pub home: PathBuf,
    /// Every open connection.
    pub connections: Arc<Connections>,
    /// Loaded threads.
    pub threads: ThreadManager,
    /// Server → client requests waiting for an answer.
    pub pending_requests: Arc<PendingRequests>,
    subscriptions: Mutex<HashMap<ThreadId, Arc<ThreadSubscribers>>>,
    next_connection: AtomicU64,
}

impl AppState {
    async fn open(config: Config) -> Result<AppState, StartError> {
        let config = Arc::new(config);
        let threads = ThreadManager::open(config.clone())
            .await
            .map_err(|err| StartError::Runtime(err.to_string()))?;
        Ok(AppState {
            home: config.home.clone(),
            threads,
            config,
            connections: Arc::new(Connections::default()),
            pending_requests: Arc::new(PendingRequests::default()),
            subscriptions: Mutex::new(HashMap::new()),
            next_connection: AtomicU64::new(1),
        })
    }

    /// The subscribers of a loaded thread.
    pub fn subscribers_of(&self, id: &ThreadId) -> Option<Arc<ThreadSubscribers>> {
        self.subscriptions.lock().ok()?.get(id).cloned()
    }

    /// Forget an unloaded thread's subscribers (cancelling its pending requests).
    pub fn forget_thread(&self, id: &ThreadId) {
        if let Ok(mut subscriptions) = self.subscriptions.lock() {
            subscriptions.remove(id);
        }
        self.pending_requests.cancel_thread(id);
    }

    /// `thread/unsubscribe` for one connection.
    pub fn unsubscribe(&self, id: &ThreadId, connection: ConnectionId) -> ThreadUnsubscribeStatus {
        match self.subscribers_of(id) {
            None => ThreadUnsubscribeStatus::NotLoaded,
            Some(subscribers) => {
                if subscribers.unsubscribe(connection) {
                    if subscribers.is_empty() {
                        self.pending_requests.cancel_thread(id);
                    }
                    ThreadUnsubscribeStatus::Unsubscribed
                } else {
                    ThreadUnsubscribeStatus::NotSubscribed
                }
            }
        }
    }

    /// Unload every loaded thread that has had no subscriber and no activity for the
    /// configured idle time: `thread/status/changed {notLoaded}` and `thread/closed` go to
    /// everyone.
    async fn unload_idle_threads(&self, idle: std::time::Duration) {
        let candidates: Vec<ThreadId> = self
            .subscriptions
            .lock()
            .map(|s| {
                s.iter()
                    .filter(|(_, subscribers)| subscribers.is_empty())
                    .map(|(id, _)| id.clone())
                    .collect()
            })
            .unwrap_or_default();
        for id in candidates {
            let Some(since) = self.threads.idle_since(&id).await else {
                continue;
            };
            let still_alone = self.subscribers_of(&id).is_some_and(|s| s.is_empty());
            if since.elapsed() < idle || !still_alone {
                continue;
            }
            if !self.threads.unload(&id).await {
                continue;
            }
            self.forget_thread(&id);
            tracing::info!(thread = %id, "unloaded an idle thread with no subscribers");
            self.connections
                .broadcast(
                    &ThreadStatusChangedNotification {
                        thread_id: id.clone(),
                        status: ThreadStatus::NotLoaded,
                    }
                    .into(),
                )
                .await;
            self.connections
                .broadcast(&ThreadClosedNotification { thread_id: id }.into())
                .await;
        }
    }

    /// Remember a loaded thread's subscribers.
    pub fn add_thread(&self, id: ThreadId, subscribers: Arc<ThreadSubscribers>) {
        if let Ok(mut subscriptions) = self.subscriptions.lock() {
            subscriptions.insert(id, subscribers);
        }
    }

    /// A new subscriber list for a thread about to be created.
    pub fn new_subscribers(&self) -> Arc<ThreadSubscribers> {
        ThreadSubscribers::new(&self.connections, &self.pending_requests)
    }

    /// A closed connection is no one's subscriber any more; requests of threads left with no
    /// subscriber are cancelled, so no turn waits for an answer that cannot come.
    fn connection_closed(&self, id: ConnectionId) {
        self.connections.remove(id);
        if let Ok(subscriptions) = self.subscriptions.lock() {
            for (thread_id, subscribers) in subscriptions.iter() {
                if subscribers.unsubscribe(id) && subscribers.is_empty() {
                    self.pending_requests.cancel_thread(thread_id);
                }
            }
        }
    }
}

/// Start the daemon with these arguments and run until shutdown.
pub fn run_app_server(args: AppServerArgs) -> Result<(), StartError> {
    let listen = Listen::parse(&args.listen).map_err(StartError::Usage)?;
    let ws_options = match &listen {
        Listen::Ws(addr) => Some(args.ws_options(*addr)?),
        _ => None,
    };
    let home = Config::default_home();
    std::fs::create_dir_all(&home).map_err(|err| {
        StartError::Runtime(format!(
            "cannot create home directory {}: {err}",
            home.display()
        ))
    })?;
    let home = std::fs::canonicalize(&home).unwrap_or(home);
    let (config, report) =
        Config::load(&home, &args.overrides()).map_err(|err| StartError::Usage(err.to_string()))?;
    for key in &report.ignored_override_keys {
        tracing::warn!("ignoring unknown config key or feature `{key}`");
    }
    for key in &report.ignored_file_keys {
        tracing::debug!("ignoring unknown config key `{key}`");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|err| StartError::Runtime(format!("cannot start the runtime: {err}")))?;
    let result = runtime.block_on(serve(config, listen, ws_options));
    // A blocking read of stdin may still be parked on a runtime thread; do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    result
}

async fn serve(
    config: Config,
    listen: Listen,
    ws_options: Option<transport::ws::WsOptions>,
) -> Result<(), StartError> {
    let shutdown = CancellationToken::new();
    let state = Arc::new(AppState::open(config).await?);
    tokio::spawn(unload_idle_threads(state.clone(), shutdown.clone()));
    let (tx, rx) = mpsc::channel(INGRESS_CAPACITY);
    let ingress = Ingress {
        tx,
        state: state.clone(),
    };
    let processor = tokio::spawn(process(state.clone(), rx));
    tokio::spawn(shutdown_on_signal(shutdown.clone()));
    match listen {
        Listen::Stdio => transport::stdio::serve(ingress, shutdown.clone()).await,
        Listen::Ws(_) => {
            let Some(options) = ws_options else {
                return Err(StartError::Runtime("missing websocket options".into()));
            };
            let listener = transport::ws::bind(&options).await.map_err(|err| {
                StartError::Runtime(format!("cannot listen on ws://{}: {err}", options.addr))
            })?;
            transport::ws::serve(listener, options, ingress, shutdown.clone())
                .await
                .map_err(|err| StartError::Runtime(format!("websocket server failed: {err}")))?;
        }
        Listen::Off => {
            tracing::info!("listening: off (no transport); waiting for a signal");
            drop(ingress);
            shutdown.cancelled().await;
        }
    }
    shutdown.cancel();
    processor.abort();
    state.threads.shutdown().await;
    tracing::info!("shut down");
    Ok(())
}

/// Every so often, unload threads nobody listens to and nothing runs in.
async fn unload_idle_threads(state: Arc<AppState>, shutdown: CancellationToken) {
    let idle = std::time::Duration::from_secs(state.config.thread_idle_timeout_secs.max(1));
    let period = (idle / 4).clamp(
        std::time::Duration::from_millis(250),
        std::time::Duration::from_secs(30),
    );
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

/// The processing loop: one message at a time, in arrival order. Handlers that wait on a
/// thread run in their own tasks so one slow request never holds up the rest.
async fn process(state: Arc<AppState>, mut rx: mpsc::Receiver<IngressEvent>) {
    while let Some(event) = rx.recv().await {
        match event {
            IngressEvent::Message(connection, message) => match message {
                IncomingMessage::Request { id, method, raw } => {
                    handle_request(&state, &connection, id, &method, raw).await;
                }
                IncomingMessage::Notification { method } => {
                    if method != "initialized" {
                        tracing::debug!(connection = connection.id, %method, "ignoring client notification");
                    }
                }
                IncomingMessage::Response { id, raw } => {
                    let outcome = match raw.get("error") {
                        Some(error) => ServerRequestOutcome::Failed(
                            error
                                .get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("error response")
                                .to_string(),
                        ),
                        None => ServerRequestOutcome::Answered(
                            raw.get("result").cloned().unwrap_or(Value::Null),
                        ),
                    };
                    if !state.pending_requests.resolve(&id, outcome) {
                        tracing::warn!(connection = connection.id, %id, "response to an unknown or already answered server request; dropped");
                    }
                }
            },
            IngressEvent::Closed(id) => state.connection_closed(id),
        }
    }
}

async fn handle_request(
    state: &Arc<AppState>,
    connection: &Arc<Connection>,
    id: RequestId,
    method: &str,
    raw: Value,
) {
    let request = match decode(method, &raw) {
        Ok(request) => request,
        Err(err) => {
            connection.send(outgoing::error(&id, &err)).await;
            return;
        }
    };
    let is_initialize = matches!(request, ClientRequest::Initialize { .. });
    let Some(session) = connection.session() else {
        if is_initialize {
            handlers::initialize(state, connection, request).await;
        } else {
            let err = JsonRpcError::invalid_request("Not initialized");
            connection.send(outgoing::error(&id, &err)).await;
        }
        return;
    };
    if is_initialize {
        let err = JsonRpcError::invalid_request("Already initialized");
        connection.send(outgoing::error(&id, &err)).await;
        return;
    }
    if let Some(err) = experimental_gate(method, &raw, session.experimental_api) {
        connection.send(outgoing::error(&id, &err)).await;
        return;
    }
    if matches!(
        request,
        ClientRequest::TurnStart { .. }
            | ClientRequest::TurnSteer { .. }
            | ClientRequest::TurnInterrupt { .. }
            | ClientRequest::ThreadCompactStart { .. }
    ) {
        handlers::submit_to_thread(state, connection, request).await;
        return;
    }
    let state = state.clone();
    let connection = connection.clone();
    tokio::spawn(async move { handlers::dispatch(&state, &connection, request).await });
}

/// Decode method and params together, with serde's wording, as the reference does.
fn decode(method: &str, raw: &Value) -> Result<ClientRequest, JsonRpcError> {
    if !SERVED_METHODS.contains(&method) {
        let err = serde_json::Error::unknown_variant(method, SERVED_METHODS);
        return Err(JsonRpcError::invalid_request(format!(
            "Invalid request: {err}"
        )));
    }
    if raw.get("params").is_some_and(Value::is_null) {
        // The reference treats `"params": null` as missing.
        let mut without = raw.clone();
        if let Some(object) = without.as_object_mut() {
            object.remove("params");
        }
        return ClientRequest::deserialize(&without)
            .map_err(|err| JsonRpcError::invalid_request(format!("Invalid request: {err}")));
    }
    ClientRequest::deserialize(raw)
        .map_err(|err| JsonRpcError::invalid_request(format!("Invalid request: {err}")))
}

fn experimental_gate(method: &str, raw: &Value, opted_in: bool) -> Option<JsonRpcError> {
    let params = raw.get("params")?;
    let present = |field: &str| params.get(field).is_some_and(|v| !v.is_null());
    let descriptor = EXPERIMENTAL_PARAMS
        .iter()
        .filter(|(m, _)| *m == method)
        .flat_map(|(m, fields)| fields.iter().map(move |f| (m, f)))
        .find(|(_, field)| present(field))
        .map(|(m, field)| format!("{m}.{field}"))
        .or_else(|| {
            params
                .get("approvalPolicy")
                .is_some_and(|p| p.get("granular").is_some())
                .then(|| "askForApproval.granular".to_string())
        })?;
    Some(if opted_in {
        JsonRpcError::invalid_request(format!("{descriptor} is not supported by Weft"))
    } else {
        JsonRpcError::invalid_request(format!("{descriptor} requires experimentalApi capability"))
    })
}

/// Record a connection's `initialize` choices.
pub fn session_from(params: &weft_protocol::InitializeParams) -> Session {
    let capabilities = params.capabilities.clone().unwrap_or_default();
    Session {
        client_name: params.client_info.name.clone(),
        experimental_api: capabilities.experimental_api,
        opt_out: capabilities
            .opt_out_notification_methods
            .unwrap_or_default()
            .into_iter()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_method_lists_served_methods() {
        let err = decode("foo/bar", &json!({"id":1,"method":"foo/bar","params":{}})).unwrap_err();
        assert_eq!(err.code, -32600);
        assert!(
            err.message
                .starts_with("Invalid request: unknown variant `foo/bar`, expected"),
            "{}",
            err.message
        );
        assert!(err.message.contains("`initialize`"));
    }

    #[test]
    fn missing_params() {
        let err = decode("initialize", &json!({"id":1,"method":"initialize"})).unwrap_err();
        assert_eq!(err.message, "Invalid request: missing field `params`");
        let err = decode(
            "initialize",
            &json!({"id":1,"method":"initialize","params":null}),
        )
        .unwrap_err();
        assert_eq!(err.message, "Invalid request: missing field `params`");
    }
}
