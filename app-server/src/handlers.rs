//! Request handlers, one function per method. Each turns params into a core call and the
//! answer into a response; errors carry the reference's exact texts.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use weft_core::events::Reply;
use weft_core::state::{ListQuery, ListSortKey};
use weft_core::thread::StartThreadOptions;
use weft_core::thread::ThreadSnapshot;
use weft_core::thread::{CoreError, InputMode, Op, Submitted, ThreadHandle, TurnOverrides};
use weft_protocol::jsonrpc::{JsonRpcError, RequestId};
use weft_protocol::models::{Model, ModelListParams, ModelListResponse, ReasoningEffortOption};
use weft_protocol::notifications::{
    ThreadArchivedNotification, ThreadNameUpdatedNotification, ThreadStartedNotification,
    ThreadStatusChangedNotification, ThreadTokenUsageUpdatedNotification,
    ThreadUnarchivedNotification,
};
use weft_protocol::thread_api::{
    ThreadArchiveResponse, ThreadCompactStartResponse, ThreadForkParams, ThreadForkResponse,
    ThreadListParams, ThreadListResponse, ThreadLoadedListParams, ThreadLoadedListResponse,
    ThreadReadResponse, ThreadResumeParams, ThreadResumeResponse, ThreadSetNameResponse,
    ThreadStartParams, ThreadStartResponse, ThreadUnarchiveResponse, ThreadUnsubscribeResponse,
};
use weft_protocol::turn_api::{
    TurnInterruptParams, TurnInterruptResponse, TurnStartParams, TurnStartResponse,
    TurnSteerParams, TurnSteerResponse,
};
use weft_protocol::{
    ApprovalsReviewer, ClientRequest, CodexErrorInfo, InitializeResponse, ReasoningEffort,
    ThreadId, Turn, TurnError, TurnItemsView, TurnStatus, UserInput,
};
use weft_protocol::{ThreadSortKey, ThreadStatus};

use crate::connection::Connection;
use crate::outgoing;
use crate::processor::{AppState, session_from};

/// Requests that go to a thread's queue. They are handled in arrival order on the request
/// path (never in a spawned task), so two `turn/start`s sent back to back reach the thread in
/// the order they were sent; the thread answers them itself.
pub async fn submit_to_thread(
    state: &AppState,
    connection: &Arc<Connection>,
    request: ClientRequest,
) {
    match request {
        ClientRequest::TurnStart { id, params } => turn_start(state, connection, id, params).await,
        ClientRequest::TurnSteer { id, params } => turn_steer(state, connection, id, params).await,
        ClientRequest::TurnInterrupt { id, params } => {
            turn_interrupt(state, connection, id, params).await;
        }
        ClientRequest::ThreadCompactStart { id, params } => {
            let handle = match loaded_thread(state, &params.thread_id) {
                Ok(handle) => handle,
                Err(err) => {
                    connection.send(outgoing::error(&id, &err)).await;
                    return;
                }
            };
            let reply = reply_with(connection, id.clone(), |()| ThreadCompactStartResponse {});
            if let Err(err) = handle.try_send(Op::Compact { reply }) {
                connection
                    .send(outgoing::error(&id, &core_error(err)))
                    .await;
            }
        }
        other => dispatch_unrouted(connection, other).await,
    }
}

async fn dispatch_unrouted(connection: &Connection, request: ClientRequest) {
    // Decoding only lets served methods through; reaching here is a routing bug.
    let err = JsonRpcError::internal(format!("method `{}` has no handler", request.method()));
    connection.send(outgoing::error(request.id(), &err)).await;
}

/// Handle `initialize` on a connection that is not initialized yet.
pub async fn initialize(state: &AppState, connection: &Connection, request: ClientRequest) {
    let ClientRequest::Initialize { id, params } = request else {
        return;
    };
    if !connection.initialize(session_from(&params)) {
        let err = JsonRpcError::invalid_request("Already initialized");
        connection.send(outgoing::error(&id, &err)).await;
        return;
    }
    let response = InitializeResponse {
        user_agent: user_agent(&params.client_info.name, &params.client_info.version),
        codex_home: state.home.display().to_string(),
        platform_family: std::env::consts::FAMILY.to_string(),
        platform_os: std::env::consts::OS.to_string(),
    };
    connection.send(outgoing::response(&id, &response)).await;
}

/// Dispatch an initialized connection's request to its handler.
pub async fn dispatch(state: &Arc<AppState>, connection: &Arc<Connection>, request: ClientRequest) {
    match request {
        ClientRequest::Initialize { id, .. } => {
            let err = JsonRpcError::invalid_request("Already initialized");
            connection.send(outgoing::error(&id, &err)).await;
        }
        ClientRequest::ThreadStart { id, params } => {
            thread_start(state, connection, id, params).await;
        }
        ClientRequest::TurnStart { .. }
        | ClientRequest::TurnSteer { .. }
        | ClientRequest::TurnInterrupt { .. }
        | ClientRequest::ThreadCompactStart { .. } => {
            submit_to_thread(state, connection, request).await;
        }
        ClientRequest::ThreadResume { id, params } => {
            thread_resume(state, connection, id, params).await;
        }
        ClientRequest::ThreadFork { id, params } => {
            thread_fork(state, connection, id, params).await
        }
        ClientRequest::ThreadList { id, params } => {
            respond(connection, &id, thread_list(state, params).await).await;
        }
        ClientRequest::ThreadRead { id, params } => {
            let result = async {
                parse_thread_id(&params.thread_id)?;
                let thread = state
                    .threads
                    .read_thread(&params.thread_id, params.include_turns)
                    .await
                    .map_err(core_error)?;
                Ok(ThreadReadResponse { thread })
            }
            .await;
            respond(connection, &id, result).await;
        }
        ClientRequest::ThreadArchive { id, params } => {
            thread_archive(state, connection, id, params.thread_id).await;
        }
        ClientRequest::ThreadUnarchive { id, params } => {
            let thread_id = params.thread_id;
            let result = async {
                parse_thread_id(&thread_id)?;
                let thread = state
                    .threads
                    .unarchive_thread(&thread_id)
                    .await
                    .map_err(core_error)?;
                Ok(ThreadUnarchiveResponse { thread })
            }
            .await;
            let ok = result.is_ok();
            respond(connection, &id, result).await;
            if ok {
                state
                    .connections
                    .broadcast(&ThreadUnarchivedNotification { thread_id }.into())
                    .await;
            }
        }
        ClientRequest::ThreadSetName { id, params } => {
            let thread_id = params.thread_id;
            let name = params.name;
            let result = async {
                parse_thread_id(&thread_id)?;
                state
                    .threads
                    .set_thread_name(&thread_id, &name)
                    .await
                    .map_err(core_error)?;
                Ok(ThreadSetNameResponse {})
            }
            .await;
            let ok = result.is_ok();
            respond(connection, &id, result).await;
            if ok {
                let notification = ThreadNameUpdatedNotification {
                    thread_id,
                    thread_name: Some(name.trim().to_string()),
                };
                state.connections.broadcast(&notification.into()).await;
            }
        }
        ClientRequest::ThreadUnsubscribe { id, params } => {
            let result = parse_thread_id(&params.thread_id).map(|()| {
                let status = state.unsubscribe(&params.thread_id, connection.id);
                ThreadUnsubscribeResponse { status }
            });
            respond(connection, &id, result).await;
        }
        ClientRequest::ThreadLoadedList { id, params } => {
            respond(connection, &id, Ok(thread_loaded_list(state, params))).await;
        }
        ClientRequest::ModelList { id, params } => {
            respond(connection, &id, model_list(state, params).await).await;
        }
    }
}

async fn respond<T: Serialize>(
    connection: &Connection,
    id: &RequestId,
    result: Result<T, JsonRpcError>,
) {
    let frame = match result {
        Ok(value) => outgoing::response(id, &value),
        Err(err) => outgoing::error(id, &err),
    };
    connection.send(frame).await;
}

/// `-32600` with a core error's message (and, for non-steerable turns, the `TurnError` data).
fn core_error(err: CoreError) -> JsonRpcError {
    let message = err.to_string();
    match err {
        CoreError::NotSteerable(kind) => {
            let data = TurnError {
                message: message.clone(),
                codex_error_info: Some(CodexErrorInfo::ActiveTurnNotSteerable { turn_kind: kind }),
                additional_details: None,
                misalignment: None,
            };
            JsonRpcError::invalid_request(message)
                .with_data(serde_json::to_value(data).unwrap_or(Value::Null))
        }
        CoreError::Overloaded => JsonRpcError::overloaded(),
        _ => JsonRpcError::invalid_request(message),
    }
}

/// Thread ids must be UUIDs; the error text is the reference's.
fn parse_thread_id(id: &ThreadId) -> Result<(), JsonRpcError> {
    uuid::Uuid::parse_str(id.as_str())
        .map(|_| ())
        .map_err(|err| JsonRpcError::invalid_request(format!("invalid thread id: {err}")))
}

/// A loaded thread's handle, or the reference's `thread not found` error.
fn loaded_thread(state: &AppState, id: &ThreadId) -> Result<ThreadHandle, JsonRpcError> {
    parse_thread_id(id)?;
    state
        .threads
        .get(id)
        .ok_or_else(|| JsonRpcError::invalid_request(format!("thread not found: {id}")))
}

async fn thread_start(
    state: &Arc<AppState>,
    connection: &Arc<Connection>,
    id: RequestId,
    params: ThreadStartParams,
) {
    if let Err(err) = check_reviewer(params.approvals_reviewer) {
        connection.send(outgoing::error(&id, &err)).await;
        return;
    }
    let mut options = StartThreadOptions {
        model: params.model,
        model_provider: params.model_provider,
        cwd: params.cwd.map(PathBuf::from),
        approval_policy: params.approval_policy,
        sandbox: params.sandbox,
        base_instructions: params.base_instructions,
        developer_instructions: params.developer_instructions,
        ephemeral: params.ephemeral.unwrap_or(false),
        reasoning_effort: None,
        originator: connection.session().map(|s| s.client_name.clone()),
        thread_source: params.thread_source,
    };
    if let Some(config) = &params.config {
        apply_config_overrides(&mut options, config);
    }
    let subscribers = state.new_subscribers();
    subscribers.subscribe(connection);
    let started = state
        .threads
        .start_thread(options, subscribers.clone())
        .await;
    let (handle, snapshot) = match started {
        Ok(started) => started,
        Err(err) => {
            connection
                .send(outgoing::error(&id, &core_error(err)))
                .await;
            return;
        }
    };
    state.add_thread(handle.id().clone(), subscribers);
    let response = thread_settings_response(&snapshot);
    connection.send(outgoing::response(&id, &response)).await;
    state
        .connections
        .broadcast(
            &ThreadStartedNotification {
                thread: snapshot.thread,
            }
            .into(),
        )
        .await;
}

/// The common part of the `thread/start`, `thread/resume` and `thread/fork` results.
fn thread_settings_response(snapshot: &ThreadSnapshot) -> ThreadStartResponse {
    let settings = &snapshot.settings;
    ThreadStartResponse {
        thread: snapshot.thread.clone(),
        model: settings.model.clone(),
        model_provider: settings.model_provider.clone(),
        service_tier: None,
        cwd: settings.cwd.display().to_string(),
        instruction_sources: weft_core::instructions::discover_agents_md(&settings.cwd)
            .into_iter()
            .map(|doc| doc.path.display().to_string())
            .collect(),
        approval_policy: settings.approval_policy,
        approvals_reviewer: ApprovalsReviewer::User,
        sandbox: settings.sandbox.clone(),
        reasoning_effort: settings.reasoning_effort.clone(),
        disabled_plugin_ids: Vec::new(),
    }
}

/// Thread options from the params `thread/resume` and `thread/fork` share with `thread/start`.
#[allow(clippy::too_many_arguments)]
fn thread_options(
    connection: &Connection,
    model: Option<String>,
    model_provider: Option<String>,
    cwd: Option<String>,
    approval_policy: Option<weft_protocol::AskForApproval>,
    sandbox: Option<weft_protocol::SandboxMode>,
    base_instructions: Option<String>,
    developer_instructions: Option<String>,
    config: Option<&serde_json::Map<String, Value>>,
) -> StartThreadOptions {
    let mut options = StartThreadOptions {
        model,
        model_provider,
        cwd: cwd.map(PathBuf::from),
        approval_policy,
        sandbox,
        base_instructions,
        developer_instructions,
        ephemeral: false,
        reasoning_effort: None,
        originator: connection.session().map(|s| s.client_name.clone()),
        thread_source: None,
    };
    if let Some(config) = config {
        apply_config_overrides(&mut options, config);
    }
    options
}

async fn thread_resume(
    state: &Arc<AppState>,
    connection: &Arc<Connection>,
    id: RequestId,
    params: ThreadResumeParams,
) {
    if let Err(err) =
        parse_thread_id(&params.thread_id).and(check_reviewer(params.approvals_reviewer))
    {
        connection.send(outgoing::error(&id, &err)).await;
        return;
    }
    let options = thread_options(
        connection,
        params.model,
        params.model_provider,
        params.cwd,
        params.approval_policy,
        params.sandbox,
        params.base_instructions,
        params.developer_instructions,
        params.config.as_ref(),
    );
    let subscribers = state.new_subscribers();
    // A cold resume registers the new thread's subscribers before anyone else can see it
    // loaded, so a concurrent warm resume from another connection joins this list.
    let register =
        |handle: &ThreadHandle| state.add_thread(handle.id().clone(), subscribers.clone());
    let resumed = state
        .threads
        .resume_thread(&params.thread_id, options, subscribers.clone(), register)
        .await;
    let (handle, mut snapshot, warm) = match resumed {
        Ok(resumed) => resumed,
        Err(err) => {
            connection
                .send(outgoing::error(&id, &core_error(err)))
                .await;
            return;
        }
    };
    let subscribers = if warm {
        state.subscribers_of(handle.id()).unwrap_or(subscribers)
    } else {
        // A thread coming back into memory announces its status to everyone.
        state
            .connections
            .broadcast(
                &ThreadStatusChangedNotification {
                    thread_id: handle.id().clone(),
                    status: snapshot.thread.status.clone(),
                }
                .into(),
            )
            .await;
        subscribers
    };
    subscribers.subscribe(connection);
    let start = thread_settings_response(&snapshot);
    let mut thread = start.thread;
    if !params.exclude_turns {
        thread.turns = std::mem::take(&mut snapshot.turns);
    }
    let response = ThreadResumeResponse {
        thread,
        model: start.model,
        model_provider: start.model_provider,
        service_tier: start.service_tier,
        cwd: start.cwd,
        instruction_sources: start.instruction_sources,
        approval_policy: start.approval_policy,
        approvals_reviewer: start.approvals_reviewer,
        sandbox: start.sandbox,
        reasoning_effort: start.reasoning_effort,
        disabled_plugin_ids: start.disabled_plugin_ids,
        turns_backwards_cursor: None,
        items_backwards_cursor: None,
        collaboration_mode: None,
    };
    connection.send(outgoing::response(&id, &response)).await;
    replay_token_usage(connection, handle.id(), snapshot.token_usage).await;
}

/// Resume and fork replay the thread's last token usage to the caller (protocol.md §4.3).
async fn replay_token_usage(
    connection: &Connection,
    thread_id: &ThreadId,
    usage: Option<(weft_protocol::TurnId, weft_protocol::ThreadTokenUsage)>,
) {
    let Some((turn_id, token_usage)) = usage else {
        return;
    };
    let notification: weft_protocol::notifications::ServerNotification =
        ThreadTokenUsageUpdatedNotification {
            thread_id: thread_id.clone(),
            turn_id,
            token_usage,
        }
        .into();
    if connection.wants_notification(notification.method()) {
        connection.send(outgoing::notification(&notification)).await;
    }
}

async fn thread_fork(
    state: &Arc<AppState>,
    connection: &Arc<Connection>,
    id: RequestId,
    params: ThreadForkParams,
) {
    if let Err(err) =
        parse_thread_id(&params.thread_id).and(check_reviewer(params.approvals_reviewer))
    {
        connection.send(outgoing::error(&id, &err)).await;
        return;
    }
    let mut options = thread_options(
        connection,
        params.model,
        params.model_provider,
        params.cwd,
        params.approval_policy,
        params.sandbox,
        params.base_instructions,
        params.developer_instructions,
        params.config.as_ref(),
    );
    options.ephemeral = params.ephemeral;
    options.thread_source = params.thread_source;
    let subscribers = state.new_subscribers();
    subscribers.subscribe(connection);
    let forked = state
        .threads
        .fork_thread(
            &params.thread_id,
            params.last_turn_id.as_ref(),
            options,
            subscribers.clone(),
        )
        .await;
    let (handle, mut snapshot) = match forked {
        Ok(forked) => forked,
        Err(err) => {
            connection
                .send(outgoing::error(&id, &core_error(err)))
                .await;
            return;
        }
    };
    state.add_thread(handle.id().clone(), subscribers);
    let start = thread_settings_response(&snapshot);
    let mut thread = start.thread;
    if !params.exclude_turns {
        thread.turns = std::mem::take(&mut snapshot.turns);
    }
    let response = ThreadForkResponse {
        thread,
        model: start.model,
        model_provider: start.model_provider,
        service_tier: start.service_tier,
        cwd: start.cwd,
        instruction_sources: start.instruction_sources,
        approval_policy: start.approval_policy,
        approvals_reviewer: start.approvals_reviewer,
        sandbox: start.sandbox,
        reasoning_effort: start.reasoning_effort,
        disabled_plugin_ids: start.disabled_plugin_ids,
    };
    connection.send(outgoing::response(&id, &response)).await;
    // The reference replays the copied token usage before announcing the new thread
    // (protocol.md §4.4): response → thread/tokenUsage/updated → thread/started.
    replay_token_usage(connection, handle.id(), snapshot.token_usage).await;
    state
        .connections
        .broadcast(
            &ThreadStartedNotification {
                thread: snapshot.thread,
            }
            .into(),
        )
        .await;
}

async fn thread_list(
    state: &AppState,
    params: ThreadListParams,
) -> Result<ThreadListResponse, JsonRpcError> {
    let sort_key = match params.sort_key.unwrap_or_default() {
        ThreadSortKey::CreatedAt => ListSortKey::CreatedAt,
        ThreadSortKey::UpdatedAt => ListSortKey::UpdatedAt,
        other => {
            let name = serde_json::to_value(other)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            return Err(JsonRpcError::invalid_request(format!(
                "sortKey `{name}` is not supported by Weft; use `created_at` or `updated_at`"
            )));
        }
    };
    let cwd = params.cwd.as_ref().map(|filter| {
        filter
            .paths()
            .into_iter()
            .map(|p| {
                let path = PathBuf::from(p);
                if path.is_absolute() {
                    p.to_string()
                } else {
                    std::env::current_dir()
                        .map(|d| d.join(&path).display().to_string())
                        .unwrap_or_else(|_| p.to_string())
                }
            })
            .collect()
    });
    let query = ListQuery {
        limit: params.limit.unwrap_or(0),
        cursor: params.cursor,
        sort_key,
        direction: params.sort_direction.unwrap_or_default(),
        model_providers: params.model_providers,
        source_kinds: params.source_kinds.map(|kinds| {
            kinds
                .into_iter()
                .filter_map(|k| serde_json::to_value(k).ok())
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        }),
        archived: params.archived.unwrap_or(false),
        cwd,
        search_term: params.search_term,
    };
    let (data, next_cursor) = state
        .threads
        .list_threads(&query)
        .await
        .map_err(core_error)?;
    Ok(ThreadListResponse {
        data,
        next_cursor,
        backwards_cursor: None,
    })
}

async fn thread_archive(
    state: &Arc<AppState>,
    connection: &Arc<Connection>,
    id: RequestId,
    thread_id: ThreadId,
) {
    if let Err(err) = parse_thread_id(&thread_id) {
        connection.send(outgoing::error(&id, &err)).await;
        return;
    }
    match state.threads.archive_thread(&thread_id).await {
        Ok(was_loaded) => {
            if was_loaded {
                state.forget_thread(&thread_id);
                state
                    .connections
                    .broadcast(
                        &ThreadStatusChangedNotification {
                            thread_id: thread_id.clone(),
                            status: ThreadStatus::NotLoaded,
                        }
                        .into(),
                    )
                    .await;
            }
            connection
                .send(outgoing::response(&id, &ThreadArchiveResponse {}))
                .await;
            state
                .connections
                .broadcast(&ThreadArchivedNotification { thread_id }.into())
                .await;
        }
        Err(err) => {
            // The thread may have been unloaded before the move failed: say so.
            if state.threads.get(&thread_id).is_none() && state.subscribers_of(&thread_id).is_some()
            {
                state.forget_thread(&thread_id);
                state
                    .connections
                    .broadcast(
                        &ThreadStatusChangedNotification {
                            thread_id: thread_id.clone(),
                            status: ThreadStatus::NotLoaded,
                        }
                        .into(),
                    )
                    .await;
            }
            connection
                .send(outgoing::error(&id, &core_error(err)))
                .await;
        }
    }
}

/// The `config` map of `thread/start`: the keys Weft understands; others are ignored.
fn apply_config_overrides(
    options: &mut StartThreadOptions,
    config: &serde_json::Map<String, Value>,
) {
    for (key, value) in config {
        match (key.as_str(), value) {
            ("model", Value::String(model)) => options.model = Some(model.clone()),
            ("model_provider", Value::String(provider)) => {
                options.model_provider = Some(provider.clone());
            }
            ("model_reasoning_effort", Value::String(effort)) => {
                options.reasoning_effort = Some(ReasoningEffort(effort.clone()));
            }
            ("developer_instructions", Value::String(text)) => {
                options.developer_instructions = Some(text.clone());
            }
            ("base_instructions", Value::String(text)) => {
                options.base_instructions = Some(text.clone());
            }
            _ => tracing::debug!(%key, "ignoring thread/start config override"),
        }
    }
}

/// A reply that writes the core's answer as this request's response.
fn reply_with<T, R, F>(
    connection: &Arc<Connection>,
    id: RequestId,
    to_result: F,
) -> Reply<Result<T, CoreError>>
where
    T: Send + 'static,
    R: Serialize,
    F: FnOnce(T) -> R + Send + 'static,
{
    let connection = connection.clone();
    Reply::new(move |result: Result<T, CoreError>| {
        Box::pin(async move {
            let frame = match result {
                Ok(value) => outgoing::response(&id, &to_result(value)),
                Err(err) => outgoing::error(&id, &core_error(err)),
            };
            connection.send(frame).await;
        })
    })
}

/// A running turn as `turn/start` reports it when the input steered into it.
fn running_turn(id: weft_protocol::TurnId) -> Turn {
    Turn {
        root_turn_id: Some(id.clone()),
        id,
        items: Vec::new(),
        items_view: TurnItemsView::NotLoaded,
        status: TurnStatus::InProgress,
        error: None,
        started_at: None,
        completed_at: None,
        duration_ms: None,
    }
}

async fn turn_start(
    state: &AppState,
    connection: &Arc<Connection>,
    id: RequestId,
    params: TurnStartParams,
) {
    let handle = match loaded_thread(state, &params.thread_id) {
        Ok(handle) => handle,
        Err(err) => {
            connection.send(outgoing::error(&id, &err)).await;
            return;
        }
    };
    if let Err(err) = check_input(&params.input).and(check_reviewer(params.approvals_reviewer)) {
        connection.send(outgoing::error(&id, &err)).await;
        return;
    }
    let overrides = TurnOverrides {
        model: params.model,
        cwd: params.cwd.map(PathBuf::from),
        approval_policy: params.approval_policy,
        sandbox: params.sandbox_policy,
        reasoning_effort: params.effort,
        reasoning_summary: params.summary,
    };
    let reply = reply_with(connection, id.clone(), |submitted: Submitted| {
        let turn = match submitted {
            Submitted::Started(turn) => *turn,
            Submitted::Steered(turn_id) => running_turn(turn_id),
        };
        TurnStartResponse { turn }
    });
    let op = Op::Submit {
        input: params.input,
        mode: InputMode::StartOrSteer,
        overrides,
        client_id: params.client_user_message_id,
        reply,
    };
    if let Err(err) = handle.try_send(op) {
        connection
            .send(outgoing::error(&id, &core_error(err)))
            .await;
    }
}

/// Only `user` reviews approvals in Weft; the reviewing sub-agents are not implemented.
fn check_reviewer(reviewer: Option<ApprovalsReviewer>) -> Result<(), JsonRpcError> {
    match reviewer {
        None | Some(ApprovalsReviewer::User) => Ok(()),
        Some(other) => {
            let name = serde_json::to_value(other)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            Err(JsonRpcError::invalid_request(format!(
                "approvalsReviewer `{name}` is not supported by Weft; use `user`"
            )))
        }
    }
}

/// Input kinds Weft cannot send to a model are refused up front rather than dropped.
fn check_input(input: &[UserInput]) -> Result<(), JsonRpcError> {
    for part in input {
        let problem = match part {
            UserInput::Image {
                url: None,
                file_id: Some(_),
                ..
            } => {
                "image inputs by `fileId` are not supported by Weft; send a `url` or a `localImage`"
            }
            UserInput::Image {
                url: None,
                file_id: None,
                ..
            } => "image input needs a `url`",
            UserInput::Image {
                url: Some(_),
                file_id: Some(_),
                ..
            } => "image input takes either `url` or `fileId`, not both",
            UserInput::Text { .. } | UserInput::Image { .. } | UserInput::LocalImage { .. } => {
                continue;
            }
            _ => "this input type is not supported by Weft yet",
        };
        return Err(JsonRpcError::invalid_request(problem));
    }
    Ok(())
}

async fn turn_steer(
    state: &AppState,
    connection: &Arc<Connection>,
    id: RequestId,
    params: TurnSteerParams,
) {
    let handle = match loaded_thread(state, &params.thread_id) {
        Ok(handle) => handle,
        Err(err) => {
            connection.send(outgoing::error(&id, &err)).await;
            return;
        }
    };
    if let Err(err) = check_input(&params.input) {
        connection.send(outgoing::error(&id, &err)).await;
        return;
    }
    let reply = reply_with(connection, id.clone(), |submitted: Submitted| {
        let turn_id = match submitted {
            Submitted::Started(turn) => turn.id,
            Submitted::Steered(turn_id) => turn_id,
        };
        TurnSteerResponse { turn_id }
    });
    let op = Op::Submit {
        input: params.input,
        mode: InputMode::Steer {
            expected_turn_id: params.expected_turn_id.to_string(),
        },
        overrides: TurnOverrides::default(),
        client_id: params.client_user_message_id,
        reply,
    };
    if let Err(err) = handle.try_send(op) {
        connection
            .send(outgoing::error(&id, &core_error(err)))
            .await;
    }
}

async fn turn_interrupt(
    state: &AppState,
    connection: &Arc<Connection>,
    id: RequestId,
    params: TurnInterruptParams,
) {
    let handle = match loaded_thread(state, &params.thread_id) {
        Ok(handle) => handle,
        Err(err) => {
            connection.send(outgoing::error(&id, &err)).await;
            return;
        }
    };
    let reply = reply_with(connection, id.clone(), |()| TurnInterruptResponse {});
    let op = Op::Interrupt {
        turn_id: params.turn_id.to_string(),
        reply,
    };
    if let Err(err) = handle.try_send(op) {
        connection
            .send(outgoing::error(&id, &core_error(err)))
            .await;
    }
}

fn thread_loaded_list(
    state: &AppState,
    params: ThreadLoadedListParams,
) -> ThreadLoadedListResponse {
    let ids = state.threads.loaded_ids();
    let start = match &params.cursor {
        Some(cursor) => ids.partition_point(|id| id.as_str() <= cursor.as_str()),
        None => 0,
    };
    let limit = params.limit.map_or(usize::MAX, |l| l.max(1) as usize);
    let page: Vec<ThreadId> = ids[start..].iter().take(limit).cloned().collect();
    let next_cursor = if start + page.len() < ids.len() {
        page.last().map(|id| id.to_string())
    } else {
        None
    };
    ThreadLoadedListResponse {
        data: page,
        next_cursor,
    }
}

/// `model/list`: the configured default model, plus what the provider's `GET /models` lists
/// when it serves one.
async fn model_list(
    state: &AppState,
    params: ModelListParams,
) -> Result<ModelListResponse, JsonRpcError> {
    let config = &state.config;
    let provider_id = params
        .model_provider
        .clone()
        .unwrap_or_else(|| config.model_provider.clone());
    let Some(provider) = config.provider(&provider_id).cloned() else {
        return Err(JsonRpcError::invalid_request(format!(
            "unknown model provider `{provider_id}`"
        )));
    };
    let mut ids = vec![config.model.clone()];
    let client = weft_core::model::ModelClient::new(provider, state.threads.services().http());
    match client.list_models().await {
        Ok(listed) => {
            for model in listed {
                if !ids.contains(&model) {
                    ids.push(model);
                }
            }
        }
        Err(err) => tracing::debug!(%err, provider = %provider_id, "provider does not list models"),
    }
    let start = match &params.cursor {
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| JsonRpcError::invalid_request(format!("invalid cursor: {cursor}")))?,
        None => 0,
    };
    let limit = params.limit.map_or(usize::MAX, |l| l.max(1) as usize);
    let data: Vec<Model> = ids
        .iter()
        .skip(start)
        .take(limit)
        .map(|id| model_entry(id, id == &config.model))
        .collect();
    let end = start + data.len();
    Ok(ModelListResponse {
        data,
        next_cursor: (end < ids.len()).then(|| end.to_string()),
    })
}

fn model_entry(id: &str, is_default: bool) -> Model {
    let effort = |name: &str, description: &str| ReasoningEffortOption {
        reasoning_effort: ReasoningEffort(name.to_string()),
        description: description.to_string(),
    };
    Model {
        id: id.to_string(),
        model: id.to_string(),
        upgrade: None,
        upgrade_info: None,
        availability_nux: None,
        display_name: id.to_string(),
        description: format!("{id} (from Weft's configuration or the provider's model list)"),
        hidden: false,
        supported_reasoning_efforts: vec![
            effort("low", "Faster answers, less reasoning"),
            effort("medium", "Balanced"),
            effort("high", "More reasoning for hard problems"),
        ],
        default_reasoning_effort: ReasoningEffort("medium".into()),
        input_modalities: vec![
            weft_protocol::models::InputModality::Text,
            weft_protocol::models::InputModality::Image,
        ],
        supports_personality: false,
        additional_speed_tiers: Vec::new(),
        service_tiers: Vec::new(),
        default_service_tier: None,
        model_specialty: None,
        multi_agent_version: None,
        available_access_programs: None,
        is_default,
    }
}

/// `<client>/<weft version> (<os> <os version>; <arch>) <terminal> (<client>; <client version>)`,
/// the shape the reference uses.
fn user_agent(client_name: &str, client_version: &str) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let (os, os_version) = os_release();
    let arch = std::env::consts::ARCH;
    let terminal = std::env::var("TERM_PROGRAM")
        .or_else(|_| std::env::var("TERM"))
        .unwrap_or_else(|_| "unknown".into());
    format!(
        "{client_name}/{version} ({os} {os_version}; {arch}) {terminal} ({client_name}; {client_version})"
    )
}

fn os_release() -> (String, String) {
    let text = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let field = |key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim_matches('"').to_string())
    };
    (
        field("NAME").unwrap_or_else(|| std::env::consts::OS.to_string()),
        field("VERSION_ID").unwrap_or_default(),
    )
}
