//! Approvals (docs/protocol.md §9): every decision for commands and patches, escalation under
//! `on-request`, and an approval left pending by an interrupt or a disconnect.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{
    Tools, answer, completed_item, exec_call, item_status, output_of, outside_file, patch_call,
    read_through, wait_request,
};
use crate::requests::{Requests, interrupt_params, thread_status};
use crate::turns::read_through_turn_ending;
use crate::turns::{label, user_texts};

const COMMAND_REJECTED: &str =
    "exec_command failed: CreateProcess { message: \"Rejected(\\\"rejected by user\\\")\" }";
const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
const FILE_APPROVAL: &str = "item/fileChange/requestApproval";

/// Starts an `untrusted` thread whose first model reply runs `touch <file> && echo created`,
/// and returns it with the thread id, the turn id and the approval request.
async fn pending_command(transport: Transport, file: &str) -> (Tools, String, String, Value) {
    let mut t = Tools::start(transport).await;
    t.push_command("call_touch", &format!("touch {file} && echo created"));
    let thread = t.thread("untrusted", "danger-full-access").await;
    let turn = t.h.start_turn(&thread, "create a file please").await;
    let request = wait_request(&mut t.h.client, COMMAND_APPROVAL).await;
    (t, thread, turn, request)
}

/// The labels of the messages of the approval sequence, statuses with their flags.
fn approval_labels(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| {
            let method = m["method"].as_str()?;
            match method {
                "thread/status/changed" => {
                    let flags = &m["params"]["status"]["activeFlags"];
                    Some(format!(
                        "status:{}{}",
                        m["params"]["status"]["type"].as_str().unwrap_or("?"),
                        if flags == &json!(["waitingOnApproval"]) {
                            "+waiting"
                        } else {
                            ""
                        }
                    ))
                }
                "item/started" | "item/completed"
                    if m["params"]["item"]["type"] == "commandExecution"
                        || m["params"]["item"]["type"] == "fileChange" =>
                {
                    Some(label(m))
                }
                "serverRequest/resolved" | COMMAND_APPROVAL | FILE_APPROVAL => {
                    Some(method.to_string())
                }
                _ => None,
            }
        })
        .collect()
}

async fn command_accept(transport: Transport) {
    let (mut t, thread, turn, request) = pending_command(transport, "approved.txt").await;
    let params = &request["params"];
    for (field, expected) in [
        ("threadId", thread.as_str()),
        ("turnId", turn.as_str()),
        ("itemId", "call_touch"),
        ("kind", "command"),
        ("environmentId", "local"),
    ] {
        assert_eq!(params[field], expected, "{field}");
    }
    t.assert_command(params, "touch approved.txt && echo created");
    assert!(!t.path("approved.txt").exists(), "ran before the approval");
    // The thread's own status says what it waits on, not only the notification.
    let status = thread_status(&mut t.h.client, &thread).await;
    assert_eq!(
        status,
        json!({"type": "active", "activeFlags": ["waitingOnApproval"]})
    );
    t.push(Reply::new().text("Done after approval decision."));
    t.decide(&request, "accept", "completed").await;
    assert!(t.path("approved.txt").exists());
    let all = t.h.client.log().to_vec();
    assert_eq!(
        approval_labels(&all),
        [
            "status:active",
            "status:active+waiting",
            "item/started:commandExecution",
            COMMAND_APPROVAL,
            "serverRequest/resolved",
            "status:active",
            "item/completed:commandExecution",
            "status:idle"
        ]
    );
    let resolved = all
        .iter()
        .find(|m| m["method"] == "serverRequest/resolved")
        .unwrap();
    assert_eq!(resolved["params"]["requestId"], request["id"]);
    let item = completed_item(&all, "call_touch");
    assert_eq!(item["status"], "completed");
    assert_eq!(item["exitCode"], 0);
    assert!(
        t.h.output_in(2, "call_touch")
            .await
            .ends_with("Output:\ncreated\n")
    );
    t.finish().await;
}

async fn command_decline(transport: Transport) {
    let (mut t, _thread, _turn, request) = pending_command(transport, "declined.txt").await;
    t.push(Reply::new().text("Done after approval decision."));
    t.decide(&request, "decline", "completed").await;
    assert!(!t.path("declined.txt").exists());
    let all = t.h.client.log().to_vec();
    assert_eq!(
        approval_labels(&all)[3..],
        [
            COMMAND_APPROVAL,
            "serverRequest/resolved",
            "item/completed:commandExecution",
            "status:active",
            "status:idle"
        ]
    );
    let item = completed_item(&all, "call_touch");
    assert_eq!(item["status"], "declined");
    assert_eq!(item["exitCode"], Value::Null);
    assert_eq!(t.h.output_in(2, "call_touch").await, COMMAND_REJECTED);
    t.finish().await;
}

async fn command_cancel(transport: Transport) {
    let (mut t, _thread, _turn, request) = pending_command(transport, "cancelled.txt").await;
    let messages = t.decide(&request, "cancel", "interrupted").await;
    let completed = &messages.last().unwrap()["params"]["turn"];
    assert_eq!(completed["status"], "interrupted");
    assert_eq!(completed["error"], Value::Null);
    assert!(!t.path("cancelled.txt").exists());
    let all = t.h.client.log().to_vec();
    assert_eq!(completed_item(&all, "call_touch")["status"], "declined");
    assert!(all.iter().all(|m| m["method"] != "error"));
    // No further model request in this turn.
    assert_eq!(t.h.mock.requests().len(), 1);
    t.finish().await;
}

/// An error answer and an answer that does not parse both fail the item; the turn goes on.
#[tokio::test]
async fn command_approval_errors() {
    for (file, reply) in [
        (
            "error.txt",
            json!({"error": {"code": -32000, "message": "client exploded"}}),
        ),
        ("maybe.txt", json!({"result": {"decision": "maybe"}})),
    ] {
        let (mut t, _thread, _turn, request) = pending_command(Transport::Stdio, file).await;
        t.push(Reply::new().text("Moving on."));
        let mut reply = reply;
        reply["id"] = request["id"].clone();
        t.h.client.send_json(reply).await;
        read_through_turn_ending(&mut t.h.client, "completed").await;
        assert!(!t.path(file).exists());
        let all = t.h.client.log().to_vec();
        assert_eq!(completed_item(&all, "call_touch")["status"], "failed");
        let output = t.h.output_in(2, "call_touch").await;
        assert!(
            output.starts_with("exec_command failed: the approval request failed"),
            "{output}"
        );
        t.finish().await;
    }
}

/// `acceptForSession` is remembered for that exact command for the rest of the thread; another
/// command still asks; `accept` is good for one run.
#[tokio::test]
async fn command_accept_for_session() {
    let (mut t, thread, _turn, request) = pending_command(Transport::Stdio, "again.txt").await;
    t.push(Reply::new().text("First."));
    t.decide(&request, "acceptForSession", "completed").await;
    assert!(t.path("again.txt").exists());
    std::fs::remove_file(t.path("again.txt")).unwrap();

    // The same command in the next turn runs without asking.
    t.push_command("call_again", "touch again.txt && echo created");
    t.push(Reply::new().text("Second."));
    let run = t.h.run_turn(&thread, "once more").await;
    assert!(
        !run.messages.iter().any(|m| m["method"] == COMMAND_APPROVAL),
        "asked again"
    );
    assert_eq!(item_status(&run.messages, "call_again"), "completed");
    assert!(t.path("again.txt").exists());

    // Another command asks.
    t.push_command("call_other", "touch other.txt");
    t.push(Reply::new().text("Third."));
    let turn = t.h.start_turn(&thread, "something else").await;
    let request = wait_request(&mut t.h.client, COMMAND_APPROVAL).await;
    assert_eq!(request["params"]["itemId"], "call_other");
    assert_eq!(request["params"]["turnId"], turn.as_str());
    t.decide(&request, "accept", "completed").await;
    assert!(t.path("other.txt").exists());
    t.finish().await;
}

/// `on-request`: a sandboxed command runs without asking; `require_escalated` asks with the
/// model's justification and, once accepted, runs outside the sandbox.
#[tokio::test]
async fn on_request_escalation() {
    let mut t = Tools::start(Transport::Stdio).await;
    let (_outside, target) = outside_file("escalated.txt");
    t.push(exec_call(
        "call_escalate",
        json!({"cmd": format!("touch {} && echo written", target.display()),
               "sandbox_permissions": "require_escalated",
               "justification": "The file lives outside the workspace."}),
    ));
    t.push(Reply::new().text("Written."));
    let thread = t.thread("on-request", "workspace-write").await;
    let request = t
        .turn_asking(&thread, "write outside", COMMAND_APPROVAL)
        .await;
    assert_eq!(
        request["params"]["reason"],
        "The file lives outside the workspace."
    );
    t.decide(&request, "accept", "completed").await;
    assert!(target.exists());
    // The escalation parameters are offered under on-request.
    let requests = t.h.wait_for_requests(2).await;
    let exec = &requests[0].tools()[0];
    assert!(exec["parameters"]["properties"]["sandbox_permissions"].is_object());
    t.finish().await;
}

/// Patches under `on-request` + `read-only` (as the reference's `patch_approval`): every patch
/// asks; `accept` writes, `decline` does not, `acceptForSession` stops asking for those files,
/// `cancel` ends the turn.
async fn patch_decisions(transport: Transport) {
    let mut t = Tools::start(transport).await;
    let add = "*** Begin Patch\n*** Add File: hello.txt\n+hello from apply_patch\n*** End Patch\n";
    t.push(patch_call("call_patch", add));
    t.push(Reply::new().text("Patched."));
    let thread = t.thread("on-request", "read-only").await;
    let request = t
        .turn_asking(&thread, "add a hello file", FILE_APPROVAL)
        .await;
    assert_eq!(request["params"]["itemId"], "call_patch");
    assert!(!t.path("hello.txt").exists());
    t.decide(&request, "accept", "completed").await;
    assert_eq!(t.read("hello.txt"), "hello from apply_patch\n");
    let all = t.h.client.log().to_vec();
    assert_eq!(
        approval_labels(&all),
        [
            "status:active",
            "item/started:fileChange",
            "status:active+waiting",
            FILE_APPROVAL,
            "serverRequest/resolved",
            "status:active",
            "item/completed:fileChange",
            "status:idle"
        ]
    );
    let started = all
        .iter()
        .find(|m| m["method"] == "item/started" && m["params"]["item"]["id"] == "call_patch")
        .unwrap();
    assert_eq!(
        started["params"]["item"]["changes"][0]["diff"],
        "hello from apply_patch\n"
    );
    assert!(
        all.iter().any(|m| m["method"] == "turn/diff/updated"),
        "no turn/diff/updated"
    );

    // decline: nothing written, the model is told, the turn goes on.
    let update = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello from apply_patch\n+changed\n*** End Patch\n";
    t.push(patch_call("call_declined", update));
    t.push(Reply::new().text("Not patched."));
    let request = t.turn_asking(&thread, "change it", FILE_APPROVAL).await;
    let messages = t.decide(&request, "decline", "completed").await;
    assert_eq!(item_status(&messages, "call_declined"), "declined");
    assert_eq!(t.read("hello.txt"), "hello from apply_patch\n");
    let requests = t.h.wait_for_requests(4).await;
    assert_eq!(
        output_of(&requests[3], "call_declined"),
        "patch rejected by user"
    );

    // acceptForSession: later patches to the same file do not ask.
    t.push(patch_call("call_session", update));
    t.push(patch_call(
        "call_again",
        "*** Begin Patch\n*** Update File: hello.txt\n@@\n-changed\n+changed again\n*** End Patch\n",
    ));
    t.push(Reply::new().text("Patched twice."));
    let request = t
        .turn_asking(&thread, "change it twice", FILE_APPROVAL)
        .await;
    assert_eq!(request["params"]["itemId"], "call_session");
    let messages = t.decide(&request, "acceptForSession", "completed").await;
    assert!(
        !messages
            .iter()
            .any(|m| m["method"] == FILE_APPROVAL && m["params"]["itemId"] == "call_again"),
        "asked again for the same file"
    );
    assert_eq!(item_status(&messages, "call_again"), "completed");
    assert_eq!(t.read("hello.txt"), "changed again\n");

    // cancel: nothing written, the turn is interrupted.
    t.push(patch_call(
        "call_cancel",
        "*** Begin Patch\n*** Add File: other.txt\n+x\n*** End Patch\n",
    ));
    let request = t.turn_asking(&thread, "add another", FILE_APPROVAL).await;
    let messages = t.decide(&request, "cancel", "interrupted").await;
    assert_eq!(item_status(&messages, "call_cancel"), "declined");
    assert!(!t.path("other.txt").exists());
    t.finish().await;
}

/// `turn/interrupt` while an approval is pending: the request is withdrawn
/// (`serverRequest/resolved`), the item completes `declined`, the turn ends `interrupted`.
async fn approval_pending_during_interrupt(transport: Transport) {
    let (mut t, thread, turn, request) = pending_command(transport, "never.txt").await;
    let answer_id =
        t.h.client
            .send_request("turn/interrupt", interrupt_params(&thread, &turn))
            .await;
    let messages = read_through_turn_ending(&mut t.h.client, "interrupted").await;
    assert!(messages.iter().any(|m| m.get("id") == Some(&answer_id)));
    assert_eq!(item_status(&messages, "call_touch"), "declined");
    // The withdrawal is announced (possibly just after turn/completed).
    let request_id = request["id"].clone();
    let resolved = |m: &Value| {
        m["method"] == "serverRequest/resolved" && m["params"]["requestId"] == request_id
    };
    if !messages.iter().any(resolved) {
        t.h.client
            .wait_for("serverRequest/resolved for the withdrawn request", resolved)
            .await;
    }
    // A late answer is dropped; the thread takes a new turn.
    answer(&mut t.h.client, &request, json!({"decision": "accept"})).await;
    t.push(Reply::new().text("Fresh start."));
    let run = t.h.run_turn(&thread, "next").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    assert!(!t.path("never.txt").exists());
    t.finish().await;
}

/// The only subscriber disconnects while an approval is pending: the request is cancelled,
/// the turn ends `interrupted` (seen by another connection through the broadcast status) and
/// the thread takes new turns.
#[tokio::test]
async fn approval_pending_during_disconnect() {
    let (mut t, thread, _turn, _request) = pending_command(Transport::Ws, "gone.txt").await;
    let mut other = t.h.second_client().await;
    t.h.client.close().await;
    let idle = |thread: String| {
        move |m: &Value| {
            m["method"] == "thread/status/changed"
                && m["params"]["threadId"] == thread.as_str()
                && m["params"]["status"]["type"] == "idle"
        }
    };
    other
        .wait_for("the thread going idle", idle(thread.clone()))
        .await;
    assert!(!t.path("gone.txt").exists());
    // The other connection starts the next turn; the model sees the rejected command and the
    // interruption marker.
    t.push(Reply::new().text("Back again."));
    other
        .turn_start(&thread, "hello?")
        .await
        .expect("turn/start");
    read_through(&mut other, idle(thread.clone())).await;
    let requests = t.h.wait_for_requests(2).await;
    assert_eq!(output_of(&requests[1], "call_touch"), COMMAND_REJECTED);
    assert!(
        user_texts(&requests[1])
            .iter()
            .any(|t| t.contains("<turn_aborted>"))
    );
    t.finish().await;
}

on_both_transports!(
    command_accept,
    command_decline,
    command_cancel,
    patch_decisions,
    approval_pending_during_interrupt
);
