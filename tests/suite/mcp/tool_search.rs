//! `[features] tool_search` (docs/mcp.md §4): MCP tools deferred behind a client-executed
//! `tool_search` on the Responses API, as the reference does for gpt-5.5: the first request
//! has `tool_search` and the `<tools>` section instead of the `mcp__weft` namespace, a
//! `tool_search_call` is answered by Weft's own `tool_search_output` (both replayed), and a
//! found tool is called as a namespaced function. Chat Completions keeps the tools inline.

use serde_json::{Value, json};
use weft_mock_model::{Reply, WireApi};
use weft_test_support::Transport;

use super::{
    Harness, Mcp, Setup, assert_wall_time_output, completed_call, completed_item, output_of,
    read_through_turn_completed, weft_call,
};
use crate::tools::start_thread;

/// Tool search on; the multi-agent tools off, so only MCP tools are deferred (with them on,
/// `multi_agent_v1` is deferred too: tests/suite/agents/clients.rs).
const FEATURE: &str = "[features]\ntool_search = true\nmulti_agent = false\n";

/// A model reply asking Weft to search its deferred tools.
pub fn search_call(call_id: &str, arguments: Value) -> Reply {
    let item = json!({"type": "tool_search_call", "id": format!("tsc_{call_id}"),
                      "call_id": call_id, "status": "completed", "execution": "client",
                      "arguments": arguments});
    Reply::new()
        .raw_event(
            json!({"type": "response.output_item.added", "output_index": 0, "item": item.clone()}),
        )
        .raw_event(json!({"type": "response.output_item.done", "output_index": 0, "item": item}))
}

fn tool_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| {
            t["name"]
                .as_str()
                .or_else(|| t["type"].as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// Deferred, searched, found, called: the whole exchange.
async fn search_then_call(transport: Transport) {
    let mut t = Mcp::start_with(transport, "", FEATURE).await;
    let calls = [
        search_call("call_ts", json!({"query": "echo text back", "limit": 3})),
        weft_call("call_echo", "echo", json!({"text": "deferred"})),
    ];
    t.script(calls, "done");
    let (_, messages) = t.thread_turn("never", "use the weft tools").await;
    let requests = t.h.wait_for_requests(3).await;

    // First request: resource tools and `tool_search`, no namespace; the `<tools>` section.
    let names = tool_names(requests[0].tools());
    assert!(!names.iter().any(|n| n == "mcp__weft"), "{names:?}");
    assert!(names.iter().any(|n| n == "read_mcp_resource"), "{names:?}");
    let search = requests[0]
        .tools()
        .iter()
        .find(|t| t["type"] == "tool_search")
        .unwrap_or_else(|| panic!("no tool_search in {names:?}"));
    assert_eq!(search["execution"], "client");
    assert_eq!(search["parameters"]["required"], json!(["query"]));
    let developer = requests[0].message_texts("developer");
    let section = developer
        .iter()
        .find(|text| text.starts_with("<tools>"))
        .unwrap_or_else(|| panic!("no <tools> section in {developer:?}"));
    assert!(
        section
            .starts_with("<tools>\nDeferred tool namespaces:\n- mcp__weft: Weft's MCP test server")
            && section.ends_with("\n</tools>")
            && section.lines().count() == 4,
        "{section:?}"
    );

    // Second request: the call replayed, then Weft's output with `echo` deferred.
    let calls: Vec<&Value> = requests[1].inputs_of_type("tool_search_call").collect();
    assert_eq!(
        calls,
        [
            &json!({"type": "tool_search_call", "call_id": "call_ts", "status": "completed",
                 "execution": "client", "arguments": {"query": "echo text back", "limit": 3}})
        ]
    );
    let outputs: Vec<&Value> = requests[1].inputs_of_type("tool_search_output").collect();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    let output = outputs[0];
    assert_eq!(
        (&output["call_id"], &output["status"], &output["execution"]),
        (&json!("call_ts"), &json!("completed"), &json!("client"))
    );
    let found = output["tools"].as_array().expect("tools");
    assert_eq!(found.len(), 1, "one namespace: {found:?}");
    assert_eq!(found[0]["type"], "namespace");
    assert_eq!(found[0]["name"], "mcp__weft");
    let functions = found[0]["tools"].as_array().expect("functions");
    assert!(functions.len() <= 3, "the limit: {functions:?}");
    assert_eq!(
        functions[0],
        json!({"type": "function", "name": "echo",
               "description": functions[0]["description"].clone(), "strict": false,
               "defer_loading": true,
               "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                              "required": ["text"]}}),
        "echo ranks first"
    );
    let at = |kind: &str| {
        requests[1]
            .input()
            .iter()
            .position(|i| i["type"] == kind)
            .unwrap()
    };
    assert_eq!(
        at("tool_search_output"),
        at("tool_search_call") + 1,
        "output after its call"
    );
    assert!(
        !tool_names(requests[1].tools())
            .iter()
            .any(|n| n == "mcp__weft")
    );

    // The found tool is called and served; the search itself is no thread item.
    let done = completed_item(&messages, "call_echo");
    assert_eq!(
        (&done["tool"], &done["status"]),
        (&json!("echo"), &json!("completed"))
    );
    assert_wall_time_output(
        &output_of(&requests[2], "call_echo"),
        r#"{"result":"echo: deferred"}"#,
    );
    assert_eq!(requests[2].inputs_of_type("tool_search_output").count(), 1);
    let kinds: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "item/started")
        .filter_map(|m| m["params"]["item"]["type"].as_str())
        .collect();
    assert_eq!(kinds, ["userMessage", "mcpToolCall", "agentMessage"]);
}

/// A deferred tool the model calls without searching is still served (the pool knows it).
async fn a_deferred_tool_called_unsearched(transport: Transport) {
    let mut t = Mcp::start_with(transport, "", FEATURE).await;
    t.script(
        [weft_call("call_direct", "echo", json!({"text": "direct"}))],
        "done",
    );
    let (_, messages) = t.thread_turn("never", "go").await;
    completed_call(&messages, "call_direct");
    let requests = t.h.wait_for_requests(2).await;
    assert_wall_time_output(
        &output_of(&requests[1], "call_direct"),
        r#"{"result":"echo: direct"}"#,
    );
}

/// On Chat Completions the feature changes nothing: the flat functions, no `tool_search`.
async fn chat_completions_stays_inline(transport: Transport) {
    let mut t = Mcp::start_on(transport, WireApi::Chat, "", FEATURE).await;
    t.script([], "done");
    t.thread_turn("never", "go").await;
    let requests = t.h.wait_for_requests(1).await;
    let tools = requests[0].tools();
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(names.contains(&"mcp__weft__echo"), "{names:?}");
    assert!(
        !tools.iter().any(|t| t["type"] == "tool_search"),
        "{tools:?}"
    );
    let body = requests[0].body.to_string();
    assert!(!body.contains("Deferred tool namespaces"), "{body}");
}

/// With the feature on but no MCP server: no `tool_search`, no `<tools>` section.
async fn no_servers_no_search(transport: Transport) {
    let mut h = Harness::start(Setup::new(transport).config(FEATURE)).await;
    h.push(Reply::new().text("hi"));
    let cwd = h.home.path().display().to_string();
    let thread = start_thread(&mut h.client, &cwd, "never", "read-only").await;
    h.start_turn(&thread, "hello").await;
    read_through_turn_completed(&mut h.client).await;
    let requests = h.wait_for_requests(1).await;
    assert!(
        !requests[0]
            .tools()
            .iter()
            .any(|t| t["type"] == "tool_search"),
        "{:?}",
        requests[0].tools()
    );
    assert!(
        !requests[0]
            .message_texts("developer")
            .iter()
            .any(|text| text.starts_with("<tools>"))
    );
}

on_both_transports!(
    search_then_call,
    a_deferred_tool_called_unsearched,
    chat_completions_stays_inline,
    no_servers_no_search,
);
