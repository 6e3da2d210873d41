//! Every approval mode under every approval policy (docs/mcp.md §5), and a server's own
//! question (`elicitation/create`) forwarded to the client as `mcpServer/elicitation/request`.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{
    ELICITATION, Mcp, answer, answer_with, completed_item, read_through_turn_completed, weft_call,
};

const NEVER: &str = "MCP tool call requires approval, but approval policy is never";

/// Runs one turn calling `echo` (read-only) then `add` (no annotations), accepting every
/// approval; returns the tools that asked, and the two completed items.
async fn run(t: &mut Mcp, policy: &str) -> (Vec<String>, Value, Value) {
    let calls = [
        weft_call("call_echo", "echo", json!({"text": "x"})),
        weft_call("call_add", "add", json!({"a": 1, "b": 2})),
    ];
    t.script(calls, "done");
    let thread = t.thread(policy).await;
    let start = t.h.client.log().len();
    t.h.start_turn(&thread, "both").await;
    let mut asked = Vec::new();
    loop {
        let message =
            t.h.client
                .wait_for("an approval or the end of the turn", |m| {
                    m["method"] == ELICITATION || m["method"] == "turn/completed"
                })
                .await;
        if message["method"] == "turn/completed" {
            break;
        }
        asked.push(
            message["params"]["_meta"]["tool_name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
        answer_with(&mut t.h.client, &message, "accept").await;
    }
    let log = t.h.client.log()[start..].to_vec();
    let echo = completed_item(&log, "call_echo").clone();
    let add = completed_item(&log, "call_add").clone();
    (asked, echo, add)
}

async fn every_mode_under_every_policy(transport: Transport) {
    for mode in ["auto", "writes", "prompt", "approve"] {
        let extra = format!("default_tools_approval_mode = \"{mode}\"");
        let mut t = Mcp::start_with(transport, &extra, "").await;
        for policy in ["untrusted", "on-request", "never"] {
            let (asked, echo, add) = run(&mut t, policy).await;
            let case = format!("{mode} under {policy}");
            let expected: &[&str] = match (mode, policy) {
                ("approve", _) | (_, "never") => &[],
                ("prompt", _) => &["echo", "add"],
                _ => &["add"],
            };
            assert_eq!(asked, expected, "{case}: asked");
            let refused = |item: &Value| item["error"] == json!({"message": NEVER});
            match (mode, policy) {
                ("approve", _) => {
                    assert_eq!(echo["status"], "completed", "{case}");
                    assert_eq!(add["status"], "completed", "{case}");
                }
                ("prompt", "never") => {
                    assert!(refused(&echo) && refused(&add), "{case}: {echo} {add}");
                }
                (_, "never") => {
                    assert_eq!(echo["status"], "completed", "{case}");
                    assert!(refused(&add), "{case}: {add}");
                }
                _ => {
                    assert_eq!(echo["status"], "completed", "{case}");
                    assert_eq!(add["status"], "completed", "{case}");
                }
            }
        }
    }
}

/// The test server's `ask_user` asks the user through MCP elicitation: Weft forwards it to
/// the client in form mode, and the client's answer goes back to the server.
async fn a_server_question_reaches_the_client(transport: Transport) {
    let extra = "default_tools_approval_mode = \"approve\"";
    let mut t = Mcp::start_with(transport, extra, "").await;
    let calls = [
        weft_call("call_ask", "ask_user", json!({"question": "Which colour?"})),
        weft_call("call_ask_2", "ask_user", json!({"question": "Again?"})),
    ];
    t.script(calls, "asked");
    let thread = t.thread("on-request").await;
    let turn = t.h.start_turn(&thread, "ask").await;
    let request = super::wait_request(&mut t.h.client, ELICITATION).await;
    let params = &request["params"];
    assert_eq!(params["threadId"], thread.as_str());
    assert_eq!(params["turnId"], turn.as_str());
    assert_eq!(params["serverName"], "weft");
    assert_eq!(params["mode"], "form");
    assert_eq!(params["message"], "Which colour?");
    let properties = params["requestedSchema"]["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let field = properties
        .keys()
        .next()
        .cloned()
        .unwrap_or_else(|| panic!("a form field: {params}"));
    answer(
        &mut t.h.client,
        &request,
        json!({"action": "accept", "content": {field.clone(): "teal"}, "_meta": null}),
    )
    .await;
    let request = super::wait_request(&mut t.h.client, ELICITATION).await;
    answer_with(&mut t.h.client, &request, "decline").await;
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let first = completed_item(&messages, "call_ask");
    let text = first["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("teal"), "the server got the answer: {first}");
    let second = completed_item(&messages, "call_ask_2");
    assert_eq!(second["result"]["content"][0]["text"], "declined");
}

on_both_transports!(
    every_mode_under_every_policy,
    a_server_question_reaches_the_client,
);
