//! The guardian (`approvalsReviewer: "auto_review"`, docs/protocol.md §9.8): an `on-request`
//! escalation reviewed by a model (its request carries no tools and the action quoted), allowed
//! and run, denied with the reviewer's reason and then overridden by the user
//! (`thread/approveGuardianDeniedAction`), and a reviewer that errs, answers garbage or times
//! out handing the question to the client as a normal approval; a patch reviewed too, the
//! decisions in the rollout, and the reviewer echoed by `thread/start`.

use serde_json::{Value, json};
use weft_mock_model::{RecordedRequest, Reply, Script};
use weft_test_support::{Client, Transport};

use crate::tools::{
    Tools, answer, completed_item, exec_call, outside_file, patch_call, read_through_turn_ending,
    str_at, wait_request,
};
use crate::turns::{Harness, INVALID_REQUEST, Setup, label, user_texts};

const ALLOW: &str = r#"{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"The user asked for this file."}"#;
const DENY: &str = r#"{"outcome":"deny","risk_level":"high","user_authorization":"low","rationale":"Creating files outside the task was not requested."}"#;
const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
const APPROVAL_NOTE: &str = "The user approved an action that automatic review had denied.";

/// A harness whose config sets these extra keys, with a workspace.
async fn tools_with(transport: Transport, toml: &str) -> Tools {
    let h = Harness::start(Setup::new(transport).config(toml)).await;
    let ws = h.home.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws = std::fs::canonicalize(&ws).unwrap();
    Tools { h, ws }
}

/// `thread/start` (`on-request`, `workspace-write`) with this reviewer; the response.
async fn reviewed_thread(client: &mut Client, cwd: &str, reviewer: &str) -> Value {
    let result = client
        .request(
            "thread/start",
            json!({"cwd": cwd, "approvalPolicy": "on-request", "sandbox": "workspace-write",
                   "approvalsReviewer": reviewer}),
        )
        .await
        .unwrap_or_else(|err| panic!("thread/start failed: {err}"));
    let id = str_at(&result, "/thread/id");
    client
        .wait_for("thread/started", |m| {
            m["method"] == "thread/started" && m["params"]["thread"]["id"] == id.as_str()
        })
        .await;
    result
}

/// A model reply asking to run `script` outside the sandbox.
fn escalated(call_id: &str, script: &str) -> Reply {
    exec_call(
        call_id,
        json!({"cmd": script, "sandbox_permissions": "require_escalated",
               "justification": "needs to write the file"}),
    )
}

/// The labels of the review sequence: the command's item, the reviews, warnings, approvals.
fn review_labels(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(label)
        .filter(|l| {
            l.starts_with("item/autoApprovalReview/")
                || l == "guardianWarning"
                || l == COMMAND_APPROVAL
                || l.ends_with(":commandExecution")
                || l.ends_with(":fileChange")
        })
        .collect()
}

/// The one message with this method.
fn only<'a>(messages: &'a [Value], method: &str) -> &'a Value {
    let found: Vec<&Value> = messages.iter().filter(|m| m["method"] == method).collect();
    assert_eq!(found.len(), 1, "{method}: {messages:?}");
    found[0]
}

/// The reviewer's request: no tools, the policy as instructions, the action quoted.
fn assert_review_request(request: &RecordedRequest, quoted: &str) {
    assert_eq!(
        request.tools(),
        &[] as &[Value],
        "the reviewer is offered no tools"
    );
    let instructions = request.body["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("You review one action"),
        "{instructions}"
    );
    let texts = user_texts(request);
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(
        texts[0].contains("<action>") && texts[0].contains(quoted),
        "{}",
        texts[0]
    );
}

async fn an_allowed_command_runs_without_asking(transport: Transport) {
    let mut t = tools_with(transport, "").await;
    let cwd = t.ws.display().to_string();
    let started = reviewed_thread(&mut t.h.client, &cwd, "auto_review").await;
    assert_eq!(started["approvalsReviewer"], "auto_review");
    let thread = str_at(&started, "/thread/id");
    t.push(escalated("call_ok", "touch made.txt && echo made"));
    t.push(Reply::new().text(ALLOW));
    t.push(Reply::new().text("Done."));
    let turn = t.h.start_turn(&thread, "please create made.txt").await;
    let messages = read_through_turn_ending(&mut t.h.client, "completed").await;
    assert_eq!(
        review_labels(&messages),
        [
            "item/started:commandExecution",
            "item/autoApprovalReview/started",
            "guardianWarning",
            "item/autoApprovalReview/completed",
            "item/completed:commandExecution",
        ]
    );
    assert!(t.path("made.txt").exists());
    let started = &only(&messages, "item/autoApprovalReview/started")["params"];
    assert_eq!(started["threadId"], thread.as_str());
    assert_eq!(started["turnId"], turn.as_str());
    assert_eq!(started["targetItemId"], "call_ok");
    assert_eq!(started["review"]["status"], "inProgress");
    assert_eq!(started["action"]["type"], "command");
    assert_eq!(started["action"]["source"], "unifiedExec");
    assert_eq!(started["action"]["cwd"], cwd.as_str());
    let done = &only(&messages, "item/autoApprovalReview/completed")["params"];
    assert_eq!(done["reviewId"], started["reviewId"]);
    assert_eq!(done["decisionSource"], "agent");
    assert_eq!(
        done["review"],
        json!({"status": "approved", "riskLevel": "low", "userAuthorization": "high",
               "rationale": "The user asked for this file."})
    );
    assert!(done["completedAtMs"].as_i64() >= done["startedAtMs"].as_i64());
    let warning = &only(&messages, "guardianWarning")["params"];
    assert_eq!(warning["threadId"], thread.as_str());
    assert!(
        warning["message"].as_str().unwrap().contains("allowed"),
        "{warning}"
    );
    assert_eq!(completed_item(&messages, "call_ok")["status"], "completed");
    let requests = t.h.wait_for_requests(3).await;
    assert_review_request(&requests[1], "touch made.txt && echo made");
    assert!(user_texts(&requests[1])[0].contains("please create made.txt"));
    // The decision is in the rollout.
    t.h.client
        .request(
            "thread/name/set",
            json!({"threadId": thread, "name": "flushed"}),
        )
        .await
        .unwrap();
    let rollouts = rollout_texts(t.h.home.path());
    assert!(
        rollouts
            .iter()
            .any(|r| r.contains("\"type\":\"guardian_review\"") && r.contains("\"approved\"")),
        "no guardian_review record"
    );
    // The reviewer is part of the recorded turn context: a fork keeps it.
    let fork =
        t.h.client
            .request("thread/fork", json!({"threadId": thread}))
            .await
            .unwrap();
    assert_eq!(fork["approvalsReviewer"], "auto_review");
    t.finish().await;
}

/// Every `.jsonl` file's text under `dir`.
fn rollout_texts(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(rollout_texts(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    out
}

async fn a_denied_command_fails_with_the_reason_and_the_user_overrides_it(transport: Transport) {
    let mut t = tools_with(transport, "").await;
    let cwd = t.ws.display().to_string();
    let started = reviewed_thread(&mut t.h.client, &cwd, "guardian_subagent").await;
    assert_eq!(started["approvalsReviewer"], "guardian_subagent");
    let thread = str_at(&started, "/thread/id");
    t.push(escalated("call_no", "touch denied.txt"));
    t.push(Reply::new().text(DENY));
    t.push(Reply::new().text("It was denied."));
    t.h.start_turn(&thread, "make denied.txt").await;
    let messages = read_through_turn_ending(&mut t.h.client, "completed").await;
    assert_eq!(
        review_labels(&messages),
        [
            "item/started:commandExecution",
            "item/autoApprovalReview/started",
            "guardianWarning",
            "item/autoApprovalReview/completed",
            "item/completed:commandExecution",
        ]
    );
    assert!(!t.path("denied.txt").exists());
    assert_eq!(completed_item(&messages, "call_no")["status"], "declined");
    let done = only(&messages, "item/autoApprovalReview/completed")["params"].clone();
    assert_eq!(done["review"]["status"], "denied");
    assert_eq!(done["review"]["riskLevel"], "high");
    let output = t.h.output_in(3, "call_no").await;
    assert!(
        output.contains("Reason: Creating files outside the task was not requested."),
        "{output}"
    );

    // A malformed event is refused with the reference's error; the thread must exist.
    let err =
        t.h.client
            .request(
                "thread/approveGuardianDeniedAction",
                json!({"threadId": thread, "event": {"id": "x", "status": "denied"}}),
            )
            .await
            .unwrap_err();
    assert_eq!(err.code, INVALID_REQUEST);
    assert!(
        err.message.starts_with("invalid Guardian denial event: "),
        "{}",
        err.message
    );

    // The client sends the denial back as the reference's core event (snake_case).
    let event = json!({
        "id": done["reviewId"], "target_item_id": done["targetItemId"], "turn_id": done["turnId"],
        "started_at_ms": done["startedAtMs"], "completed_at_ms": done["completedAtMs"],
        "status": "denied", "risk_level": "high", "user_authorization": "low",
        "rationale": done["review"]["rationale"], "decision_source": "agent",
        "action": {"type": "command", "source": "unified_exec",
                   "command": done["action"]["command"], "cwd": done["action"]["cwd"]},
    });
    let result =
        t.h.client
            .request(
                "thread/approveGuardianDeniedAction",
                json!({"threadId": thread, "event": event}),
            )
            .await
            .unwrap();
    assert_eq!(result, json!({}));
    // The next turn: the model and the reviewer both see the user's approval; allowed, it runs.
    t.push(escalated("call_again", "touch denied.txt"));
    t.push(Reply::new().text(ALLOW));
    t.push(Reply::new().text("Done now."));
    t.h.start_turn(&thread, "the user approved it, try again")
        .await;
    let messages = read_through_turn_ending(&mut t.h.client, "completed").await;
    assert_eq!(
        completed_item(&messages, "call_again")["status"],
        "completed"
    );
    assert!(t.path("denied.txt").exists());
    let requests = t.h.wait_for_requests(6).await;
    assert!(
        user_texts(&requests[3])
            .iter()
            .any(|m| m.starts_with(APPROVAL_NOTE)),
        "the model sees the approval"
    );
    assert!(
        user_texts(&requests[4])[0].contains(APPROVAL_NOTE),
        "the reviewer sees it"
    );
    t.finish().await;
}

/// A reviewer that cannot decide: the client is asked as without the guardian, and its
/// answer decides. `toml` configures the daemon, `reply` is the reviewer's response.
async fn falls_back_to_the_user(transport: Transport, toml: &str, reply: Script, status: &str) {
    let mut t = tools_with(transport, toml).await;
    let cwd = t.ws.display().to_string();
    let started = reviewed_thread(&mut t.h.client, &cwd, "auto_review").await;
    let thread = str_at(&started, "/thread/id");
    t.push(escalated("call_ask", "touch asked.txt"));
    t.h.push_script(reply);
    t.push(Reply::new().text("Done after asking."));
    t.h.start_turn(&thread, "make asked.txt").await;
    let request = wait_request(&mut t.h.client, COMMAND_APPROVAL).await;
    assert!(
        !t.path("asked.txt").exists(),
        "ran before the user answered"
    );
    assert_eq!(request["params"]["itemId"], "call_ask");
    answer(&mut t.h.client, &request, json!({"decision": "accept"})).await;
    let rest = read_through_turn_ending(&mut t.h.client, "completed").await;
    assert!(t.path("asked.txt").exists());
    let all = t.h.client.log().to_vec();
    let labels = review_labels(&all);
    assert_eq!(
        labels,
        [
            "item/started:commandExecution",
            "item/autoApprovalReview/started",
            "guardianWarning",
            "item/autoApprovalReview/completed",
            COMMAND_APPROVAL,
            "item/completed:commandExecution",
        ]
    );
    let done = &only(&all, "item/autoApprovalReview/completed")["params"];
    assert_eq!(done["review"]["status"], status, "{done}");
    assert!(
        done["review"]["rationale"]
            .as_str()
            .unwrap()
            .contains("asking the user")
    );
    assert_eq!(completed_item(&rest, "call_ask")["status"], "completed");
    t.finish().await;
}

async fn a_garbled_answer_asks_the_user(transport: Transport) {
    let garbage = Reply::new().text("Sure, allow it! {\"outcome\":\"allow\"}");
    falls_back_to_the_user(transport, "", garbage.responses(), "aborted").await;
}

async fn a_failing_reviewer_asks_the_user(transport: Transport) {
    let error = Script::api_error(400, "invalid_request_error", "the reviewer model is gone");
    falls_back_to_the_user(transport, "", error, "aborted").await;
}

async fn a_slow_reviewer_asks_the_user(transport: Transport) {
    let slow = Reply::new()
        .text(ALLOW)
        .delay(std::time::Duration::from_secs(5));
    falls_back_to_the_user(
        transport,
        "[guardian]\ntimeout_secs = 1\n",
        slow.responses(),
        "timedOut",
    )
    .await;
}

async fn a_patch_outside_the_workspace_is_reviewed(transport: Transport) {
    let mut t = tools_with(transport, "").await;
    let cwd = t.ws.display().to_string();
    let started = reviewed_thread(&mut t.h.client, &cwd, "auto_review").await;
    let thread = str_at(&started, "/thread/id");
    let (_dir, outside) = outside_file("reviewed.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+reviewed\n*** End Patch",
        outside.display()
    );
    t.push(patch_call("call_patch", &patch));
    t.push(Reply::new().text(ALLOW));
    t.push(Reply::new().text("Patched."));
    t.h.start_turn(&thread, "write the file outside").await;
    let messages = read_through_turn_ending(&mut t.h.client, "completed").await;
    assert_eq!(
        review_labels(&messages),
        [
            "item/started:fileChange",
            "item/autoApprovalReview/started",
            "guardianWarning",
            "item/autoApprovalReview/completed",
            "item/completed:fileChange",
        ]
    );
    let action = &only(&messages, "item/autoApprovalReview/started")["params"]["action"];
    assert_eq!(action["type"], "applyPatch");
    assert_eq!(action["files"], json!([outside.display().to_string()]));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "reviewed\n");
    let requests = t.h.wait_for_requests(3).await;
    assert_review_request(&requests[1], "+reviewed");
    t.finish().await;
}

async fn turn_start_accepts_the_reviewer(transport: Transport) {
    let mut t = tools_with(transport, "").await;
    let cwd = t.ws.display().to_string();
    // A config override sets it as config.toml's `approvals_reviewer` does.
    let result =
        t.h.client
            .request(
                "thread/start",
                json!({"cwd": cwd, "config": {"approvals_reviewer": "auto_review"}}),
            )
            .await
            .unwrap();
    assert_eq!(result["approvalsReviewer"], "auto_review");
    let thread = str_at(&result, "/thread/id");
    // `turn/start` switches the thread back to the user: the escalation is asked directly.
    t.push(escalated("call_user", "touch by-user.txt"));
    t.push(Reply::new().text("Declined."));
    t.h.client
        .request(
            "turn/start",
            json!({"threadId": thread, "approvalsReviewer": "user",
                   "input": [{"type": "text", "text": "make by-user.txt"}]}),
        )
        .await
        .unwrap();
    let request = wait_request(&mut t.h.client, COMMAND_APPROVAL).await;
    answer(&mut t.h.client, &request, json!({"decision": "decline"})).await;
    read_through_turn_ending(&mut t.h.client, "completed").await;
    let all = t.h.client.log().to_vec();
    assert_eq!(
        review_labels(&all),
        [
            "item/started:commandExecution",
            COMMAND_APPROVAL,
            "item/completed:commandExecution",
        ]
    );
    assert!(!t.path("by-user.txt").exists());
    assert_eq!(t.h.mock.requests().len(), 2, "no reviewer request");
    t.finish().await;
}

async fn an_mcp_tool_call_is_reviewed_and_denied(transport: Transport) {
    let mut t = crate::mcp::Mcp::start(transport).await;
    let cwd = t.ws.display().to_string();
    let started = reviewed_thread(&mut t.h.client, &cwd, "auto_review").await;
    let thread = str_at(&started, "/thread/id");
    crate::mcp::wait_startup(&mut t.h.client, &thread, "weft", "ready").await;
    // `add` has no read-only annotation: under `auto` it needs approval.
    t.push(crate::mcp::weft_call(
        "call_add",
        "add",
        json!({"a": 40, "b": 2}),
    ));
    t.push(Reply::new().text(DENY));
    t.push(Reply::new().text("Not added."));
    let messages = t.turn(&thread, "add them").await;
    let labels: Vec<String> = messages
        .iter()
        .map(label)
        .filter(|l| {
            l.starts_with("item/autoApprovalReview/")
                || l == "guardianWarning"
                || l == crate::mcp::ELICITATION
                || l.ends_with(":mcpToolCall")
        })
        .collect();
    assert_eq!(
        labels,
        [
            "item/started:mcpToolCall",
            "item/autoApprovalReview/started",
            "guardianWarning",
            "item/autoApprovalReview/completed",
            "item/completed:mcpToolCall",
        ]
    );
    let action = &only(&messages, "item/autoApprovalReview/started")["params"]["action"];
    assert_eq!(action["type"], "mcpToolCall");
    assert_eq!(action["server"], "weft");
    assert_eq!(action["toolName"], "add");
    let item = completed_item(&messages, "call_add");
    assert_eq!(item["status"], "failed");
    let error = item["error"]["message"].as_str().unwrap();
    assert!(
        error.contains("Reason: Creating files outside the task"),
        "{error}"
    );
    let requests = t.h.wait_for_requests(3).await;
    assert_review_request(&requests[1], "\"add\"");
    assert!(user_texts(&requests[1])[0].contains("\"a\": 40"));
}

async fn an_interrupt_during_the_review_stops_the_action(transport: Transport) {
    let mut t = tools_with(transport, "").await;
    let cwd = t.ws.display().to_string();
    let started = reviewed_thread(&mut t.h.client, &cwd, "auto_review").await;
    let thread = str_at(&started, "/thread/id");
    t.push(escalated("call_stop", "touch stopped.txt"));
    t.push(Reply::new().text(ALLOW).stall());
    let turn = t.h.start_turn(&thread, "make stopped.txt").await;
    t.h.client
        .wait_for("the review's start", |m| {
            m["method"] == "item/autoApprovalReview/started"
        })
        .await;
    t.h.client
        .request(
            "turn/interrupt",
            json!({"threadId": thread, "turnId": turn}),
        )
        .await
        .unwrap();
    read_through_turn_ending(&mut t.h.client, "interrupted").await;
    let all = t.h.client.log().to_vec();
    assert_eq!(
        review_labels(&all),
        [
            "item/started:commandExecution",
            "item/autoApprovalReview/started",
            "item/autoApprovalReview/completed",
            "item/completed:commandExecution",
        ]
    );
    let done = &only(&all, "item/autoApprovalReview/completed")["params"]["review"];
    assert_eq!(
        done,
        &json!({"status": "aborted", "riskLevel": null,
                             "userAuthorization": null, "rationale": null})
    );
    assert_eq!(completed_item(&all, "call_stop")["status"], "declined");
    assert!(!t.path("stopped.txt").exists());
    t.finish().await;
}

on_both_transports!(
    an_allowed_command_runs_without_asking,
    a_denied_command_fails_with_the_reason_and_the_user_overrides_it,
    a_garbled_answer_asks_the_user,
    a_failing_reviewer_asks_the_user,
    a_slow_reviewer_asks_the_user,
    a_patch_outside_the_workspace_is_reviewed,
    turn_start_accepts_the_reviewer,
    an_mcp_tool_call_is_reviewed_and_denied,
    an_interrupt_during_the_review_stops_the_action,
);
