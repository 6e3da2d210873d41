//! Plan mode: Weft's instructions reach the model as a `<collaboration_mode>` developer
//! message, the turn is read-only (no `apply_patch`, commands in a read-only sandbox, no
//! escalation), the mode is sticky and reported by `thread/resume`; a client's own
//! instructions replace Weft's text; switching to Default lifts the restrictions;
//! `update_plan` is refused there.

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{Modes, in_mode, mode, mode_messages, tool_names};
use crate::tools::{cmd, completed_item, exec_call, output_of, patch_call, sandbox_unavailable};
use crate::turns::str_at;

async fn plan_mode_is_read_only(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let started = m
        .thread(json!({"approvalPolicy": "on-request", "sandbox": "workspace-write"}))
        .await;
    let thread = str_at(&started, "/thread/id");
    let patch = "*** Begin Patch\n*** Add File: planned.txt\n+no\n*** End Patch\n";
    m.push(patch_call("call_patch", patch));
    m.push(exec_call(
        "call_escalate",
        json!({"cmd": "touch escalated.txt", "sandbox_permissions": "require_escalated", "justification": "need it"}),
    ));
    m.push(exec_call("call_touch", cmd("touch touched.txt")));
    m.push(Reply::new().text("<proposed_plan>Write the files.</proposed_plan>"));
    let messages = m.turn(&thread, "make the files", in_mode("plan")).await;
    let completed = messages.last().unwrap();
    assert_eq!(completed["params"]["turn"]["status"], "completed");
    // No approval was asked for: the escalation is refused outright.
    assert!(
        !messages
            .iter()
            .any(|msg| msg["method"] == "item/commandExecution/requestApproval"),
        "{messages:?}"
    );
    let requests = m.h.wait_for_requests(4).await;
    let first = &requests[0];
    let modes = mode_messages(first);
    assert_eq!(modes.len(), 1, "{modes:?}");
    assert!(
        modes[0].starts_with("<collaboration_mode># Weft collaboration mode: Plan"),
        "{}",
        modes[0]
    );
    assert!(modes[0].ends_with("</collaboration_mode>"));
    let tools = tool_names(first);
    assert!(!tools.contains(&"apply_patch".to_string()), "{tools:?}");
    assert!(
        tools.contains(&"request_user_input".to_string()),
        "{tools:?}"
    );
    assert!(
        output_of(&requests[1], "call_patch")
            .starts_with("apply_patch is not available in Plan mode"),
    );
    assert!(output_of(&requests[2], "call_escalate").starts_with("Plan mode is read-only"),);
    let touch = output_of(&requests[3], "call_touch");
    if !sandbox_unavailable(&touch) {
        assert_eq!(
            completed_item(&messages, "call_touch")["status"],
            "failed",
            "{touch}"
        );
    }
    for name in ["planned.txt", "escalated.txt", "touched.txt"] {
        assert!(!m.ws.join(name).exists(), "{name} was written in Plan mode");
    }
    // The mode is sticky: the next turn needs no new mode message, and stays read-only.
    m.push(patch_call("call_patch2", patch));
    m.push(Reply::new().text("Still planning."));
    m.turn(&thread, "go on", json!({})).await;
    let requests = m.h.wait_for_requests(6).await;
    assert_eq!(mode_messages(&requests[4]).len(), 1);
    assert!(output_of(&requests[5], "call_patch2").starts_with("apply_patch is not available"));
    // thread/resume reports the mode with its resolved instructions.
    let resumed =
        m.h.client
            .request_ok("thread/resume", json!({"threadId": thread}))
            .await;
    let reported = &resumed["collaborationMode"];
    assert_eq!(reported["mode"], "plan");
    assert_eq!(reported["settings"]["model"], "mock-model");
    assert!(
        reported["settings"]["developer_instructions"]
            .as_str()
            .unwrap()
            .starts_with("# Weft collaboration mode: Plan")
    );
    // Back to Default: a new mode message, and apply_patch works again.
    m.push(patch_call("call_patch3", patch));
    m.push(Reply::new().text("Done."));
    let messages = m.turn(&thread, "now do it", in_mode("default")).await;
    assert_eq!(
        completed_item(&messages, "call_patch3")["status"],
        "completed"
    );
    let requests = m.h.wait_for_requests(8).await;
    let modes = mode_messages(&requests[6]);
    assert_eq!(modes.len(), 2, "{modes:?}");
    assert!(modes[1].starts_with("<collaboration_mode># Weft collaboration mode: Default"));
    assert!(tool_names(&requests[6]).contains(&"apply_patch".to_string()));
    assert!(m.ws.join("planned.txt").exists());
}

async fn own_instructions_replace_the_mode_text(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let thread = m.plain_thread().await;
    m.push(Reply::new().text("Planning my way."));
    m.turn(
        &thread,
        "plan",
        json!({"collaborationMode": mode("plan", Some("Plan it my way."))}),
    )
    .await;
    let requests = m.h.wait_for_requests(1).await;
    assert_eq!(
        mode_messages(&requests[0]),
        ["<collaboration_mode>Plan it my way.</collaboration_mode>"]
    );
    let resumed =
        m.h.client
            .request_ok("thread/resume", json!({"threadId": thread}))
            .await;
    assert_eq!(
        resumed["collaborationMode"]["settings"]["developer_instructions"],
        "Plan it my way."
    );
}

async fn threads_without_a_mode_get_no_mode_message(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let thread = m.plain_thread().await;
    m.push(Reply::new().text("Hi."));
    m.turn(&thread, "hello", json!({})).await;
    let requests = m.h.wait_for_requests(1).await;
    assert!(mode_messages(&requests[0]).is_empty());
    let tools = tool_names(&requests[0]);
    assert!(
        !tools.contains(&"request_user_input".to_string()),
        "{tools:?}"
    );
    assert!(tools.contains(&"apply_patch".to_string()), "{tools:?}");
    let resumed =
        m.h.client
            .request_ok("thread/resume", json!({"threadId": thread}))
            .await;
    assert_eq!(
        resumed["collaborationMode"],
        json!({"mode": "default", "settings": {"model": "mock-model", "reasoning_effort": null, "developer_instructions": null}})
    );
}

/// The checklist tool is offered in Plan mode but refused, as the reference refuses it: no
/// `plan` item, no `turn/plan/updated`, the reference's words for the model.
async fn update_plan_is_refused_in_plan_mode(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let thread = m.plain_thread().await;
    let plan = json!({"plan": [{"step": "Read", "status": "in_progress"}]}).to_string();
    m.push(Reply::new().function_call("call_plan", "update_plan", plan));
    m.push(Reply::new().text("<proposed_plan>Read it.</proposed_plan>"));
    let messages = m.turn(&thread, "plan it", in_mode("plan")).await;
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    assert!(
        !messages
            .iter()
            .any(|msg| msg["method"] == "turn/plan/updated"),
        "{messages:?}"
    );
    let requests = m.h.wait_for_requests(2).await;
    assert!(tool_names(&requests[0]).iter().any(|n| n == "update_plan"));
    assert_eq!(
        output_of(&requests[1], "call_plan"),
        "update_plan is a TODO/checklist tool and is not allowed in Plan mode"
    );
}

on_both_transports!(
    update_plan_is_refused_in_plan_mode,
    plan_mode_is_read_only,
    own_instructions_replace_the_mode_text,
    threads_without_a_mode_get_no_mode_message,
);
