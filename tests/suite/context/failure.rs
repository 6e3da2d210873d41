//! A compaction whose summary request fails (HTTP 400): the turn fails with an error that says
//! the compaction failed, and the history is left exactly as it was.

use serde_json::Value;
use weft_mock_model::Script;
use weft_test_support::Transport;

use super::{
    answer, assert_summary_between, assert_summary_request, assistant, compact, conversation,
    label, push_answers, start, user,
};

/// Check a failed turn's `turn/completed` and the `error` notification before it: the error
/// says the compaction failed.
fn assert_failed_compaction(messages: &[Value], turn: &str) {
    let completed = messages.last().expect("turn/completed");
    assert_eq!(completed["method"], "turn/completed");
    let completed = &completed["params"]["turn"];
    assert_eq!(completed["id"], turn);
    assert_eq!(completed["status"], "failed", "{completed}");
    let error = &completed["error"];
    let text = error["message"].as_str().unwrap_or_default();
    assert!(
        text.to_lowercase().contains("compaction"),
        "the error does not say the compaction failed: {error}"
    );
    assert!(
        text.contains("Bad compaction request"),
        "the error does not carry the model's message: {error}"
    );
    assert!(error["codexErrorInfo"].is_object() || error["codexErrorInfo"].is_string());
    let labels: Vec<String> = messages.iter().map(label).collect();
    let n = labels.len();
    assert_eq!(
        labels[n - 3..],
        [
            "thread/status/changed:systemError",
            "error",
            "turn/completed"
        ],
        "{labels:?}"
    );
    let notified = &messages[n - 2]["params"];
    assert_eq!(notified["turnId"], turn);
    assert_eq!(notified["willRetry"], false);
    assert_eq!(
        &notified["error"], error,
        "the error notification is the turn's error"
    );
    assert_eq!(
        super::compaction_events(messages).len(),
        2,
        "the compaction item is started and completed even when it fails: {labels:?}"
    );
}

fn bad_request() -> Script {
    Script::api_error(400, "invalid_request_error", "Bad compaction request")
}

/// `thread/compact/start` whose summary request gets a 400: the compaction turn fails, and the
/// next turn's request still carries the whole conversation, no summary.
async fn failed_manual_compaction_leaves_the_history(transport: Transport) {
    let mut p = start(transport).await;
    p.push(answer("first answer", 100, 10));
    p.mock.push(bad_request());
    p.push(answer("second answer", 120, 10));
    let thread = p.start_thread().await;
    p.run_turn(&thread, "first question").await;

    let (messages, turn) = compact(&mut p.client, &thread).await;
    assert_failed_compaction(&messages, &turn);
    let completed = &messages.last().expect("turn/completed")["params"]["turn"];
    assert_eq!(completed["itemsView"], "notLoaded");

    let next = p.run_turn(&thread, "second question").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(3).await;
    assert_eq!(requests.len(), 3);
    assert_summary_request(&requests[1]);
    assert_eq!(
        conversation(&requests[2]),
        [
            user("first question"),
            assistant("first answer"),
            user("second question")
        ],
        "the history is untouched"
    );
}

/// An automatic (pre-turn) compaction whose summary request gets a 400: that turn fails with a
/// compaction error; the next turn tries again from the untouched history and succeeds.
async fn failed_auto_compaction_fails_the_turn(transport: Transport) {
    const SUMMARY: &str = "SUMMARY-RETRY: the user asked a first question.";
    let mut p = start(transport).await;
    p.push(answer("first answer", 5_000, 100));
    p.mock.push(bad_request());
    push_answers(&p, &[(SUMMARY, 5_100, 40), ("third answer", 300, 20)]);
    let thread = p.start_thread().await;
    p.run_turn(&thread, "first question").await;

    let failed = p.run_turn(&thread, "second question").await;
    assert_failed_compaction(&failed.messages, &failed.turn_id);
    assert!(
        failed.completed_items_of("agentMessage").is_empty(),
        "the model was not sampled"
    );

    let third = p.run_turn(&thread, "third question").await;
    assert_eq!(third.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(4).await;
    assert_eq!(requests.len(), 4);
    // Both summary requests carry the same, untouched history.
    assert_summary_request(&requests[1]);
    assert_summary_request(&requests[2]);
    assert_eq!(
        conversation(&requests[1]),
        conversation(&requests[2]),
        "the failed compaction changed the history"
    );
    let history = conversation(&requests[2]);
    assert_eq!(
        history[..2],
        [user("first question"), assistant("first answer")],
        "{history:#?}"
    );
    assert_summary_between(&requests[3], "first question", "third question", SUMMARY);
}

on_both_transports!(
    failed_manual_compaction_leaves_the_history,
    failed_auto_compaction_fails_the_turn,
);
