//! Request processing: one message at a time, in arrival order. A request is decoded, passes
//! the connection's gates (`initialize` first and once; experimental params), and goes
//! through the one routing table, [`route`], to its handler; the router sends the handler's
//! answer. Answers from clients to server requests (approvals) are resolved here too.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tracing::Instrument;
use weft_core::events::ServerRequestOutcome;
use weft_protocol::ClientRequest;
use weft_protocol::jsonrpc::{Envelope, JsonRpcError, RequestId};

use crate::connection::Connection;
use crate::experimental::{self, Gate};
use crate::handlers::{
    FollowUp, IntoAnswer, ThreadReply, account, collaboration, config, goals, history, hooks,
    initialize, mcp, models, pages, read_state, skills, terminals, thread_list, threads, turns,
};
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

/// The routing table: every method to its handler, in one match.
///
/// - `initialize` runs inline, so the next message already sees the connection initialized.
/// - Requests a thread answers run inline too, so they reach the thread's mailbox in arrival
///   order; their handlers never wait.
/// - Everything else runs in its own task, in the request's span.
async fn route(state: Arc<AppState>, connection: Arc<Connection>, request: ClientRequest) {
    match request {
        ClientRequest::Initialize { id, params } => {
            let result = initialize::initialize(&state, &connection, params).await;
            answer(&state, &connection, &id, result).await;
        }
        ClientRequest::TurnStart { id, params } => {
            to_thread(&connection, id, |reply| turns::start(&state, params, reply)).await;
        }
        ClientRequest::TurnSteer { id, params } => {
            to_thread(&connection, id, |reply| turns::steer(&state, params, reply)).await;
        }
        ClientRequest::TurnInterrupt { id, params } => {
            to_thread(&connection, id, |reply| {
                turns::interrupt(&state, params, reply)
            })
            .await;
        }
        ClientRequest::ThreadCompactStart { id, params } => {
            to_thread(&connection, id, |reply| {
                turns::compact(&state, params, reply)
            })
            .await;
        }
        ClientRequest::ThreadStart { id, params } => spawn(async move {
            let result = threads::start(&state, &connection, params).await;
            let started = result.as_ref().ok().map(|a| a.response.thread.id.clone());
            answer(&state, &connection, &id, result).await;
            // After the response and `thread/started`, as the reference orders them.
            if let Some(thread_id) = started {
                mcp::announce_startup(&state, &thread_id).await;
            }
        }),
        ClientRequest::ThreadUnsubscribe { id, params } => spawn(async move {
            let result = threads::unsubscribe(&state, &connection, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadLoadedList { id, params } => spawn(async move {
            let result = threads::loaded_list(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadResume { id, params } => spawn(async move {
            let result = history::resume(&state, &connection, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadFork { id, params } => spawn(async move {
            let result = history::fork(&state, &connection, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadList { id, params } => spawn(async move {
            let result = thread_list::list(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadRead { id, params } => spawn(async move {
            let result = history::read(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadArchive { id, params } => spawn(async move {
            let result = history::archive(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadUnarchive { id, params } => spawn(async move {
            let result = history::unarchive(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadSetName { id, params } => spawn(async move {
            let result = history::set_name(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ModelList { id, params } => spawn(async move {
            let result = models::list(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadTurnsList { id, params } => spawn(async move {
            let result = pages::turns_list(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadItemsList { id, params } => spawn(async move {
            let result = pages::items_list(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::AccountRead { id, params } => {
            let result = account::read(params).await;
            answer(&state, &connection, &id, result).await;
        }
        ClientRequest::BedrockCheckGovCloudRequirements { id, params } => {
            let result = account::check_gov_cloud(params).await;
            answer(&state, &connection, &id, result).await;
        }
        ClientRequest::ConfigRead { id, params } => {
            let result = config::read(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }
        ClientRequest::ConfigRequirementsRead { id, params } => {
            let result = config::requirements(params).await;
            answer(&state, &connection, &id, result).await;
        }
        ClientRequest::McpServerStatusList { id, params } => spawn(async move {
            let result = mcp::status_list(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::McpServerToolCall { id, params } => spawn(async move {
            let result = mcp::tool_call(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::McpResourceRead { id, params } => spawn(async move {
            let result = mcp::resource_read(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::McpServerReload { id, .. } => spawn(async move {
            let result = mcp::reload(&state).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::HooksList { id, params } => spawn(async move {
            let result = hooks::list(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::SkillsList { id, params } => spawn(async move {
            let result = skills::list(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::CollaborationModeList { id, params } => spawn(async move {
            let result = collaboration::list(params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadReadStateUpdate { id, params } => spawn(async move {
            let result = read_state::update(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadGoalGet { id, params } => spawn(async move {
            let result = goals::get(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadGoalSet { id, params } => spawn(async move {
            let (answered, set) = match goals::set(&state, params).await {
                Ok(done) => done,
                Err(err) => {
                    answer::<()>(&state, &connection, &id, Err(err)).await;
                    return;
                }
            };
            // A loaded thread answers itself, before anything the change makes it do (a
            // continuation turn), as for `turn/start` (docs/architecture.md §5.3). The reply
            // says when it ran; one dropped unsent (no loaded thread) leaves the answer here.
            let slot = Arc::new(parking_lot::Mutex::new(Some(answered)));
            let (ran, ran_rx) = tokio::sync::oneshot::channel::<()>();
            let reply = {
                let (state, connection, id, slot) =
                    (state.clone(), connection.clone(), id.clone(), slot.clone());
                weft_core::events::Reply::new(move |()| {
                    Box::pin(async move {
                        let answered = slot.lock().take();
                        if let Some(answered) = answered {
                            answer(&state, &connection, &id, Ok(answered)).await;
                        }
                        let _ = ran.send(());
                    })
                })
            };
            goals::tell_thread(&state, set, reply).await;
            if ran_rx.await.is_err() {
                let answered = slot.lock().take();
                if let Some(answered) = answered {
                    answer(&state, &connection, &id, Ok(answered)).await;
                }
            }
        }),
        ClientRequest::ThreadGoalClear { id, params } => spawn(async move {
            let result = goals::clear(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadBackgroundTerminalsList { id, params } => spawn(async move {
            let result = terminals::list(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadBackgroundTerminalsTerminate { id, params } => spawn(async move {
            let result = terminals::terminate(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
        ClientRequest::ThreadBackgroundTerminalsClean { id, params } => spawn(async move {
            let result = terminals::clean(&state, params).await;
            answer(&state, &connection, &id, result).await;
        }),
    }
}

/// Run a handler in its own task, in the current (request) span.
fn spawn(task: impl Future<Output = ()> + Send + 'static) {
    tokio::spawn(task.in_current_span());
}

/// Send a handler's answer: the response (or error), then its follow-up notifications.
async fn answer<A: IntoAnswer>(
    state: &AppState,
    connection: &Connection,
    id: &RequestId,
    result: Result<A, JsonRpcError>,
) {
    let answer = match result {
        Ok(answer) => answer.into_answer(),
        Err(err) => {
            connection.answer(outgoing::error(id, &err)).await;
            return;
        }
    };
    connection
        .send(outgoing::response(id, &answer.response))
        .await;
    // Answered once its follow-ups are queued too: a client that ends its input right after
    // `thread/start` still gets the `thread/started` it causes.
    let _answered = Answered(connection);
    for follow_up in answer.then {
        match follow_up {
            FollowUp::Broadcast(notification) => state.connections.broadcast(&notification).await,
            FollowUp::Caller(notification) => {
                if connection.wants_notification(notification.method()) {
                    connection.send(outgoing::notification(&notification)).await;
                }
            }
        }
    }
}

/// Marks a request answered when dropped (after the last of its follow-ups).
struct Answered<'a>(&'a Connection);

impl Drop for Answered<'_> {
    fn drop(&mut self) {
        self.0.answered();
    }
}

/// Hand a request to a thread: the handler queues it with a [`ThreadReply`], through which the
/// thread answers; an error from the handler's own checks is sent here.
async fn to_thread<R, F>(connection: &Arc<Connection>, id: RequestId, handler: F)
where
    R: serde::Serialize + 'static,
    F: FnOnce(ThreadReply<R>) -> Result<(), JsonRpcError>,
{
    let reply = ThreadReply::new(connection.clone(), id.clone());
    if let Err(err) = handler(reply) {
        connection.answer(outgoing::error(&id, &err)).await;
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
        use tokio_util::sync::CancellationToken;

        use crate::connection::{Backpressure, InitializeChoices};

        let (connection, _rx) = Connection::new(1, Backpressure::Wait, CancellationToken::new());
        let init = json!({"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}});
        let start = json!({"id":2,"method":"thread/start","params":{"dynamicTools":[]}});
        let err = admit(&connection, "thread/start", start.clone()).unwrap_err();
        assert_eq!(err.message, "Not initialized");
        assert!(admit(&connection, "initialize", init.clone()).is_ok());
        assert!(connection.initialize(InitializeChoices {
            client_name: "t".into(),
            experimental_api: false,
            opt_out: Default::default(),
        }));
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
        use tokio_util::sync::CancellationToken;

        use crate::connection::{Backpressure, InitializeChoices};

        let (connection, _rx) = Connection::new(1, Backpressure::Wait, CancellationToken::new());
        assert!(connection.initialize(InitializeChoices {
            client_name: "t".into(),
            experimental_api: true,
            opt_out: Default::default(),
        }));
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
        use tokio_util::sync::CancellationToken;

        use crate::connection::{Backpressure, InitializeChoices};

        // thread/turns/list is a stable method in the reference (served to every client);
        // checkGovCloudRequirements is experimental as a whole; historyMode is an
        // experimental field of a stable method.
        let turns = json!({"id":3,"method":"thread/turns/list","params":{"threadId":"t"}});
        let gov = json!({"id":5,"method":"account/bedrock/checkGovCloudRequirements","params":{}});
        let start = json!({"id":4,"method":"thread/start","params":{"historyMode":"paginated"}});
        for experimental_api in [false, true] {
            let (connection, _rx) =
                Connection::new(1, Backpressure::Wait, CancellationToken::new());
            assert!(connection.initialize(InitializeChoices {
                client_name: "t".into(),
                experimental_api,
                opt_out: Default::default(),
            }));
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
