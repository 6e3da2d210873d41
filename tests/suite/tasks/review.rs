//! `review/start` (docs/protocol.md §7.28): each target named in the reviewer's request with
//! its diff attached, the reviewer's own instructions and read-only tools whatever the
//! thread's sandbox, `enteredReviewMode` / `exitedReviewMode` with the rendered findings, the
//! outcome in the thread's history for the next turn and in the rollout after a restart, an
//! interrupted review, a steer refused, a running turn replaced, and bad requests.

mod ends;
mod read_only;
mod targets;

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use weft_mock_model::RecordedRequest;
use weft_test_support::Client;

use crate::turns::{label, read_through_turn_completed, str_at, user_texts};

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
    assert_eq!(result["turn"]["rootTurnId"], Value::Null);
    assert_eq!(result["turn"]["itemsView"], "notLoaded");
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
