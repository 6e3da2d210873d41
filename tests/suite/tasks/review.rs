//! `review/start` (docs/protocol.md §7.28): each target named in the reviewer's request with
//! its diff attached, the reviewer's own instructions and read-only tools whatever the
//! thread's sandbox, `enteredReviewMode` / `exitedReviewMode` with the rendered findings, the
//! outcome in the thread's history for the next turn and in the rollout after a restart, an
//! interrupted review, a steer refused, a running turn replaced, and bad requests.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use weft_mock_model::{Gate, RecordedRequest, Reply, Script};
use weft_test_support::{Client, Transport};

use crate::persistence::Persist;
use crate::requests::Requests;
use crate::tools::{cmd, exec_call, start_thread, write_stdin_call};
use crate::turns::{
    Harness, INVALID_REQUEST, assistant_texts, gated_message, label, read_through,
    read_through_turn_completed, str_at, user_texts, wait_gate,
};

/// A reviewer's answer in the format its instructions ask for: one finding.
fn findings_answer() -> String {
    json!({
        "findings": [{
            "title": "Guard the empty list",
            "body": "`first()` of an empty list panics.\nReturn early instead.",
            "confidence_score": 0.9,
            "priority": 1,
            "code_location": {
                "absolute_file_path": "/repo/a.txt",
                "line_range": {"start": 2, "end": 3}
            }
        }],
        "overall_correctness": "patch is incorrect",
        "overall_explanation": "One bug needs fixing.",
        "overall_confidence_score": 0.8
    })
    .to_string()
}

/// How `findings_answer` renders.
const RENDERED: &str = "One bug needs fixing.\n\nReview comment:\n\n- Guard the empty list — \
                        /repo/a.txt:2-3\n  `first()` of an empty list panics.\n  Return early instead.";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::null())
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A repository on `main` with one commit, a branch `topic` (checked out) with one more,
/// an uncommitted edit and an untracked file. Returns the directory and `topic`'s commit.
fn repository() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    git(path, &["init", "-q", "-b", "main"]);
    std::fs::write(path.join("a.txt"), "one\n").unwrap();
    git(path, &["add", "a.txt"]);
    git(path, &["commit", "-q", "-m", "first"]);
    git(path, &["checkout", "-q", "-b", "topic"]);
    std::fs::write(path.join("a.txt"), "one\nchanged on topic\n").unwrap();
    git(path, &["commit", "-q", "-am", "topic work"]);
    let sha = git(path, &["rev-parse", "HEAD"]);
    std::fs::write(path.join("a.txt"), "one\nchanged on topic\nnot committed\n").unwrap();
    std::fs::write(path.join("new.txt"), "untracked file\n").unwrap();
    (dir, sha)
}

/// `review/start` on `client`, then every message through `turn/completed` (the response
/// first), checking the response: the turn in progress with the label as its user message.
async fn run_review(client: &mut Client, thread: &str, target: Value, hint: &str) -> Vec<Value> {
    let id = client
        .send_request(
            "review/start",
            json!({"threadId": thread, "target": target, "delivery": "inline"}),
        )
        .await;
    let mut messages = read_through_turn_completed(client).await;
    // Notifications of earlier work may come first; the review's own start with the answer.
    let at = messages
        .iter()
        .position(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no review/start answer: {messages:?}"));
    messages.drain(..at);
    let response = &messages[0];
    let result = &response["result"];
    assert_eq!(result["reviewThreadId"], thread, "{result}");
    assert_eq!(result["turn"]["status"], "inProgress");
    let turn_id = str_at(result, "/turn/id");
    assert_eq!(
        result["turn"]["items"],
        json!([{"type": "userMessage", "id": turn_id, "clientId": null,
                "content": [{"type": "text", "text": hint, "text_elements": []}],
                "startedAtMs": null, "completedAtMs": null}])
    );
    let entered = item(&messages, "enteredReviewMode");
    assert_eq!(entered["review"], hint);
    // The reviewer's request is the turn's user message; its usage is not the thread's.
    let request = item(&messages, "userMessage");
    let asked = request["content"][0]["text"].as_str().unwrap_or_default();
    assert!(!asked.is_empty() && !asked.contains("<diff>"), "{request}");
    assert!(
        !messages
            .iter()
            .any(|m| m["method"] == "thread/tokenUsage/updated"),
        "{messages:?}"
    );
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["id"],
        turn_id.as_str()
    );
    messages
}

/// The one completed item of `kind` in `messages`.
fn item<'a>(messages: &'a [Value], kind: &str) -> &'a Value {
    let items: Vec<&Value> = completed(messages, kind);
    assert_eq!(items.len(), 1, "{kind}: {messages:?}");
    items[0]
}

fn completed<'a>(messages: &'a [Value], kind: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "item/completed" && m["params"]["item"]["type"] == kind)
        .map(|m| &m["params"]["item"])
        .collect()
}

/// The labels of `messages` with the deltas and usage reports left out.
fn outline(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(label)
        .filter(|l| !l.ends_with("/delta") && l != "thread/tokenUsage/updated")
        .collect()
}

/// What a review run looks like when the reviewer answers at once.
const REVIEW_RUN: &[&str] = &[
    "response",
    "thread/status/changed:active",
    "turn/started",
    "item/started:enteredReviewMode",
    "item/completed:enteredReviewMode",
    "item/started:userMessage",
    "item/completed:userMessage",
    "item/started:exitedReviewMode",
    "item/completed:exitedReviewMode",
    "item/started:agentMessage",
    "item/completed:agentMessage",
    "thread/status/changed:idle",
    "turn/completed",
];

/// The reviewer's request: its instructions, no `apply_patch`, the environment (read-only),
/// then what it was given: the diff (when there is one) and the request, joined.
fn reviewer_request(request: &RecordedRequest) -> String {
    let instructions = request.body["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.starts_with("You are reviewing a code change"),
        "{instructions}"
    );
    let tools: Vec<&str> = request
        .tools()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(tools.contains(&"exec_command"), "{tools:?}");
    assert!(!tools.contains(&"apply_patch"), "{tools:?}");
    let users = user_texts(request);
    assert!(users[0].starts_with("<environment_context>"), "{users:?}");
    assert!(users[0].contains("read-only"), "{users:?}");
    assert!((2..=3).contains(&users.len()), "{users:?}");
    users[1..].join("\n")
}

async fn each_target_is_named_and_carries_its_diff(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let (repo, sha) = repository();
    let cwd = repo.path().display().to_string();
    let thread = start_thread(&mut h.client, &cwd, "never", "workspace-write").await;

    // Uncommitted changes, with findings.
    h.push(Reply::new().text(findings_answer()));
    let messages = run_review(
        &mut h.client,
        &thread,
        json!({"type": "uncommittedChanges"}),
        "current changes",
    )
    .await;
    assert_eq!(outline(&messages), REVIEW_RUN);
    assert_eq!(item(&messages, "exitedReviewMode")["review"], RENDERED);
    assert_eq!(item(&messages, "agentMessage")["text"], RENDERED);
    let done = &messages.last().unwrap()["params"]["turn"];
    assert_eq!(done["status"], "completed");
    assert_eq!(done["items"][0]["text"], RENDERED);
    let asked = reviewer_request(&h.wait_for_requests(1).await[0]);
    assert!(asked.contains("not committed yet"), "{asked}");
    assert!(asked.contains("git diff HEAD"), "{asked}");
    assert!(asked.contains("+not committed"), "{asked}");
    assert!(asked.contains("+untracked file"), "{asked}");

    // The base branch: what the topic branch adds to main.
    h.push(Reply::new().text("Nothing to report."));
    let messages = run_review(
        &mut h.client,
        &thread,
        json!({"type": "baseBranch", "branch": " main "}),
        "changes against 'main'",
    )
    .await;
    // Plain text is the review as it is.
    assert_eq!(
        item(&messages, "exitedReviewMode")["review"],
        "Nothing to report."
    );
    let asked = reviewer_request(&h.wait_for_requests(2).await[1]);
    assert!(asked.contains("base branch 'main'"), "{asked}");
    assert!(asked.contains("+changed on topic"), "{asked}");

    // A commit, with its title.
    h.push(Reply::new().text("{}"));
    let hint = format!("commit {}: topic work", &sha[..7]);
    let messages = run_review(
        &mut h.client,
        &thread,
        json!({"type": "commit", "sha": sha, "title": "topic work"}),
        &hint,
    )
    .await;
    // Not the whole format: the text as it is.
    assert_eq!(item(&messages, "exitedReviewMode")["review"], "{}");
    let asked = reviewer_request(&h.wait_for_requests(3).await[2]);
    assert!(
        asked.contains(&format!("commit {sha} (\"topic work\")")),
        "{asked}"
    );
    assert!(asked.contains(&format!("git show {sha}")), "{asked}");
    assert!(
        asked.contains("    topic work"),
        "the commit's message: {asked}"
    );

    // Custom instructions: the request is the instructions, without a diff.
    h.push(Reply::new().text("The wording is fine."));
    run_review(
        &mut h.client,
        &thread,
        json!({"type": "custom", "instructions": "Check the wording of a.txt"}),
        "Check the wording of a.txt",
    )
    .await;
    let asked = reviewer_request(&h.wait_for_requests(4).await[3]);
    assert_eq!(asked, "Check the wording of a.txt");
}

async fn the_next_turn_sees_the_review_and_a_restart_keeps_it(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let (repo, _) = repository();
    let thread = p
        .start_thread_with(json!({"cwd": repo.path(), "approvalPolicy": "never"}))
        .await;
    p.push(Reply::new().text(findings_answer()));
    let messages = run_review(
        &mut p.client,
        &thread,
        json!({"type": "uncommittedChanges"}),
        "current changes",
    )
    .await;
    let review_turn = str_at(&messages[0], "/result/turn/id");
    p.push(Reply::new().text("I will fix it."));
    let next = p.run_turn(&thread, "fix what the review found").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    let requests = p
        .mock
        .wait_for_requests(2, weft_test_support::DEFAULT_TIMEOUT)
        .await
        .unwrap();
    let users = user_texts(&requests[1]);
    let told = users
        .iter()
        .find(|t| t.starts_with("<user_action>"))
        .unwrap_or_else(|| panic!("no review outcome for the next turn: {users:?}"));
    assert!(told.contains("Guard the empty list"), "{told}");
    assert!(told.contains("/repo/a.txt:2-3"), "{told}");
    assert!(assistant_texts(&requests[1]).contains(&RENDERED.to_string()));
    // The reviewer's own conversation is not the thread's.
    assert!(
        !users.iter().any(|t| t.contains("not committed yet")),
        "{users:?}"
    );
    assert!(
        requests[1].body["instructions"]
            .as_str()
            .is_some_and(|i| !i.starts_with("You are reviewing"))
    );

    p.restart().await;
    let read = p
        .client
        .request_ok(
            "thread/read",
            json!({"threadId": thread, "includeTurns": true}),
        )
        .await;
    let turn = read["thread"]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == review_turn.as_str())
        .unwrap_or_else(|| panic!("no review turn after the restart: {read}"))
        .clone();
    assert_eq!(turn["status"], "completed");
    let kinds: Vec<&str> = turn["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "enteredReviewMode",
            "userMessage",
            "exitedReviewMode",
            "agentMessage"
        ],
        "{turn}"
    );
    assert_eq!(turn["items"][2]["review"], RENDERED);
    // The thread is previewed by the review's request.
    assert!(
        read["thread"]["preview"]
            .as_str()
            .is_some_and(|p| p.contains("not committed yet")),
        "{read}"
    );
    let page = p
        .client
        .request_ok(
            "thread/items/list",
            json!({"threadId": thread, "turnId": review_turn}),
        )
        .await;
    assert!(page.to_string().contains("exitedReviewMode"), "{page}");
}

async fn the_reviewer_reads_with_tools_that_cannot_write(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let (repo, _) = repository();
    let cwd = repo.path().display().to_string();
    // The thread may write anything; its review may not.
    let thread = start_thread(&mut h.client, &cwd, "never", "danger-full-access").await;
    h.push(exec_call("c1", cmd("cat a.txt; touch written.txt")));
    h.push(Reply::new().text("Read it."));
    let messages = run_review(
        &mut h.client,
        &thread,
        json!({"type": "uncommittedChanges"}),
        "current changes",
    )
    .await;
    let command = item(&messages, "commandExecution");
    assert!(
        command["aggregatedOutput"]
            .as_str()
            .is_some_and(|o| o.contains("not committed")),
        "{command}"
    );
    assert!(!repo.path().join("written.txt").exists());
    // Only the rendered review is an agent message: the reviewer's own is not shown.
    assert_eq!(completed(&messages, "agentMessage").len(), 1);
    assert_eq!(item(&messages, "agentMessage")["text"], "Read it.");
    let requests = h.wait_for_requests(2).await;
    assert!(reviewer_request(&requests[0]).contains("not committed yet"));
}

async fn an_interrupted_review_exits_review_mode_and_refuses_steering(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let gate = Gate::new();
    h.push(gated_message("msg_review", "{\"findings\": [", &gate, "]}"));
    let thread = h.start_thread().await;
    let started = h
        .client
        .request(
            "review/start",
            json!({"threadId": thread, "target": {"type": "custom", "instructions": "look"}}),
        )
        .await
        .unwrap();
    let turn = str_at(&started, "/turn/id");
    read_through(&mut h.client, |m| {
        m["method"] == "item/completed" && m["params"]["item"]["type"] == "enteredReviewMode"
    })
    .await;
    wait_gate(&gate).await;

    for method in ["turn/steer", "turn/start"] {
        let err = h
            .client
            .request_err(
                method,
                json!({"threadId": thread, "expectedTurnId": turn,
                       "input": [{"type": "text", "text": "also this"}]}),
            )
            .await;
        assert_eq!(err.code, INVALID_REQUEST, "{method}");
        assert_eq!(err.message, "cannot steer a review turn", "{method}");
        assert_eq!(
            err.data.unwrap()["codexErrorInfo"]["activeTurnNotSteerable"]["turnKind"],
            "review"
        );
    }

    h.client.interrupt(&thread, &turn).await.unwrap();
    let messages = read_through_turn_completed(&mut h.client).await;
    assert_eq!(
        item(&messages, "exitedReviewMode")["review"],
        "Reviewer failed to output a response."
    );
    assert_eq!(
        item(&messages, "agentMessage")["text"],
        "Review was interrupted. Please re-run /review and wait for it to complete."
    );
    let labels = outline(&messages);
    assert_eq!(
        labels[labels.len() - 2..],
        ["thread/status/changed:idle", "turn/completed"]
    );
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "interrupted"
    );

    // The next turn is told the review was interrupted.
    h.push(Reply::new().text("ok"));
    h.run_turn(&thread, "what now?").await;
    let users = user_texts(&h.wait_for_requests(2).await[1]);
    assert!(
        users
            .iter()
            .any(|t| t.starts_with("<user_action>") && t.contains("None.")),
        "{users:?}"
    );
}

async fn a_review_replaces_a_running_turn(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let gate = Gate::new();
    h.push(gated_message("msg_long", "working", &gate, " on it"));
    h.push(Reply::new().text("Fine."));
    let thread = h.start_thread().await;
    let running = h.start_turn(&thread, "a long task").await;
    read_through(&mut h.client, |m| m["method"] == "item/agentMessage/delta").await;
    wait_gate(&gate).await;
    let id = h
        .client
        .send_request(
            "review/start",
            json!({"threadId": thread, "target": {"type": "custom", "instructions": "look"}}),
        )
        .await;
    let first = read_through_turn_completed(&mut h.client).await;
    assert!(
        first
            .iter()
            .any(|m| m["id"] == id && m.get("result").is_some())
    );
    let ended = &first.last().unwrap()["params"]["turn"];
    assert_eq!(ended["id"], running.as_str());
    assert_eq!(ended["status"], "interrupted");
    let review = read_through_turn_completed(&mut h.client).await;
    assert_eq!(item(&review, "exitedReviewMode")["review"], "Fine.");
    assert_eq!(
        review.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
}

async fn bad_requests_are_refused(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let thread = h.start_thread().await;
    let unknown = "019a0000-0000-7000-8000-000000000000";
    for (thread_id, target, message) in [
        (
            unknown,
            json!({"type": "uncommittedChanges"}),
            format!("thread not found: {unknown}"),
        ),
        (
            thread.as_str(),
            json!({"type": "baseBranch", "branch": "  "}),
            "branch must not be empty".to_string(),
        ),
        (
            thread.as_str(),
            json!({"type": "commit", "sha": "\t"}),
            "sha must not be empty".to_string(),
        ),
        (
            thread.as_str(),
            json!({"type": "custom", "instructions": "\n\n"}),
            "instructions must not be empty".to_string(),
        ),
    ] {
        let err = h
            .client
            .request_err(
                "review/start",
                json!({"threadId": thread_id, "target": target}),
            )
            .await;
        assert_eq!(
            (err.code, err.message.as_str()),
            (INVALID_REQUEST, message.as_str())
        );
    }
    // Only `inline` delivery exists.
    let err = h
        .client
        .request_err(
            "review/start",
            json!({"threadId": thread, "target": {"type": "uncommittedChanges"},
                   "delivery": "detached"}),
        )
        .await;
    assert_eq!(err.code, INVALID_REQUEST);
    assert!(
        err.message
            .starts_with("Invalid request: unknown variant `detached`, expected `inline`"),
        "{err:?}"
    );
    // Nothing ran, and the thread still works.
    h.push(Reply::new().text("still here"));
    let run = h.run_turn(&thread, "hello").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    assert_eq!(h.wait_for_requests(1).await.len(), 1);
}

async fn a_failed_reviewer_ends_the_review_and_the_turn_fails(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    h.push_script(Script::api_error(
        400,
        "invalid_request_error",
        "no such model",
    ));
    let thread = h.start_thread().await;
    let messages = run_review(
        &mut h.client,
        &thread,
        json!({"type": "custom", "instructions": "look"}),
        "look",
    )
    .await;
    assert_eq!(
        item(&messages, "exitedReviewMode")["review"],
        "Reviewer failed to output a response."
    );
    let done = &messages.last().unwrap()["params"]["turn"];
    assert_eq!(done["status"], "failed", "{done}");
    assert!(
        done["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no such model")),
        "{done}"
    );
}

async fn review_model_is_the_reviewers(transport: Transport) {
    let mut p = Persist::with_config(transport, "review_model = \"mock-reviewer\"").await;
    let config = p.client.request_ok("config/read", json!({})).await;
    assert_eq!(
        config["config"]["review_model"], "mock-reviewer",
        "{config}"
    );
    assert_eq!(
        config["config"]["review"],
        json!({"max_diff_bytes": 16384, "diff_timeout_ms": 5000}),
        "{config}"
    );
    let thread = p.start_thread().await;
    p.push(Reply::new().text("Fine."));
    run_review(
        &mut p.client,
        &thread,
        json!({"type": "custom", "instructions": "look"}),
        "look",
    )
    .await;
    p.push(Reply::new().text("ok"));
    p.run_turn(&thread, "and now").await;
    let requests = p
        .mock
        .wait_for_requests(2, weft_test_support::DEFAULT_TIMEOUT)
        .await
        .unwrap();
    assert_eq!(requests[0].body["model"], "mock-reviewer");
    assert_eq!(requests[1].body["model"], "mock-model");
}

async fn the_reviewer_cannot_write_to_the_threads_sessions(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let (repo, _) = repository();
    let cwd = repo.path().display().to_string();
    let thread = start_thread(&mut h.client, &cwd, "never", "workspace-write").await;
    // A regular turn leaves a shell running as a session, reading its input.
    h.push(exec_call("s1", json!({"cmd": "sh", "yield_time_ms": 300})));
    h.push(Reply::new().text("Started."));
    let run = h.run_turn(&thread, "start a shell").await;
    let session = run.completed_items_of("commandExecution")[0]["processId"]
        .as_str()
        .expect("a session")
        .to_string();
    // The reviewer tries to act through it, then only polls it.
    h.push(write_stdin_call("w1", &session, "touch written.txt\n"));
    h.push(write_stdin_call("w2", &session, ""));
    h.push(Reply::new().text("Looked."));
    run_review(
        &mut h.client,
        &thread,
        json!({"type": "custom", "instructions": "look"}),
        "look",
    )
    .await;
    let refused = h.output_in(4, "w1").await;
    assert!(refused.contains("this turn is read-only"), "{refused}");
    let polled = h.output_in(5, "w2").await;
    assert!(!polled.contains("read-only"), "{polled}");
    assert!(!repo.path().join("written.txt").exists());
}

on_both_transports!(
    the_reviewer_cannot_write_to_the_threads_sessions,
    a_failed_reviewer_ends_the_review_and_the_turn_fails,
    review_model_is_the_reviewers,
    each_target_is_named_and_carries_its_diff,
    the_next_turn_sees_the_review_and_a_restart_keeps_it,
    the_reviewer_reads_with_tools_that_cannot_write,
    an_interrupted_review_exits_review_mode_and_refuses_steering,
    a_review_replaces_a_running_turn,
    bad_requests_are_refused,
);
