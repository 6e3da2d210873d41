//! Issue 14, sub-agents (docs/agents.md): the v1 and v2 multi-agent tools end to end. The mock model
//! scripts the parent and each child separately, told apart by their requests (a child's
//! carry `x-openai-subagent`, and its task text). Shapes and texts follow the reference's
//! `collab_v1_*` scenarios.

mod clients;
mod v1;
mod v1_limits;
mod v1_tree;
mod v2;
mod wait_mail;

use serde_json::{Value, json};
use weft_mock_model::{Gate, RecordedRequest, Reply};
use weft_test_support::{Client, Transport};

use crate::persistence::ids;
pub use crate::tools::{completed_item, item_event, namespaced_call, output_of};
pub use crate::turns::{Harness, Setup, read_through, str_at, wait_gate};

/// The `initialize` params of an experimental client (`thread/list`'s lineage filters).
pub fn experimental_init() -> Value {
    json!({"clientInfo": {"name": "weft-e2e", "version": "0.1.0"},
           "capabilities": {"experimentalApi": true}})
}

/// A harness whose client is experimental (`thread/list`'s lineage filters), with `config`.
pub async fn harness(transport: Transport, config: &str) -> Harness {
    Harness::start(
        Setup::new(transport)
            .init_params(experimental_init())
            .config(config),
    )
    .await
}

/// [`harness`] for tests that hold a model stream at a gate: the stream idle timeout is a
/// minute, so a held stream never times out first.
pub async fn gated_harness(transport: Transport, config: &str) -> Harness {
    Harness::start(
        Setup::new(transport)
            .init_params(experimental_init())
            .idle_timeout_ms(60_000)
            .config(config),
    )
    .await
}

/// Whether `message` is a `thread/status/changed` of `thread` to `status`.
pub fn is_status(message: &Value, thread: &str, status: &str) -> bool {
    message["method"] == "thread/status/changed"
        && message["params"]["threadId"] == thread
        && message["params"]["status"]["type"] == status
}

/// Whether a model request is a sub-agent's.
pub fn is_child(request: &RecordedRequest) -> bool {
    request.header("x-openai-subagent") == Some("collab_spawn")
}

/// Whether a model request is a sub-agent's and its input mentions `text`.
pub fn child_with(request: &RecordedRequest, text: &str) -> bool {
    is_child(request)
        && request
            .input()
            .iter()
            .any(|item| item.to_string().contains(text))
}

/// Whether a model request is a sub-agent's with a user message that is exactly `task`
/// (its task, or input sent to it later; a tool call's arguments or mail never match).
pub fn child_on(request: &RecordedRequest, task: &str) -> bool {
    is_child(request) && request.message_texts("user").iter().any(|t| t == task)
}

/// Queue a reply for the sub-agent with the user message `task` ([`child_on`]); replies for
/// the same text are served in push order.
pub fn task_says(h: &Harness, task: &str, reply: Reply) {
    let task = task.to_string();
    h.mock
        .push_when(move |r| child_on(r, &task), reply.render(h.wire_api));
}

/// The requests of the sub-agent with the user message `task`, in order.
pub fn child_requests(h: &Harness, task: &str) -> Vec<RecordedRequest> {
    h.mock
        .requests()
        .into_iter()
        .filter(|r| child_on(r, task))
        .collect()
}

/// Queue a reply for the parent (a request that is not a sub-agent's).
pub fn parent_says(h: &Harness, reply: Reply) {
    h.mock.push_when(|r| !is_child(r), reply.render(h.wire_api));
}

/// Queue a parent turn's replies: the ones calling tools, in order, then the text it ends
/// with.
pub fn parent_calls(h: &Harness, calls: impl IntoIterator<Item = Reply>, then: &str) {
    for reply in calls {
        parent_says(h, reply);
    }
    parent_says(h, Reply::new().text(then));
}

/// Queue a reply for the sub-agent whose input mentions `text`.
pub fn child_says(h: &Harness, text: &'static str, reply: Reply) {
    h.mock
        .push_when(move |r| child_with(r, text), reply.render(h.wire_api));
}

/// A parent reply calling a v1 tool.
pub fn v1_call(call_id: &str, tool: &str, arguments: Value) -> Reply {
    namespaced_call(call_id, "multi_agent_v1", tool, &arguments.to_string())
}

/// A parent (or child) reply calling v1 `spawn_agent` with the task `message`.
pub fn spawn_call(call_id: &str, message: impl serde::Serialize) -> Reply {
    v1_call(call_id, "spawn_agent", json!({"message": message}))
}

/// One model reply spawning each of `tasks` (v1 `spawn_agent`), the `n`-th with the call id
/// `call_id(n)`.
pub fn spawn_calls(tasks: &[impl AsRef<str>], call_id: impl Fn(usize) -> String) -> Reply {
    let calls: Vec<(String, &str, Value)> = tasks
        .iter()
        .enumerate()
        .map(|(n, task)| (call_id(n), "spawn_agent", json!({"message": task.as_ref()})))
        .collect();
    v1_calls(&calls)
}

/// One model reply calling several v1 tools: `(call_id, tool, arguments)`, each its own
/// output item.
pub fn v1_calls(calls: &[(String, &str, Value)]) -> Reply {
    let mut reply = Reply::new();
    for (index, (call_id, tool, arguments)) in calls.iter().enumerate() {
        let item = json!({"type": "function_call", "id": format!("fc_{call_id}"),
                          "call_id": call_id, "namespace": "multi_agent_v1", "name": tool,
                          "arguments": arguments.to_string(), "status": "completed"});
        reply = reply
            .raw_event(
                json!({"type": "response.output_item.added", "output_index": index,
                              "item": item.clone()}),
            )
            .raw_event(
                json!({"type": "response.output_item.done", "output_index": index,
                              "item": item}),
            );
    }
    reply
}

/// `turn/start` on `thread` and every message through that thread's `turn/completed`
/// (other threads' messages included, in arrival order).
pub async fn run_parent_turn(client: &mut Client, thread: &str, text: &str) -> Vec<Value> {
    client
        .send_request(
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": text}]}),
        )
        .await;
    read_through_turn_of(client, thread).await
}

/// Every message through `thread`'s next `turn/completed`.
pub async fn read_through_turn_of(client: &mut Client, thread: &str) -> Vec<Value> {
    let thread = thread.to_string();
    read_through(client, move |m| {
        m["method"] == "turn/completed" && m["params"]["threadId"] == thread.as_str()
    })
    .await
}

/// The first of `seen` matching `pred`, else the next message that does.
pub async fn seen_or_wait(
    client: &mut Client,
    seen: &[Value],
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    match seen.iter().find(|m| pred(m)) {
        Some(found) => found.clone(),
        None => client.wait_for(what, pred).await,
    }
}

/// The first message this client ever received matching `pred` (kept in its log even when
/// another read consumed it), else the next one that does.
pub async fn logged_or_wait(
    client: &mut Client,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    if let Some(found) = client.log().iter().find(|m| pred(m)) {
        return found.clone();
    }
    client.wait_for(what, pred).await
}

/// The first `turn/completed` of `thread` the client ever received, else the next one.
pub async fn turn_completed_of(client: &mut Client, thread: &str) -> Value {
    logged_or_wait(client, &format!("turn/completed of {thread}"), |m| {
        m["method"] == "turn/completed" && m["params"]["threadId"] == thread
    })
    .await
}

/// `thread`'s `turn/completed` (a sub-agent's), among `seen` or still to come.
pub async fn wait_turn_completed(client: &mut Client, seen: &[Value], thread: &str) -> Value {
    seen_or_wait(client, seen, &format!("turn/completed of {thread}"), |m| {
        m["method"] == "turn/completed" && m["params"]["threadId"] == thread
    })
    .await
}

/// [`turn_completed_of`] `thread`, checked to have completed.
pub async fn completes(client: &mut Client, thread: &str) -> Value {
    let done = turn_completed_of(client, thread).await;
    assert_eq!(done["params"]["turn"]["status"], "completed", "{done}");
    done
}

/// Queue a parent turn's replies ([`parent_calls`]: `calls`, then the text `then`), and run
/// it on `parent` with the user's `text` ([`run_parent_turn`]).
pub async fn parent_turn(
    h: &mut Harness,
    parent: &str,
    text: &str,
    calls: impl IntoIterator<Item = Reply>,
    then: &str,
) -> Vec<Value> {
    parent_calls(h, calls, then);
    run_parent_turn(&mut h.client, parent, text).await
}

/// One parent turn (`text`) whose model calls v1 `tool` with `args` as `call_id`, then says
/// `then`: the turn's messages, and the call's output as the model got it.
pub async fn v1_step(
    h: &mut Harness,
    parent: &str,
    text: &str,
    (call_id, tool, args): (&str, &str, Value),
    then: &str,
) -> (Vec<Value>, Value) {
    let messages = parent_turn(h, parent, text, [v1_call(call_id, tool, args)], then).await;
    let output = parent_output(h, call_id);
    (messages, output)
}

/// Queue a sub-agent turn's replies for `task` ([`task_says`]): `calls`, then the text `then`.
pub fn task_calls(h: &Harness, task: &str, calls: impl IntoIterator<Item = Reply>, then: &str) {
    for reply in calls {
        task_says(h, task, reply);
    }
    task_says(h, task, Reply::new().text(then));
}

/// One parent turn that spawns a child with `task` (`call_spawn_1`), the child answering with
/// `reply`; the child's id.
pub async fn spawn_one(h: &mut Harness, parent: &str, task: &str, reply: Reply) -> String {
    task_says(h, task, reply);
    let calls = [spawn_call("call_spawn_1", task)];
    let messages = parent_turn(h, parent, "spawn a worker", calls, "spawned").await;
    spawned(&messages, "call_spawn_1")
}

/// [`spawn_one`] with the task "Work slowly.", whose reply (`text`) is held at the gate
/// returned; the child's model request has reached the gate.
pub async fn held_child(h: &mut Harness, parent: &str, text: &str) -> (Gate, String) {
    let gate = Gate::new();
    let held = Reply::new().gate(&gate).text(text);
    let child = spawn_one(h, parent, "Work slowly.", held).await;
    wait_gate(&gate).await;
    (gate, child)
}

/// The ids a listing request answers, sorted.
pub async fn listed(client: &mut Client, method: &str, params: Value) -> Vec<String> {
    sorted(ids(&client.request(method, params).await.unwrap()))
}

/// `ids`, sorted.
pub fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

/// The model output of `call_id` in the parent's requests, parsed as JSON when it is.
pub fn parent_output(h: &Harness, call_id: &str) -> Value {
    let request = h
        .mock
        .requests()
        .into_iter()
        .find(|r| !is_child(r) && r.tool_output(call_id).is_some())
        .unwrap_or_else(|| panic!("no parent request with the output of {call_id}"));
    let text = output_of(&request, call_id);
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// The child a completed spawn item names (the item must have completed).
pub fn spawned(messages: &[Value], call_id: &str) -> String {
    let item = completed_item(messages, call_id);
    assert_eq!(item["status"], "completed", "{item}");
    str_at(item, "/receiverThreadIds/0")
}

/// [`spawned`], checked to be the `agent_id` the parent's model was told.
pub fn spawned_and_told(h: &Harness, messages: &[Value], call_id: &str) -> String {
    let child = spawned(messages, call_id);
    assert_eq!(parent_output(h, call_id)["agent_id"], child.as_str());
    child
}

/// The first request of the sub-agent whose input mentions `text`.
pub fn first_child_request(h: &Harness, text: &str) -> RecordedRequest {
    h.mock
        .requests()
        .into_iter()
        .find(|r| child_with(r, text))
        .unwrap_or_else(|| panic!("no sub-agent request mentioning {text:?}"))
}

/// The types of a request's input items, in order.
pub fn input_types(request: &RecordedRequest) -> Vec<String> {
    request
        .input()
        .iter()
        .filter_map(|item| item["type"].as_str().map(str::to_string))
        .collect()
}

/// The names of the tools a request offers (a namespace's name for a namespace).
pub fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request
        .tools()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}
