//! How a review ends otherwise: interrupted (and steering refused), replacing a running turn, a failed reviewer, bad requests.

use serde_json::json;
use weft_mock_model::{Gate, Reply, Script};
use weft_test_support::Transport;

use super::*;
use crate::requests::Requests;
use crate::turns::{
    Harness, INVALID_REQUEST, gated_message, read_through, read_through_turn_completed, str_at,
    user_texts, wait_gate,
};

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

on_both_transports!(
    an_interrupted_review_exits_review_mode_and_refuses_steering,
    a_review_replaces_a_running_turn,
    a_failed_reviewer_ends_the_review_and_the_turn_fails,
    bad_requests_are_refused,
);
