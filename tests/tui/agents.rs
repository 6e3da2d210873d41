//! Sub-agents in the Codex TUI (docs/agents.md): the model spawns a worker with the v1 tools
//! and waits for it; the TUI shows the multi-agent calls from Weft's `collabAgentToolCall`
//! items, and the worker's own turn runs beside the parent's.

use serde_json::json;
use weft_mock_model::{RecordedRequest, Reply};

use crate::{Session, is_title_request, namespaced_call, screen_problems, wait_turn_done};

/// A parent reply calling a v1 tool.
fn v1_call(call_id: &str, tool: &str, arguments: serde_json::Value) -> Reply {
    namespaced_call(call_id, "multi_agent_v1", tool, arguments)
}

fn is_child(request: &RecordedRequest) -> bool {
    request.header("x-openai-subagent") == Some("collab_spawn")
}

/// The parent's own turn requests: not the worker's, and not the TUI's title side request
/// (it has a standing reply, and may come before the parent's second request).
fn is_parent_turn(request: &RecordedRequest) -> bool {
    !is_child(request) && !is_title_request(request)
}

#[tokio::test]
async fn a_spawned_worker_shows_in_the_transcript() {
    let s = Session::start("never").await;
    let tui = s.ready_tui().await;
    s.mock.push_when(
        is_parent_turn,
        v1_call(
            "call_spawn",
            "spawn_agent",
            json!({"message": "Reply with the single word PONG."}),
        )
        .responses(),
    );
    s.mock.push_when(
        is_parent_turn,
        Reply::new().text("The worker is on it.").responses(),
    );
    s.mock
        .push_when(is_child, Reply::new().text("PONG").responses());
    tui.submit("Spawn a worker").await;
    let screen = wait_turn_done(&tui, "The worker is on it.").await;
    assert!(screen_problems(&screen).is_empty(), "{screen}");
    let child = s
        .mock
        .wait_for_request(
            "the worker's request",
            is_child,
            std::time::Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert!(
        child
            .message_texts("user")
            .iter()
            .any(|t| t == "Reply with the single word PONG.")
    );
    // The TUI shows the spawn from Weft's `collabAgentToolCall` item: the agent and its task.
    let id = child.header("thread-id").expect("the worker's thread id");
    assert!(screen.contains(&format!("Spawned {id}")), "{screen}");
    assert!(
        screen.contains("└ Reply with the single word PONG."),
        "{screen}"
    );
}
