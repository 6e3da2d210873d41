//! `thread/unsubscribe` (docs/protocol.md §7.10) and idle unloading (§11.3): a thread with no
//! subscriber and no activity for `thread_idle_timeout_secs` is unloaded with
//! `thread/status/changed {notLoaded}` and `thread/closed`, and can be resumed again.

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply};
use weft_test_support::{Client, QUIET_PERIOD, Transport};

use super::{
    Persist, UNKNOWN_ID, assert_follow_up, label, loaded, ok, read_through, str_at,
    turn_start_params, turns,
};
use crate::turns::gated_message;

async fn unsubscribe(client: &mut Client, thread: &str) -> Value {
    ok(client, "thread/unsubscribe", json!({"threadId": thread})).await["status"].clone()
}

async fn unsubscribe_statuses(transport: Transport) {
    let mut p = Persist::start(transport).await;
    p.push(Reply::new().text("nobody listens"));
    p.push(Reply::new().text("listening again"));
    let thread = p.start_thread().await;
    let mut other = p.other_client().await;

    assert_eq!(unsubscribe(&mut p.client, &thread).await, "unsubscribed");
    assert_eq!(unsubscribe(&mut p.client, &thread).await, "notSubscribed");
    assert_eq!(unsubscribe(&mut p.client, UNKNOWN_ID).await, "notLoaded");
    if let Some(other) = other.as_mut() {
        assert_eq!(unsubscribe(other, &thread).await, "notSubscribed");
    }
    let answer = p
        .client
        .request("thread/unsubscribe", json!({"threadId": "not-a-uuid"}))
        .await;
    assert!(
        answer
            .as_ref()
            .is_err_and(|e| e.message.starts_with("invalid thread id: ")),
        "{answer:?}"
    );
    // The thread stays loaded, with no notification.
    p.client.expect_no_message_within(QUIET_PERIOD).await;
    assert_eq!(loaded(&mut p.client).await, [thread.as_str()]);

    // An unsubscribed connection that starts a turn gets the answer and the broadcasts only.
    let id = p
        .client
        .send_request("turn/start", turn_start_params(&thread, "anyone?"))
        .await;
    let labels: Vec<String> = read_through(&mut p.client, |m| {
        m["method"] == "thread/status/changed" && m["params"]["status"]["type"] == "idle"
    })
    .await
    .iter()
    .map(label)
    .collect();
    assert_eq!(
        labels,
        [
            "response",
            "thread/status/changed:active",
            "thread/status/changed:idle"
        ],
        "request {id}"
    );
    p.client.expect_no_message_within(QUIET_PERIOD).await;

    // thread/resume subscribes again.
    let resumed = ok(&mut p.client, "thread/resume", json!({"threadId": thread})).await;
    assert_eq!(turns(&resumed["thread"]).len(), 1);
    let run = p.run_turn(&thread, "and now?").await;
    assert_eq!(
        run.completed_items_of("agentMessage")[0]["text"],
        "listening again"
    );
    assert_eq!(unsubscribe(&mut p.client, &thread).await, "unsubscribed");
}

/// Wait until `thread/closed` arrived for each of `threads`; check that each was preceded by
/// its `thread/status/changed {notLoaded}`. Other messages are skipped.
async fn wait_closed(client: &mut Client, threads: &[&str]) {
    let mut closed: Vec<String> = Vec::new();
    let mut not_loaded: Vec<String> = Vec::new();
    while closed.len() < threads.len() {
        let msg = client
            .wait_for("thread/closed or thread/status/changed", |m| {
                m["method"] == "thread/closed"
                    || (m["method"] == "thread/status/changed"
                        && m["params"]["status"]["type"] == "notLoaded")
            })
            .await;
        let thread = str_at(&msg, "/params/threadId");
        assert!(
            threads.contains(&thread.as_str()),
            "an unexpected thread was unloaded: {msg}"
        );
        if msg["method"] == "thread/closed" {
            assert!(
                not_loaded.contains(&thread),
                "thread/closed before thread/status/changed notLoaded for {thread}"
            );
            closed.push(thread);
        } else {
            not_loaded.push(thread);
        }
    }
}

/// With `thread_idle_timeout_secs = 1`: unsubscribed idle threads are unloaded; a subscribed
/// one and an unsubscribed one running a turn are not (until that turn ends); an unloaded
/// thread resumes with its history.
async fn idle_unload(transport: Transport) {
    let mut p = Persist::with_config(transport, "thread_idle_timeout_secs = 1").await;
    let gate = Gate::new();
    p.push(Reply::new().text("stored answer"));
    p.push(gated_message("msg_busy", "busy ", &gate, "done"));
    let (idle, _) = p.thread_with_turn("back in memory", "keep this").await;
    let subscribed = p.start_thread().await;
    let busy = p.start_thread().await;
    p.begin_held_turn(&busy, "a long job", &gate).await;
    assert_eq!(unsubscribe(&mut p.client, &busy).await, "unsubscribed");
    let witness = p.start_thread().await;
    assert_eq!(unsubscribe(&mut p.client, &idle).await, "unsubscribed");
    assert_eq!(unsubscribe(&mut p.client, &witness).await, "unsubscribed");

    // Both idle unsubscribed threads go; the busy one (unsubscribed first) stays.
    wait_closed(&mut p.client, &[&idle, &witness]).await;
    let mut expected = vec![subscribed.clone(), busy.clone()];
    expected.sort();
    assert_eq!(loaded(&mut p.client).await, expected);
    assert_eq!(unsubscribe(&mut p.client, &idle).await, "notLoaded");

    // Once its turn is over, the busy one goes too.
    gate.release();
    wait_closed(&mut p.client, &[&busy]).await;
    assert_eq!(loaded(&mut p.client).await, [subscribed.as_str()]);

    // An unloaded thread comes back with thread/resume.
    let id = p
        .client
        .send_request("thread/resume", json!({"threadId": idle}))
        .await;
    let messages = read_through(&mut p.client, |m| m.get("id") == Some(&id)).await;
    let labels: Vec<String> = messages
        .iter()
        .filter(|m| m.get("method").is_none() || m["params"]["threadId"] == idle.as_str())
        .map(label)
        .collect();
    assert_eq!(labels, ["thread/status/changed:idle", "response"]);
    let resumed = &messages.last().expect("response")["result"]["thread"];
    assert_eq!(turns(resumed).len(), 1);
    let run = p.run_turn(&idle, "still there?").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(3).await;
    assert_follow_up(&requests[2], ["keep this", "stored answer", "still there?"]);
    // Subscribed by the resume: not unloaded while we were busy with it.
    assert!(loaded(&mut p.client).await.contains(&idle));
}

on_both_transports!(unsubscribe_statuses, idle_unload);
