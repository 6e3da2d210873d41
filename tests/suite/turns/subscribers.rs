//! Several connections (docs/protocol.md §11.1–§11.2): only `thread/start` subscribes; every initialized
//! connection gets the broadcasts (`thread/started`, `thread/status/changed`); only subscribers
//! get a thread's turn and item events — also when another connection starts the turn.

use serde_json::Value;
use weft_mock_model::Reply;
use weft_test_support::{Client, Transport};

use super::{Harness, QUIET, read_through, run_turn_on};

/// Read `client`'s messages until the thread is idle again and check that it only ever got
/// broadcasts (and answers to its own requests).
async fn only_broadcasts(client: &mut Client, thread: &str) -> Vec<Value> {
    let messages = read_through(client, |m| {
        m["method"] == "thread/status/changed" && m["params"]["status"]["type"] == "idle"
    })
    .await;
    client.expect_no_message_within(QUIET).await;
    for msg in &messages {
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            continue;
        };
        assert!(
            matches!(method, "thread/started" | "thread/status/changed"),
            "an unsubscribed connection got `{method}`: {msg}"
        );
        if method == "thread/status/changed" {
            assert_eq!(msg["params"]["threadId"], thread);
        }
    }
    messages
}

fn statuses(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .filter(|m| m["method"] == "thread/status/changed")
        .map(|m| m["params"]["status"]["type"].as_str().unwrap_or("?"))
        .collect()
}

/// Connection A starts a thread and a turn; connection B, never subscribed, sees
/// `thread/started` and the status changes but none of the turn's events.
#[tokio::test]
async fn unsubscribed_connection_gets_only_broadcasts() {
    let mut h = Harness::responses(Transport::Ws).await;
    let mut other = h.second_client().await;
    h.push(Reply::new().text_deltas(["for ", "subscribers ", "only"]));
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hello").await;
    assert_eq!(
        run.completed_items_of("agentMessage")[0]["text"],
        "for subscribers only"
    );

    let seen = only_broadcasts(&mut other, &thread).await;
    let started: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "thread/started")
        .collect();
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["params"]["thread"]["id"], thread.as_str());
    assert_eq!(statuses(&seen), ["active", "idle"]);
}

/// `turn/start` from a connection that is not subscribed does not subscribe it: it gets the
/// response and the broadcasts, while the subscriber gets the turn's events.
#[tokio::test]
async fn turn_started_by_an_unsubscribed_connection() {
    let mut h = Harness::responses(Transport::Ws).await;
    let mut other = h.second_client().await;
    h.push(Reply::new().text("answer"));
    let thread = h.start_thread().await;
    other.wait_for_notification("thread/started").await;

    let answer = other
        .request("turn/start", super::turn_start_params(&thread, "from B"))
        .await
        .expect("turn/start from the other connection");
    let turn = answer["turn"]["id"].as_str().expect("turn id").to_owned();
    let seen = only_broadcasts(&mut other, &thread).await;
    assert_eq!(statuses(&seen), ["active", "idle"]);

    // The subscriber saw the whole turn.
    let messages = super::read_through_turn_completed(&mut h.client).await;
    let completed = messages.last().expect("turn/completed");
    assert_eq!(completed["params"]["turn"]["id"], turn.as_str());
    assert_eq!(completed["params"]["turn"]["status"], "completed");
    let user = messages
        .iter()
        .find(|m| m["method"] == "item/completed" && m["params"]["item"]["type"] == "userMessage")
        .expect("the userMessage item reached the subscriber");
    assert_eq!(user["params"]["item"]["content"][0]["text"], "from B");
    assert!(
        !messages
            .iter()
            .any(|m| m.get("id").is_some() && m.get("method").is_none()),
        "the subscriber got a response to a request it did not send"
    );
}

/// Two connections, each subscribed to its own thread, run a turn each: each gets its own
/// thread's turn events only, plus the other thread's status changes.
#[tokio::test]
async fn two_subscribers_two_threads() {
    let mut h = Harness::responses(Transport::Ws).await;
    let mut other = h.second_client().await;
    h.push(Reply::new().text("one"));
    h.push(Reply::new().text("two"));
    let cwd = h.home.path().display().to_string();
    let mine = h.start_thread().await;
    let theirs = super::start_thread_on(&mut other, &cwd).await;
    let first = run_turn_on(&mut h.client, &mine, "first").await;
    let second = run_turn_on(&mut other, &theirs, "second").await;
    for (run, thread, other_thread) in [(&first, &mine, &theirs), (&second, &theirs, &mine)] {
        assert_eq!(run.completed_turn()["status"], "completed");
        for msg in &run.messages {
            if msg.get("method").is_none() || msg["method"] == "thread/started" {
                continue;
            }
            let id = &msg["params"]["threadId"];
            if id == other_thread.as_str() {
                assert_eq!(
                    msg["method"], "thread/status/changed",
                    "got the other thread's event: {msg}"
                );
            } else {
                assert_eq!(id, thread.as_str(), "{msg}");
            }
        }
    }
    assert_eq!(first.completed_items_of("agentMessage")[0]["text"], "one");
    assert_eq!(second.completed_items_of("agentMessage")[0]["text"], "two");
}

/// The only subscriber disconnects in the middle of a turn: the turn runs to its end, the
/// thread stays loaded, and other connections still see its status and can use it.
#[tokio::test]
async fn subscriber_leaving_mid_turn() {
    let mut h = Harness::responses(Transport::Ws).await;
    let mut other = h.second_client().await;
    let gate = weft_mock_model::Gate::new();
    h.push(super::gated_message(
        "msg_orphan",
        "nobody ",
        &gate,
        "listens",
    ));
    h.push(Reply::new().text("still here"));
    let thread = h.start_thread().await;
    h.start_turn(&thread, "go").await;
    super::read_through(&mut h.client, |m| m["method"] == "item/agentMessage/delta").await;
    super::wait_gate(&gate).await;
    h.client.close().await;
    gate.release();

    let seen = only_broadcasts(&mut other, &thread).await;
    assert_eq!(statuses(&seen), ["active", "idle"]);
    let loaded = other
        .request("thread/loaded/list", serde_json::json!({}))
        .await
        .expect("thread/loaded/list");
    assert_eq!(loaded["data"], serde_json::json!([thread]));

    // The thread still works for the remaining connection (which is not subscribed).
    other
        .request("turn/start", super::turn_start_params(&thread, "again"))
        .await
        .expect("turn/start");
    let seen = only_broadcasts(&mut other, &thread).await;
    assert_eq!(statuses(&seen), ["active", "idle"]);
    let requests = h.wait_for_requests(2).await;
    assert!(super::user_texts(&requests[1]).contains(&"again".to_owned()));
}
