//! What the model is offered and what a call of an MCP tool gives: the `mcp__weft` namespace,
//! the resource tools, `mcpToolCall` items, the model's outputs, tool errors, and approvals
//! under each mode and policy (docs/mcp.md §4–§5).

use serde_json::{Value, json};
use weft_mock_model::{Reply, WireApi};
use weft_test_support::Transport;

use super::{
    ELICITATION, Mcp, answer, answer_with, assert_call_failed, assert_wall_time_output,
    completed_call, completed_item, item_event, names, namespace_tools, output_of,
    read_through_turn_completed, wait_request, weft_call,
};

/// The namespace offered for the test server, and the resource tools.
async fn tools_offered_and_a_call_answered(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    t.script(
        [weft_call("call_echo", "echo", json!({"text": "hello mcp"}))],
        "echoed",
    );
    let (_, messages) = t.thread_turn("on-request", "use the tools").await;

    let requests = t.h.wait_for_requests(2).await;
    let tools = requests[0].tools();
    let names = names(tools);
    for name in [
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let namespace = tools
        .iter()
        .find(|t| t["name"] == "mcp__weft")
        .unwrap_or_else(|| panic!("no mcp__weft namespace in {names:?}"));
    assert_eq!(namespace["type"], "namespace");
    assert!(
        namespace["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Weft's MCP test server")),
        "the server's instructions: {namespace}"
    );
    let echo = namespace["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == "echo"))
        .expect("echo offered");
    // FastMCP's schema with its `title`s removed, as the reference offers it.
    assert_eq!(
        echo,
        &json!({"type": "function", "name": "echo",
                "description": echo["description"].clone(), "strict": false,
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                               "required": ["text"]}})
    );
    let weft_tools = namespace_tools(&requests[0], "mcp__weft");
    let tool_names = super::names(&weft_tools);
    for name in ["echo", "add", "fail", "slow", "crash", "pid"] {
        assert!(tool_names.contains(&name), "{name} in {tool_names:?}");
    }

    let started = item_event(&messages, "item/started", "call_echo");
    assert_eq!(
        started["params"]["item"],
        json!({"type": "mcpToolCall", "id": "call_echo", "server": "weft",
               "environmentId": null, "tool": "echo", "status": "inProgress",
               "arguments": {"text": "hello mcp"}, "appContext": null, "mcpAppUi": null,
               "pluginId": null, "readOnlyHint": true, "result": null, "error": null,
               "durationMs": null, "startedAtMs": started["params"]["item"]["startedAtMs"].clone(),
               "completedAtMs": null})
    );
    let done = completed_item(&messages, "call_echo");
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["result"],
        json!({"content": [{"type": "text", "text": "echo: hello mcp"}],
               "structuredContent": {"result": "echo: hello mcp"}, "_meta": null})
    );
    assert!(done["durationMs"].is_i64() && done["completedAtMs"].is_i64());
    assert_wall_time_output(
        &output_of(&requests[1], "call_echo"),
        r#"{"result":"echo: hello mcp"}"#,
    );
}

/// A tool error (`isError`) and a call refused under `never`: both `failed`, with the
/// reference's shapes and outputs.
async fn tool_error_and_never(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    let calls = [
        weft_call("call_add", "add", json!({"a": 2, "b": 3})),
        weft_call("call_fail", "fail", json!({"reason": "on purpose"})),
    ];
    t.script(calls, "done");
    let (_, messages) = t.thread_turn("never", "use the tools").await;
    assert!(
        !messages.iter().any(|m| m["method"] == ELICITATION),
        "never asks"
    );
    let add = completed_item(&messages, "call_add");
    assert_eq!(add["status"], "failed");
    assert_eq!(add["result"], Value::Null);
    assert_eq!(
        add["error"],
        json!({"message": "MCP tool call requires approval, but approval policy is never"})
    );
    let fail = completed_item(&messages, "call_fail");
    assert_eq!(fail["status"], "failed");
    assert_eq!(fail["error"], Value::Null);
    assert_eq!(
        fail["result"]["content"],
        json!([{"type": "text", "text": "Error executing tool fail: on purpose"}])
    );
    let requests = t.h.wait_for_requests(3).await;
    assert_call_failed(
        &requests[1],
        "call_add",
        "MCP tool call requires approval, but approval policy is never",
    );
    assert_call_failed(
        &requests[2],
        "call_fail",
        "Error executing tool fail: on purpose",
    );
}

/// `on-request`: an unannotated tool asks with `mcpServer/elicitation/request` in the
/// reference's order; accept runs it, decline and cancel do not; "for the session" is
/// remembered.
async fn approvals_on_request(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    let calls = (1..=5).map(|n| {
        let call_id = format!("call_{n}");
        weft_call(&call_id, "add", json!({"a": 2 * n - 1, "b": 2 * n}))
    });
    t.script(calls, "done");
    let thread = t.thread("on-request").await;
    let turn = t.h.start_turn(&thread, "add things").await;

    let request = wait_request(&mut t.h.client, ELICITATION).await;
    let params = &request["params"];
    assert_eq!(params["threadId"], thread.as_str());
    assert_eq!(params["turnId"], turn.as_str());
    assert_eq!(params["serverName"], "weft");
    assert_eq!(params["environmentId"], Value::Null);
    assert_eq!(params["mode"], "form");
    assert_eq!(
        params["message"],
        "Allow the weft MCP server to run tool \"add\"?"
    );
    assert_eq!(
        params["requestedSchema"],
        json!({"type": "object", "properties": {}})
    );
    let meta = &params["_meta"];
    assert_eq!(meta["codex_approval_kind"], "mcp_tool_call");
    assert_eq!(meta["persist"], json!(["session", "always"]));
    assert_eq!(meta["tool_name"], "add");
    assert_eq!(meta["tool_params"], json!({"a": 1, "b": 2}));
    assert_eq!(
        meta["tool_params_display"],
        json!([{"name": "a", "value": 1, "display_name": "a"},
               {"name": "b", "value": 2, "display_name": "b"}])
    );
    answer_with(&mut t.h.client, &request, "accept").await;
    for action in ["decline", "cancel"] {
        let request = wait_request(&mut t.h.client, ELICITATION).await;
        answer_with(&mut t.h.client, &request, action).await;
    }
    let request = wait_request(&mut t.h.client, ELICITATION).await;
    answer(
        &mut t.h.client,
        &request,
        json!({"action": "accept", "content": null, "_meta": {"persist": "session"}}),
    )
    .await;
    // call_5: approved for the session, so no request.
    let messages = read_through_turn_completed(&mut t.h.client).await;
    assert!(
        !messages.iter().any(|m| m["method"] == ELICITATION),
        "call_5 asked"
    );

    let log = t.h.client.log().to_vec();
    let order: Vec<String> = log
        .iter()
        .filter(|m| {
            (m["params"]["item"]["id"] == "call_1"
                && (m["method"] == "item/started" || m["method"] == "item/completed"))
                || m["method"] == "thread/status/changed"
                || m["method"] == ELICITATION
                || m["method"] == "serverRequest/resolved"
        })
        .take(6)
        .map(|m| match m["method"].as_str() {
            Some("thread/status/changed") => {
                format!("status {}", m["params"]["status"]["activeFlags"])
            }
            Some(method) => method.to_string(),
            None => String::new(),
        })
        .collect();
    assert_eq!(
        order,
        [
            "status []",
            "item/started",
            "status [\"waitingOnApproval\"]",
            ELICITATION,
            "serverRequest/resolved",
            "status []",
        ]
    );
    let requests = t.h.wait_for_requests(6).await;
    // Each call's output, in the request after it: the result, or the refusal.
    let outcomes = [
        Ok(r#"{"result":3}"#),
        Err("user rejected MCP tool call"),
        Err("user cancelled MCP tool call"),
        Ok(r#"{"result":15}"#),
        Ok(r#"{"result":19}"#),
    ];
    for (n, outcome) in (1..).zip(outcomes) {
        let call_id = format!("call_{n}");
        match outcome {
            Ok(result) => assert_wall_time_output(&output_of(&requests[n], &call_id), result),
            Err(message) => assert_call_failed(&requests[n], &call_id, message),
        }
    }
    let completed =
        t.h.client
            .log()
            .iter()
            .find(|m| m["method"] == "item/completed" && m["params"]["item"]["id"] == "call_2")
            .cloned()
            .expect("call_2 completed");
    assert_eq!(
        completed["params"]["item"]["error"],
        json!({"message": "user rejected MCP tool call"})
    );
}

/// `default_tools_approval_mode = "approve"` runs every tool unasked, even under `untrusted`;
/// a per-tool `prompt` asks even for a read-only tool.
async fn approval_modes(transport: Transport) {
    let extra = "default_tools_approval_mode = \"approve\"\n\
                 [mcp_servers.weft.tools.echo]\napproval_mode = \"prompt\"\n";
    let mut t = Mcp::start_with(transport, extra, "").await;
    let calls = [
        weft_call("call_add", "add", json!({"a": 20, "b": 22})),
        weft_call("call_echo", "echo", json!({"text": "asked"})),
    ];
    t.script(calls, "done");
    let thread = t.thread("untrusted").await;
    t.h.start_turn(&thread, "go").await;
    let request = wait_request(&mut t.h.client, ELICITATION).await;
    assert_eq!(
        request["params"]["_meta"]["tool_name"], "echo",
        "add ran unasked"
    );
    answer_with(&mut t.h.client, &request, "accept").await;
    let messages = read_through_turn_completed(&mut t.h.client).await;
    completed_call(&messages, "call_echo");
    let log = t.h.client.log().to_vec();
    completed_call(&log, "call_add");
    let requests = t.h.wait_for_requests(3).await;
    assert_wall_time_output(&output_of(&requests[1], "call_add"), r#"{"result":42}"#);
}

/// On Chat Completions the tools are the flat functions `mcp__weft__TOOL`, and a call by that
/// name is served.
async fn chat_completions_flat_names(transport: Transport) {
    let mut t = Mcp::start_on(transport, WireApi::Chat, "", "").await;
    let flat = Reply::new().function_call("call_flat", "mcp__weft__echo", r#"{"text": "flat"}"#);
    t.script([flat], "done");
    let (_, messages) = t.thread_turn("never", "go").await;
    let done = completed_item(&messages, "call_flat");
    assert_eq!(done["tool"], "echo");
    assert_eq!(done["status"], "completed");
    let requests = t.h.wait_for_requests(2).await;
    let names: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert!(names.contains(&"mcp__weft__echo"), "{names:?}");
    assert!(names.contains(&"read_mcp_resource"), "{names:?}");
    let output = requests[1].body["messages"]
        .as_array()
        .and_then(|m| {
            m.iter()
                .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_flat")
        })
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    assert_wall_time_output(&output, r#"{"result":"echo: flat"}"#);
}

on_both_transports!(
    tools_offered_and_a_call_answered,
    tool_error_and_never,
    approvals_on_request,
    approval_modes,
    chat_completions_flat_names,
);
