//! Goals: `thread/goal/set|get|clear` with their notifications, the reference's errors, and a
//! goal that survives a restart and is told on resume (`thread/goal/updated`, or
//! `thread/goal/cleared` for a thread without one).

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{Tui, labels, thread_param, through_answer};
use crate::persistence::UNKNOWN_ID;

async fn set_get_clear_and_resume(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let thread = t.thread().await;
    let other = t.thread().await;
    assert_eq!(
        t.ok("thread/goal/get", thread_param(&thread)).await,
        json!({"goal": null})
    );

    // Set: the response, then `thread/goal/updated` with the same goal.
    let id = t
        .client
        .send_request(
            "thread/goal/set",
            json!({"threadId": thread, "objective": "Ship it", "status": "paused"}),
        )
        .await;
    let messages = through_answer(&mut t.client, &id).await;
    assert_eq!(labels(&messages), ["response"]);
    let goal = messages[0]["result"]["goal"].clone();
    assert_eq!(goal["objective"], "Ship it");
    assert_eq!(goal["status"], "paused");
    assert_eq!(goal["threadId"], thread.as_str());
    assert_eq!(
        (
            &goal["tokenBudget"],
            &goal["tokensUsed"],
            &goal["timeUsedSeconds"]
        ),
        (&Value::Null, &json!(0), &json!(0))
    );
    let updated = t.client.wait_for_notification("thread/goal/updated").await;
    assert_eq!(
        updated["params"],
        json!({"threadId": thread, "turnId": null, "goal": goal})
    );

    let budget = t
        .ok(
            "thread/goal/set",
            json!({"threadId": thread, "tokenBudget": 1000}),
        )
        .await;
    assert_eq!(budget["goal"]["tokenBudget"], 1000);
    assert_eq!(budget["goal"]["status"], "paused");
    assert_eq!(budget["goal"]["createdAt"], goal["createdAt"]);
    t.client.wait_for_notification("thread/goal/updated").await;

    let err = t
        .err(
            "thread/goal/set",
            json!({"threadId": thread, "objective": "  "}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32600, "goal objective must not be empty")
    );
    let err = t
        .err(
            "thread/goal/set",
            json!({"threadId": other, "status": "paused"}),
        )
        .await;
    assert_eq!(
        err.message,
        format!("cannot update goal for thread {other}: no goal exists")
    );
    let err = t.err("thread/goal/get", thread_param(UNKNOWN_ID)).await;
    assert_eq!(err.message, format!("thread not found: {UNKNOWN_ID}"));

    // The goal survives a restart; resuming tells the caller.
    t.restart().await;
    let stored = t.ok("thread/goal/get", thread_param(&thread)).await;
    assert_eq!(stored, json!({"goal": budget["goal"]}));
    let id = t
        .client
        .send_request("thread/resume", json!({"threadId": thread}))
        .await;
    let messages = through_answer(&mut t.client, &id).await;
    assert!(
        messages.last().unwrap().get("error").is_none(),
        "{messages:?}"
    );
    let told = t.client.wait_for_notification("thread/goal/updated").await;
    assert_eq!(
        told["params"],
        json!({"threadId": thread, "turnId": null, "goal": budget["goal"]})
    );
    t.ok("thread/resume", json!({"threadId": other})).await;
    let cleared = t.client.wait_for_notification("thread/goal/cleared").await;
    assert_eq!(cleared["params"], json!({"threadId": other}));

    // Clear: `cleared: true` and `thread/goal/cleared`; again: `false`, nothing told.
    let id = t
        .client
        .send_request("thread/goal/clear", thread_param(&thread))
        .await;
    let messages = through_answer(&mut t.client, &id).await;
    assert_eq!(messages.last().unwrap()["result"], json!({"cleared": true}));
    let cleared = t.client.wait_for_notification("thread/goal/cleared").await;
    assert_eq!(cleared["params"], json!({"threadId": thread}));
    let again = t.ok("thread/goal/clear", thread_param(&thread)).await;
    assert_eq!(again, json!({"cleared": false}));
    t.client
        .expect_no_message_within(std::time::Duration::from_millis(200))
        .await;
    assert_eq!(
        t.ok("thread/goal/get", thread_param(&thread)).await,
        json!({"goal": null})
    );
}

on_both_transports!(set_get_clear_and_resume);
