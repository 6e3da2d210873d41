//! An MCP server in the Codex TUI (docs/mcp.md): the real FastMCP test server configured in
//! Weft, its tool called by the model and shown by the TUI, and the TUI's approval of an MCP
//! tool call (`mcpServer/elicitation/request`) answered on screen once it has settled
//! (tests/tui/overlay.rs).

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::mcp_servers;

use crate::overlay::MCP_TOOL;
use crate::{Session, namespaced_call, screen_problems, wait_turn_done};

/// A model reply calling `tool` of the `weft` MCP server.
fn weft_call(call_id: &str, tool: &str, arguments: serde_json::Value) -> Reply {
    namespaced_call(call_id, "mcp__weft", tool, arguments)
}

/// Weft with the FastMCP test server as `weft`. Its start-up may take up to a minute: on a
/// loaded two-core machine the Python SDK's imports alone took more than the default 10 s, and
/// these tests are about what the TUI shows, not how fast a server starts (docs/mcp.md §2).
async fn session(approval: &str) -> Session {
    let server = mcp_servers().test_server_toml("weft", "startup_timeout_sec = 60");
    Session::start_with(approval, &server).await
}

#[tokio::test]
async fn an_mcp_tool_call_shows_in_the_transcript() {
    let s = session("on-request").await;
    let tui = s.ready_tui().await;
    s.push(weft_call(
        "call_echo",
        "echo",
        json!({"text": "from the tui"}),
    ));
    let screen = s
        .prompt(&tui, "Use the echo tool", "The MCP tool answered.")
        .await;
    assert!(
        screen.contains("Called weft.echo"),
        "the call is shown as the reference's TUI shows MCP calls:\n{screen}"
    );
    assert!(
        screen.contains("echo: from the tui"),
        "its result:\n{screen}"
    );
    assert!(screen_problems(&screen).is_empty(), "{screen}");
}

#[tokio::test]
async fn an_mcp_approval_is_answered_on_screen() {
    let s = session("on-request").await;
    let tui = s.ready_tui().await;
    s.push(weft_call("call_add", "add", json!({"a": 20, "b": 22})));
    s.push(Reply::new().text("Added with approval."));
    tui.submit("Add the numbers").await;
    let overlay = MCP_TOOL.wait(&tui).await;
    let screen = overlay.screen();
    assert!(screen.contains("Calling weft.add"), "{screen}");
    assert!(screen.contains(r#"run tool "add"?"#), "{screen}");
    // Enter picks the selected option, `Allow`.
    overlay.choose(&tui, "Run the tool and continue").await;
    let screen = wait_turn_done(&tui, "Added with approval.").await;
    let requests = s.wait_for_requests(2).await;
    let output = requests[1]
        .tool_output("call_add")
        .cloned()
        .unwrap_or_default();
    assert!(
        output
            .as_str()
            .is_some_and(|o| o.ends_with("\nOutput:\n{\"result\":42}")),
        "the call ran after the approval: {output}\n{screen}"
    );
    assert!(screen.contains("Called weft.add"), "{screen}");
}
