//! Request processing: one message at a time, in arrival order. A request is decoded, passes
//! the connection's gates (`initialize` first and once; experimental params), and goes
//! through the one route table, [`route`], to its handler in the execution mode its line
//! names; the dispatcher (`dispatch.rs`) sends the handler's answer. Answers from clients to
//! server requests (approvals) are resolved here too.

use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tracing::Instrument;
use weft_core::events::ServerRequestOutcome;
use weft_protocol::jsonrpc::{Envelope, JsonRpcError, RequestId};
use weft_protocol::{ClientRequest, methods};

use crate::connection::Connection;
use crate::dispatch::{Dispatcher, scoped};
use crate::experimental::{self, Gate};
use crate::handlers::command;
use crate::handlers::{
    account, collaboration, config, goals, guardian, history, hooks, initialize, mcp, models,
    pages, read_state, revert, review, shell, skills, terminals, thread_list, threads, turns,
};
use crate::handlers::{attachments, feedback};
use crate::handlers::{config_write, features, permissions, settings, skills_write};
use crate::handlers::{model_provider_write, model_providers};
use crate::outgoing;
use crate::state::AppState;
use crate::subscriptions::Resolution;
use crate::transport::ingress::{IngressEvent, request_tree, tree};

/// The processing loop: one message at a time, in arrival order. Handlers that wait run in
/// their own tasks so one slow request never holds up the rest.
pub async fn run(state: Arc<AppState>, mut events: mpsc::Receiver<IngressEvent>) {
    while let Some(event) = events.recv().await {
        match event {
            IngressEvent::Message(connection, message) => match message {
                Envelope::Request { id, method, params } => {
                    handle_request(&state, &connection, id, &method, params.as_deref()).await;
                }
                Envelope::Notification { method } => {
                    if method != "initialized" {
                        tracing::debug!(connection = connection.id, %method, "ignoring client notification");
                    }
                }
                Envelope::Response { id, result, error } => {
                    let (result, error) = (result.as_deref(), error.as_deref());
                    resolve_server_request(&state, &connection, &id, result, error);
                }
            },
            IngressEvent::Closed(id) => state.connection_closed(id),
        }
    }
}

/// A client's answer to a server request. It counts only from an initialized connection the
/// request was sent to: server request ids are small integers anyone can guess.
fn resolve_server_request(
    state: &AppState,
    connection: &Connection,
    id: &RequestId,
    result: Option<&RawValue>,
    error: Option<&RawValue>,
) {
    if connection.initialize_choices().is_none() {
        tracing::warn!(connection = connection.id, %id, "response from a connection that has not initialized; ignored");
        return;
    }
    let outcome = match error.map(tree) {
        Some(error) => ServerRequestOutcome::Failed(
            error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error response")
                .to_string(),
        ),
        None => ServerRequestOutcome::Answered(result.map(tree).unwrap_or(Value::Null)),
    };
    match state.pending_requests.resolve(id, connection.id, outcome) {
        Resolution::Resolved => {}
        Resolution::Unknown => {
            tracing::warn!(connection = connection.id, %id, "response to an unknown or already answered server request; dropped");
        }
        Resolution::NotAsked => {
            tracing::warn!(connection = connection.id, %id, "response to a server request that was not sent to this connection; ignored");
        }
    }
}

/// Handle one request inside its `request{method, request_id, thread_id}` span (a child of
/// the connection's span).
async fn handle_request(
    state: &Arc<AppState>,
    connection: &Arc<Connection>,
    id: RequestId,
    method: &str,
    params: Option<&RawValue>,
) {
    let raw = request_tree(&id, method, params);
    let span = tracing::debug_span!(
        parent: connection.span(),
        "request",
        method,
        request_id = %id,
        thread_id = tracing::field::Empty,
    );
    if let Some(thread_id) = raw
        .get("params")
        .and_then(|params| params.get("threadId"))
        .and_then(Value::as_str)
    {
        span.record("thread_id", thread_id);
    }
    async {
        match admit(connection, method, raw) {
            Ok(request) => route(state.clone(), connection.clone(), request).await,
            Err(err) => {
                connection.answer(outgoing::error(&id, &err)).await;
            }
        }
    }
    .instrument(span)
    .await;
}

/// Decode a request and apply the connection's gates, in the reference's order: decoding
/// errors, then `initialize` (required first, accepted once), then experimental params.
fn admit(connection: &Connection, method: &str, raw: Value) -> Result<ClientRequest, JsonRpcError> {
    let experimental = experimental::gate(method, &raw);
    let request = decode(raw)?;
    let is_initialize = matches!(request, ClientRequest::Initialize { .. });
    match (connection.initialize_choices(), is_initialize) {
        (None, true) => Ok(request),
        (None, false) => Err(JsonRpcError::invalid_request("Not initialized")),
        (Some(_), true) => Err(JsonRpcError::invalid_request("Already initialized")),
        (Some(choices), false) => match experimental {
            None => Ok(request),
            Some(Gate::Served(_)) if choices.experimental_api => Ok(request),
            Some(Gate::Unsupported(what)) if choices.experimental_api => Err(
                JsonRpcError::invalid_request(format!("{what} is not supported by Weft")),
            ),
            Some(Gate::Served(what) | Gate::Unsupported(what)) => {
                Err(JsonRpcError::invalid_request(format!(
                    "{what} requires experimentalApi capability"
                )))
            }
        },
    }
}

/// The route table: every client method, on one line, with its execution mode (see
/// [`Dispatcher`]) and its handler (`scoped` when the dispatcher checks the params'
/// `threadId` first). The match is exhaustive, so a method without a route does
/// not compile; the method's marker (`methods::…`) fixes the handler's params and response.
macro_rules! routes {
    ($request:expr, $state:expr, $connection:expr; $($method:ident => $mode:ident($handler:expr);)*) => {
        match $request {
            $(ClientRequest::$method { id, params } => {
                Dispatcher::new($state, $connection, id)
                    .$mode::<methods::$method>(params, $handler)
                    .await
            })*
        }
    };
}

/// Route a request to its handler.
async fn route(state: Arc<AppState>, connection: Arc<Connection>, request: ClientRequest) {
    routes! { request, state, connection;
        Initialize => inline(initialize::initialize);
        ThreadStart => spawned(threads::start);
        ThreadResume => spawned(scoped(history::resume));
        ThreadFork => spawned(scoped(history::fork));
        ThreadList => spawned(thread_list::list);
        ThreadRead => spawned(scoped(history::read));
        ThreadLoadedList => spawned(threads::loaded_list);
        ThreadArchive => spawned(scoped(history::archive));
        ThreadUnarchive => spawned(scoped(history::unarchive));
        ThreadUnsubscribe => spawned(scoped(threads::unsubscribe));
        ThreadSetName => spawned(scoped(history::set_name));
        ThreadCompactStart => to_thread(turns::compact);
        ThreadRevert => spawned(scoped(revert::revert));
        ThreadDelete => spawned(scoped(crate::handlers::thread_manage::delete));
        ThreadMetadataUpdate => spawned(scoped(crate::handlers::thread_manage::metadata_update));
        ThreadInjectItems => spawned(scoped(crate::handlers::thread_manage::inject_items));
        ThreadSectionList => spawned(crate::handlers::sections::list);
        ThreadSectionCreate => spawned(crate::handlers::sections::create);
        ThreadSectionUpdate => spawned(crate::handlers::sections::update);
        ThreadSectionDelete => spawned(crate::handlers::sections::delete);
        ThreadSectionMove => spawned(scoped(crate::handlers::sections::move_thread));
        ThreadShellCommand => to_thread(shell::shell_command);
        TurnStart => to_thread(turns::start);
        TurnSteer => to_thread(turns::steer);
        TurnInterrupt => to_thread(turns::interrupt);
        ReviewStart => to_thread(review::start);
        ModelList => spawned(models::list);
        ModelProviderList => inline(model_providers::list);
        ModelProviderCapabilitiesRead => inline(model_providers::capabilities_read);
        ModelProviderConfigWrite => spawned(model_provider_write::config_write);
        ModelProviderDefaultSet => spawned(model_provider_write::default_set);
        AccountRead => fixed(account::read);
        BedrockCheckGovCloudRequirements => fixed(account::check_gov_cloud);
        ConfigRead => inline(config::read);
        ConfigRequirementsRead => fixed(config::requirements);
        McpServerStatusList => spawned(mcp::status_list);
        McpServerToolCall => spawned(scoped(mcp::tool_call));
        McpResourceRead => spawned(mcp::resource_read);
        McpServerReload => spawned(mcp::reload);
        McpServerOauthLogin => spawned(crate::handlers::mcp_oauth::login);
        HooksList => spawned(hooks::list);
        SkillsList => spawned(skills::list);
        CollaborationModeList => fixed(collaboration::list);
        ThreadTurnsList => spawned(scoped(pages::turns_list));
        ThreadItemsList => spawned(scoped(pages::items_list));
        ThreadReadStateUpdate => spawned(scoped(read_state::update));
        ThreadGoalGet => spawned(scoped(goals::get));
        ThreadGoalSet => spawned_to_thread(scoped(goals::set));
        ThreadGoalClear => spawned(scoped(goals::clear));
        ThreadBackgroundTerminalsList => spawned(scoped(terminals::list));
        ThreadBackgroundTerminalsTerminate => spawned(scoped(terminals::terminate));
        ThreadBackgroundTerminalsClean => spawned(scoped(terminals::clean));
        ThreadApproveGuardianDeniedAction => to_thread(guardian::approve_denied);
        FuzzyFileSearch => deferred(crate::handlers::search::fuzzy_file_search);
        FuzzyFileSearchSessionStart => inline(crate::handlers::search_sessions::start);
        FuzzyFileSearchSessionUpdate => inline(crate::handlers::search_sessions::update);
        FuzzyFileSearchSessionStop => inline(crate::handlers::search_sessions::stop);
        ThreadSearch => spawned(crate::handlers::search::thread_search);
        ConfigValueWrite => spawned(config_write::value_write);
        ConfigBatchWrite => spawned(config_write::batch_write);
        ExperimentalFeatureList => spawned(features::list);
        ExperimentalFeatureEnablementSet => spawned(features::enablement_set);
        PermissionProfileList => spawned(permissions::list);
        ThreadSettingsUpdate => to_thread(settings::update);
        SkillsConfigWrite => spawned(skills_write::config_write);
        SkillsExtraRootsSet => spawned(skills::extra_roots_set);
        FsReadFile => spawned(crate::handlers::fs::read_file);
        FsWriteFile => spawned(crate::handlers::fs::write_file);
        FsCreateDirectory => spawned(crate::handlers::fs::create_directory);
        FsGetMetadata => spawned(crate::handlers::fs::get_metadata);
        FsReadDirectory => spawned(crate::handlers::fs::read_directory);
        FsRemove => spawned(crate::handlers::fs::remove);
        FsCopy => spawned(crate::handlers::fs::copy);
        FsWatch => spawned(crate::handlers::fs::watch);
        FsUnwatch => spawned(crate::handlers::fs::unwatch);
        CommandExec => deferred(command::exec);
        CommandExecWrite => inline(command::write);
        CommandExecResize => inline(command::resize);
        CommandExecTerminate => inline(command::terminate);
        ThreadAttachmentAdd => spawned(attachments::add);
        ThreadAttachmentList => spawned(attachments::list);
        ThreadAttachmentOwnerList => spawned(attachments::owner_list);
        ThreadAttachmentRemove => spawned(attachments::remove);
        FeedbackSave => spawned(feedback::save);
        ExternalAgentConfigDetect => spawned(crate::handlers::external_agent::detect);
        ExternalAgentConfigImport => spawned(crate::handlers::external_agent::import);
        ExternalAgentConfigImportHistoryRecord => spawned(crate::handlers::external_agent::record_history);
        ExternalAgentConfigImportHistoriesRead => spawned(crate::handlers::external_agent::read_histories);
    }
}

/// Decode method and params together, with serde's wording, as the reference does.
fn decode(raw: Value) -> Result<ClientRequest, JsonRpcError> {
    ClientRequest::from_value(raw)
        .map_err(|err| JsonRpcError::invalid_request(format!("Invalid request: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::InitializeChoices;
    use serde_json::json;

    #[test]
    fn unknown_method_lists_served_methods() {
        let err = decode(json!({"id":1,"method":"foo/bar","params":{}})).unwrap_err();
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
    fn gates_run_once_in_order() {
        let (connection, _rx) = Connection::test(1);
        let init = json!({"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}});
        let start = json!({"id":2,"method":"thread/start","params":{"dynamicTools":[]}});
        let err = admit(&connection, "thread/start", start.clone()).unwrap_err();
        assert_eq!(err.message, "Not initialized");
        assert!(admit(&connection, "initialize", init.clone()).is_ok());
        assert!(connection.initialize(InitializeChoices::test(false)));
        let err = admit(&connection, "initialize", init).unwrap_err();
        assert_eq!(err.message, "Already initialized");
        let err = admit(&connection, "thread/start", start).unwrap_err();
        assert_eq!(
            err.message,
            "thread/start.dynamicTools requires experimentalApi capability"
        );
    }

    #[test]
    fn dynamic_tools_are_served_with_the_opt_in() {
        let (connection, _rx) = Connection::initialized(true);
        let start = json!({"id":2,"method":"thread/start","params":{"dynamicTools":[]}});
        assert!(admit(&connection, "thread/start", start).is_ok());
        let other = json!({"id":3,"method":"thread/start","params":{"projectId":"p"}});
        let err = admit(&connection, "thread/start", other).unwrap_err();
        assert_eq!(
            err.message,
            "thread/start.projectId is not supported by Weft"
        );
    }

    #[test]
    fn served_experimental_surface_needs_the_capability() {
        // thread/turns/list is a stable method in the reference (served to every client);
        // checkGovCloudRequirements is experimental as a whole; historyMode is an
        // experimental field of a stable method.
        let turns = json!({"id":3,"method":"thread/turns/list","params":{"threadId":"t"}});
        let gov = json!({"id":5,"method":"account/bedrock/checkGovCloudRequirements","params":{}});
        let start = json!({"id":4,"method":"thread/start","params":{"historyMode":"paginated"}});
        for experimental_api in [false, true] {
            let (connection, _rx) = Connection::initialized(experimental_api);
            assert!(admit(&connection, "thread/turns/list", turns.clone()).is_ok());
            let checked = admit(
                &connection,
                "account/bedrock/checkGovCloudRequirements",
                gov.clone(),
            );
            let started = admit(&connection, "thread/start", start.clone());
            if experimental_api {
                assert!(checked.is_ok() && started.is_ok());
            } else {
                assert_eq!(
                    checked.unwrap_err().message,
                    "account/bedrock/checkGovCloudRequirements requires experimentalApi capability"
                );
                assert_eq!(
                    started.unwrap_err().message,
                    "thread/start.historyMode requires experimentalApi capability"
                );
            }
        }
    }

    #[test]
    fn missing_params() {
        let err = decode(json!({"id":1,"method":"initialize"})).unwrap_err();
        assert_eq!(err.message, "Invalid request: missing field `params`");
        let err = decode(json!({"id":1,"method":"initialize","params":null})).unwrap_err();
        assert_eq!(err.message, "Invalid request: missing field `params`");
    }
}
