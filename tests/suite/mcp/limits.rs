//! The numbers in an MCP server's config (docs/mcp.md §2–§4): `startup_timeout_sec` for a
//! server that never answers its handshake, `tool_timeout_sec` for a call that takes too long,
//! `enabled_tools` / `disabled_tools`, and an oversized result cut before it enters the
//! history, with the cut said.

use serde_json::json;
use weft_test_support::Transport;

use super::{Mcp, completed_item, eventually, names, namespace_tools, output_of, weft_call};

/// A "server" that never speaks: `failed` once `startup_timeout_sec` has passed.
async fn startup_timeout(transport: Transport) {
    let silent =
        "[mcp_servers.silent]\ncommand = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_sec = 1\n";
    let mut t = Mcp::start_with(transport, "", silent).await;
    let (_, failed) = t.thread_failing("silent").await;
    assert_eq!(
        failed["params"]["error"],
        "MCP server did not start within 1.0 s"
    );
}

/// A call longer than `tool_timeout_sec` fails with the timeout, and the server is told to
/// stop (`notifications/cancelled`).
async fn tool_timeout(transport: Transport) {
    let mut t = Mcp::start_with(transport, "tool_timeout_sec = 1", "").await;
    t.script(
        [weft_call(
            "call_slow",
            "slow",
            json!({"seconds": 10, "steps": 20}),
        )],
        "gave up",
    );
    let (_, messages) = t.thread_turn("never", "sleep").await;
    let done = completed_item(&messages, "call_slow");
    assert_eq!(done["status"], "failed");
    assert_eq!(
        done["error"]["message"],
        "tool call error: timed out after 1.0 s awaiting the MCP server's answer"
    );
    eventually("the server was told to stop the call", || {
        t.event_lines().iter().any(|line| line == "cancelled slow")
    })
    .await;
}

/// `enabled_tools` offers only the named tools, `disabled_tools` takes some away, and a call
/// of a tool that is not offered is not served as an MCP call.
async fn tool_filters(transport: Transport) {
    let mut t = Mcp::start_with(
        transport,
        "enabled_tools = [\"echo\", \"add\", \"fail\"]\ndisabled_tools = [\"fail\"]",
        "",
    )
    .await;
    t.script([weft_call("call_pid", "pid", json!({}))], "done");
    let (_, messages) = t.thread_turn("never", "filters").await;
    let requests = t.h.wait_for_requests(2).await;
    let offered = namespace_tools(&requests[0], "mcp__weft");
    assert_eq!(names(&offered), ["echo", "add"], "in the server's order");
    assert!(
        !messages
            .iter()
            .any(|m| m["method"] == "item/started" && m["params"]["item"]["type"] == "mcpToolCall"),
        "pid is not offered, so it is not called"
    );
    let output = output_of(&requests[1], "call_pid");
    assert!(output.starts_with("unsupported call: pid"), "{output}");
}

/// A result far over the history budget reaches the model cut, with the cut said; the item
/// keeps the whole result.
async fn oversized_result_is_truncated(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    let big = "word ".repeat(40_000);
    t.script(
        [weft_call("call_big", "echo", json!({"text": big}))],
        "done",
    );
    let (_, messages) = t.thread_turn("never", "big").await;
    let item = completed_item(&messages, "call_big");
    let full = item["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        full.len(),
        "echo: ".len() + big.len(),
        "the item has it all"
    );
    let requests = t.h.wait_for_requests(2).await;
    let output = output_of(&requests[1], "call_big");
    assert!(output.len() < 100_000, "cut: {} bytes", output.len());
    assert!(output.contains("tokens truncated"), "the cut is said");
    assert!(output.starts_with("Wall time: "), "{}", &output[..40]);
}

on_both_transports!(
    startup_timeout,
    tool_timeout,
    tool_filters,
    oversized_result_is_truncated,
);
