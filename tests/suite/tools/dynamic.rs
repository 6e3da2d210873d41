//! Client-defined tools, `thread/start.dynamicTools` (docs/protocol.md §9.6): what the model is
//! offered, a call becoming `item/tool/call` and a `dynamicToolCall` item, every way an answer
//! can end (answered, `success: false`, a JSON-RPC error, an interrupt, the asked connection
//! gone), the validation texts, and the tools kept across a restart and a fork. The shapes and
//! texts are the reference's (0.171.0, checked by running it).

use serde_json::{Value, json};
use weft_mock_model::{MockModel, Reply, WireApi};
use weft_test_support::{Client, Daemon, TestHome, Transport, mock_model_config};

use super::{
    answer, completed_item, item_event, namespaced_call, output_of, read_through_turn_completed,
    wait_request,
};
use crate::requests::Requests;
use crate::turns::read_through_turn_ending;
use crate::turns::{
    Harness, Setup, assert_invalid_request, model_requests, str_at, turn_start_params,
};

const TOOL_CALL: &str = "item/tool/call";
const CANCELLED: &str = "dynamic tool call was cancelled before receiving a response";

/// A plain tool, a namespace with one offered and one deferred tool.
fn tools() -> Value {
    json!([
        {"type": "function", "name": "lookup", "description": "Look a thing up.",
         "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}},
                         "required": ["q"]}},
        {"type": "namespace", "name": "myns", "description": "My namespace.", "tools": [
            {"type": "function", "name": "ns_tool", "description": "A namespaced tool.",
             "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            {"type": "function", "name": "ns_deferred", "description": "Deferred.",
             "inputSchema": {"type": "object", "properties": {}}, "deferLoading": true}
        ]}
    ])
}

/// What the model is offered for [`tools`]: the deferred tool is left out.
fn offered() -> Vec<Value> {
    vec![
        json!({"type": "function", "name": "lookup", "description": "Look a thing up.",
               "strict": false,
               "parameters": {"type": "object", "properties": {"q": {"type": "string"}},
                              "required": ["q"]}}),
        json!({"type": "namespace", "name": "myns", "description": "My namespace.", "tools": [
            {"type": "function", "name": "ns_tool", "description": "A namespaced tool.",
             "strict": false,
             "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}
        ]}),
    ]
}

/// A harness whose client initialized with `experimentalApi`.
async fn harness(transport: Transport) -> Harness {
    Harness::start(Setup::new(transport).init_params(experimental_init())).await
}

fn experimental_init() -> Value {
    json!({"clientInfo": {"name": "weft-e2e", "version": "0.1.0"},
           "capabilities": {"experimentalApi": true}})
}

/// `thread/start` with [`tools`]; waits for `thread/started`.
async fn start_thread(client: &mut Client, cwd: &str) -> String {
    let result = client
        .request(
            "thread/start",
            json!({"cwd": cwd, "approvalPolicy": "never", "sandbox": "read-only",
                   "dynamicTools": tools()}),
        )
        .await
        .unwrap_or_else(|err| panic!("thread/start failed: {err}"));
    let thread = str_at(&result, "/thread/id");
    client
        .wait_for("`thread/started`", |m| m["method"] == "thread/started")
        .await;
    thread
}

/// A thread with [`tools`] in the home folder and a turn on it with `text`: the thread, the
/// turn, and the turn's first `item/tool/call` request.
async fn tool_call_turn(h: &mut Harness, text: &str) -> (String, String, Value) {
    let cwd = h.home.path().display().to_string();
    let thread = start_thread(&mut h.client, &cwd).await;
    let turn = h.start_turn(&thread, text).await;
    let request = wait_request(&mut h.client, TOOL_CALL).await;
    (thread, turn, request)
}

/// One `inputText` content item.
fn text_parts(text: &str) -> Value {
    json!([{"type": "inputText", "text": text}])
}

/// Answer an `item/tool/call` request with these content items and `success`.
async fn answer_call(client: &mut Client, request: &Value, items: Value, success: bool) {
    let result = json!({"contentItems": items, "success": success});
    answer(client, request, result).await;
}

/// The dynamic tools of a model request.
fn dynamic_tools_of(tools: &[Value]) -> Vec<Value> {
    tools
        .iter()
        .filter(|t| {
            t["name"] == "lookup"
                || (t["type"] == "namespace" && t["name"] != "multi_agent_v1")
                || t["name"] == "myns__ns_tool"
        })
        .cloned()
        .collect()
}

/// A plain tool called and answered: the item, the request, the output the model gets.
async fn plain_call_answered(transport: Transport) {
    let mut h = harness(transport).await;
    h.push(Reply::new().function_call("call_1", "lookup", r#"{"q": "abc"}"#));
    h.push(Reply::new().text("The tool finished."));
    let (thread, turn, request) = tool_call_turn(&mut h, "look it up").await;
    assert_eq!(
        request["params"],
        json!({"threadId": thread, "turnId": turn, "callId": "call_1", "namespace": null,
               "tool": "lookup", "arguments": {"q": "abc"}})
    );
    answer_call(&mut h.client, &request, text_parts("answer text"), true).await;
    read_through_turn_ending(&mut h.client, "completed").await;
    let all = h.client.log().to_vec();
    let started = &item_event(&all, "item/started", "call_1")["params"]["item"];
    assert_eq!(started["type"], "dynamicToolCall");
    assert_eq!(started["status"], "inProgress");
    assert_eq!(started["contentItems"], Value::Null);
    assert_eq!(started["success"], Value::Null);
    assert_eq!(started["durationMs"], Value::Null);
    let done = completed_item(&all, "call_1");
    assert_eq!(done["status"], "completed");
    assert_eq!(done["namespace"], Value::Null);
    assert_eq!(done["tool"], "lookup");
    assert_eq!(done["arguments"], json!({"q": "abc"}));
    assert_eq!(done["contentItems"], text_parts("answer text"));
    assert_eq!(done["success"], true);
    assert!(done["durationMs"].is_i64(), "{done}");
    // The item starts before the request; no `serverRequest/resolved` (as the reference).
    let position = |pred: &dyn Fn(&Value) -> bool| all.iter().position(pred).unwrap();
    assert!(
        position(&|m| m["method"] == "item/started" && m["params"]["item"]["id"] == "call_1")
            < position(&|m| m["method"] == TOOL_CALL)
    );
    assert!(all.iter().all(|m| m["method"] != "serverRequest/resolved"));
    let requests = h.wait_for_requests(2).await;
    assert_eq!(dynamic_tools_of(requests[0].tools()), offered());
    assert_eq!(output_of(&requests[1], "call_1"), "answer text");
}

/// A namespaced tool answered with `success: false` and two parts: the item fails, the model
/// gets both parts.
async fn namespaced_call_failed(transport: Transport) {
    let mut h = harness(transport).await;
    h.push(namespaced_call("call_ns", "myns", "ns_tool", r#"{"x": 1}"#));
    h.push(Reply::new().text("The tool finished."));
    let (_thread, _turn, request) = tool_call_turn(&mut h, "use the namespace").await;
    assert_eq!(request["params"]["namespace"], "myns");
    assert_eq!(request["params"]["tool"], "ns_tool");
    assert_eq!(request["params"]["arguments"], json!({"x": 1}));
    let parts = json!([{"type": "inputText", "text": "one"}, {"type": "inputText", "text": "two"}]);
    answer_call(&mut h.client, &request, parts.clone(), false).await;
    read_through_turn_completed(&mut h.client).await;
    let all = h.client.log().to_vec();
    let done = completed_item(&all, "call_ns");
    assert_eq!(done["status"], "failed");
    assert_eq!(done["namespace"], "myns");
    assert_eq!(done["success"], false);
    assert_eq!(done["contentItems"], parts);
    let requests = h.wait_for_requests(2).await;
    assert_eq!(
        requests[1].tool_output("call_ns"),
        Some(
            &json!([{"type": "input_text", "text": "one"}, {"type": "input_text", "text": "two"}])
        )
    );
}

/// A JSON-RPC error answer, and a result that does not parse: the item fails with the
/// reference's text, which is also what the model gets; the turn goes on.
#[tokio::test]
async fn error_answers() {
    for (reply, text) in [
        (
            json!({"error": {"code": -32000, "message": "client exploded"}}),
            "dynamic tool request failed",
        ),
        (
            json!({"result": {"bogus": 1}}),
            "dynamic tool response was invalid",
        ),
    ] {
        let mut h = harness(Transport::Stdio).await;
        h.push(Reply::new().function_call("call_e", "lookup", "{}"));
        h.push(Reply::new().text("Moving on."));
        let (_thread, _turn, request) = tool_call_turn(&mut h, "try it").await;
        let mut reply = reply;
        reply["id"] = request["id"].clone();
        h.client.send_json(reply).await;
        read_through_turn_ending(&mut h.client, "completed").await;
        let all = h.client.log().to_vec();
        let done = completed_item(&all, "call_e");
        assert_eq!(done["status"], "failed");
        assert_eq!(done["success"], false);
        assert_eq!(done["contentItems"], text_parts(text));
        assert_eq!(h.output_in(2, "call_e").await, text);
    }
}

/// `turn/interrupt` while the client has not answered: the item fails with no content, the
/// turn is interrupted, a late answer is ignored, and the model later sees the cancellation.
async fn interrupt_withdraws(transport: Transport) {
    let mut h = harness(transport).await;
    h.push(Reply::new().function_call("call_i", "lookup", "{}"));
    let (thread, turn, request) = tool_call_turn(&mut h, "wait for it").await;
    h.client.interrupt(&thread, &turn).await.unwrap();
    read_through_turn_ending(&mut h.client, "interrupted").await;
    let all = h.client.log().to_vec();
    let done = completed_item(&all, "call_i");
    assert_eq!(done["status"], "failed");
    assert_eq!(done["contentItems"], json!([]));
    assert_eq!(done["success"], false);
    assert!(all.iter().all(|m| m["method"] != "serverRequest/resolved"));
    // A late answer changes nothing.
    answer_call(&mut h.client, &request, json!([]), true).await;
    h.push(Reply::new().text("Next."));
    let next = h.run_turn(&thread, "next").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    assert_eq!(h.output_in(2, "call_i").await, CANCELLED);
}

/// The only connection asked goes away while another subscriber stays: the request is
/// cancelled and the turn goes on (the model is told), rather than waiting forever.
#[tokio::test]
async fn asked_connection_closes() {
    let mut h = harness(Transport::Ws).await;
    h.push(Reply::new().function_call("call_c", "lookup", "{}"));
    h.push(Reply::new().text("Without an answer."));
    let (thread, _turn, _request) = tool_call_turn(&mut h, "ask and leave").await;
    let mut other = h.second_client().await;
    other
        .request_ok("thread/resume", json!({"threadId": thread}))
        .await;
    h.client.close().await;
    let messages = read_through_turn_ending(&mut other, "completed").await;
    let done = completed_item(&messages, "call_c");
    assert_eq!(done["status"], "failed");
    assert_eq!(h.output_in(2, "call_c").await, CANCELLED);
}

/// `dynamicTools` needs `experimentalApi`; bad lists are refused with the reference's texts.
#[tokio::test]
async fn validation() {
    let mut h = Harness::responses(Transport::Stdio).await;
    let answer = h
        .client
        .request("thread/start", json!({"dynamicTools": tools()}))
        .await;
    assert_invalid_request(
        answer,
        "thread/start.dynamicTools requires experimentalApi capability",
    );
    let mut h = harness(Transport::Stdio).await;
    let function = |name: &str| json!({"type": "function", "name": name, "description": "d", "inputSchema": {}});
    let mut deferred = function("hidden");
    deferred["deferLoading"] = json!(true);
    for (tools, message) in [
        (
            json!([function("a"), function("a")]),
            "duplicate dynamic tool name: a",
        ),
        (
            json!([function("bad name")]),
            "dynamic tool name must match ^[a-zA-Z0-9_-]+$ to match Responses API: bad name",
        ),
        (
            json!([function("mcp__x")]),
            "dynamic tool name is reserved: mcp__x",
        ),
        (
            json!([deferred]),
            "deferred dynamic tool must include a namespace: hidden",
        ),
        (
            json!([{"type": "namespace", "name": "ns", "description": "d", "tools": []}]),
            "dynamic tool namespace must contain at least one tool: ns",
        ),
    ] {
        let answer = h
            .client
            .request("thread/start", json!({"dynamicTools": tools}))
            .await;
        assert_invalid_request(answer, message);
    }
    // An empty list is a thread without dynamic tools.
    h.client
        .request_ok("thread/start", json!({"dynamicTools": []}))
        .await;
}

/// The tools are kept with the thread: after a restart, `thread/resume` (by a client without
/// `experimentalApi`) offers them again and shows the call in the history; a fork inherits them.
async fn resume_and_fork_keep_the_tools(transport: Transport) {
    let mock = MockModel::start().await.expect("start the mock model");
    let home = TestHome::with_config(&mock_model_config(&mock.base_url(), "responses"));
    let mut daemon = Daemon::start(transport, &home, &[]).await;
    let mut client = daemon.client().await;
    client.initialize_with(experimental_init()).await;
    mock.push(
        Reply::new()
            .function_call("call_r", "lookup", r#"{"q": "x"}"#)
            .responses(),
    );
    mock.push(Reply::new().text("Done.").responses());
    let cwd = home.path().display().to_string();
    let thread = start_thread(&mut client, &cwd).await;
    client
        .request_ok("turn/start", turn_start_params(&thread, "first"))
        .await;
    let request = wait_request(&mut client, TOOL_CALL).await;
    answer_call(&mut client, &request, text_parts("x!"), true).await;
    read_through_turn_completed(&mut client).await;

    daemon.sigterm();
    daemon.wait_exit().await;
    let mut daemon = Daemon::start(transport, &home, &[]).await;
    let mut client = daemon.initialized_client().await;
    let resumed = client
        .request_ok("thread/resume", json!({"threadId": thread}))
        .await;
    let items = &resumed["thread"]["turns"][0]["items"];
    let call = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "dynamicToolCall")
        .unwrap_or_else(|| panic!("no dynamicToolCall in {items}"));
    assert_eq!(call["status"], "completed");
    assert_eq!(call["contentItems"], text_parts("x!"));
    mock.push(Reply::new().text("Again.").responses());
    client
        .request_ok("turn/start", turn_start_params(&thread, "second"))
        .await;
    read_through_turn_completed(&mut client).await;
    let requests = model_requests(&mock, 3).await;
    assert_eq!(dynamic_tools_of(requests[2].tools()), offered());

    let fork = client
        .request_ok("thread/fork", json!({"threadId": thread}))
        .await;
    let fork = str_at(&fork, "/thread/id");
    mock.push(
        Reply::new()
            .function_call("call_f", "lookup", "{}")
            .responses(),
    );
    mock.push(Reply::new().text("Forked.").responses());
    client
        .request_ok("turn/start", turn_start_params(&fork, "in the fork"))
        .await;
    let request = wait_request(&mut client, TOOL_CALL).await;
    assert_eq!(request["params"]["threadId"], fork.as_str());
    answer_call(&mut client, &request, json!([]), true).await;
    read_through_turn_completed(&mut client).await;
    let requests = model_requests(&mock, 5).await;
    assert_eq!(dynamic_tools_of(requests[3].tools()), offered());
    assert_eq!(requests[4].tool_output("call_f"), Some(&json!([])));
    daemon.sigterm();
    daemon.wait_exit().await;
}

/// Chat Completions has no namespaces: a namespaced tool is offered as `<namespace>__<name>`,
/// and a call by that name reaches the client with its namespace.
#[tokio::test]
async fn chat_flattens_namespaces() {
    let mut h = Harness::start(
        Setup::new(Transport::Stdio)
            .wire_api(WireApi::Chat)
            .init_params(experimental_init()),
    )
    .await;
    h.push(Reply::new().function_call("call_chat", "myns__ns_tool", r#"{"x": 2}"#));
    h.push(Reply::new().text("Flat."));
    let (_thread, _turn, request) = tool_call_turn(&mut h, "chat").await;
    assert_eq!(request["params"]["namespace"], "myns");
    assert_eq!(request["params"]["tool"], "ns_tool");
    answer_call(&mut h.client, &request, text_parts("ok"), true).await;
    read_through_turn_completed(&mut h.client).await;
    let requests = h.wait_for_requests(2).await;
    let names: Vec<&str> = requests[0]
        .tools()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"lookup") && names.contains(&"myns__ns_tool"),
        "{names:?}"
    );
    assert!(!names.contains(&"myns__ns_deferred"), "{names:?}");
    let history = requests[1].messages();
    let call = history
        .iter()
        .find_map(|m| m["tool_calls"].as_array().and_then(|c| c.first()))
        .unwrap();
    assert_eq!(call["function"]["name"], "myns__ns_tool");
}

on_both_transports!(
    plain_call_answered,
    namespaced_call_failed,
    interrupt_withdraws,
    resume_and_fork_keep_the_tools
);
