//! Read receipts: a completed turn leaves a durable thread unread from that turn
//! (`thread/readState/changed` before the thread goes idle), `thread/read` carries the state,
//! and `thread/readState/update` marks it read or unread against the revision the client saw.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{Tui, labels, thread_param, through_answer};
use crate::persistence::UNKNOWN_ID;
use crate::turns::index_of;

async fn turn_marks_unread_and_update_marks_read(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let thread = t.thread().await;
    let fresh = t.ok("thread/read", thread_param(&thread)).await;
    assert_eq!(
        fresh["readState"],
        json!({"firstUnread": null, "revision": format!("initial:{thread}")})
    );

    let run = t.turn(&thread, "Hi.").await;
    let order = labels(&run.messages);
    let changed = index_of(&order, "thread/readState/changed");
    let idle = order
        .iter()
        .rposition(|m| m == "thread/status/changed")
        .unwrap();
    assert!(changed < idle, "{order:?}");
    let state = run.messages[changed]["params"]["readState"].clone();
    assert_eq!(
        state["firstUnread"],
        json!({"type": "turn", "turnId": run.turn_id})
    );
    assert_eq!(run.messages[changed]["params"]["threadId"], thread.as_str());
    let revision = state["revision"].as_str().unwrap().to_string();
    assert_ne!(revision, format!("initial:{thread}"));
    let read = t.ok("thread/read", thread_param(&thread)).await;
    assert_eq!(read["readState"], state);

    // A second turn while unread changes nothing.
    let run = t.turn(&thread, "Again.").await;
    assert!(!labels(&run.messages).contains(&"thread/readState/changed".to_string()));

    // A stale revision: the reference's conflict error with the current state.
    let err = t
        .err(
            "thread/readState/update",
            json!({"threadId": thread, "operation": {"type": "read"},
                   "expectedRevision": format!("initial:{thread}")}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32600, "read state changed")
    );
    assert_eq!(
        err.data,
        Some(json!({"reason": "readStateConflict", "readState": state}))
    );

    // The right revision: the change notification, then the response with the new state.
    let id = t
        .client
        .send_request(
            "thread/readState/update",
            json!({"threadId": thread, "operation": {"type": "read"},
                   "expectedRevision": revision}),
        )
        .await;
    let messages = through_answer(&mut t.client, &id).await;
    assert_eq!(labels(&messages), ["thread/readState/changed", "response"]);
    let now = messages[1]["result"]["readState"].clone();
    assert_eq!(now["firstUnread"], Value::Null);
    assert_ne!(now["revision"], state["revision"]);
    assert_eq!(messages[0]["params"]["readState"], now);
    let list = t.ok("thread/list", json!({})).await;
    assert_eq!(list["readStates"][&thread], now);

    let unread = t
        .ok(
            "thread/readState/update",
            json!({"threadId": thread, "operation": {"type": "unread"},
                   "expectedRevision": now["revision"]}),
        )
        .await;
    assert_eq!(
        unread["readState"]["firstUnread"],
        json!({"type": "threadStart"})
    );
    t.client
        .wait_for_notification("thread/readState/changed")
        .await;

    let err = t
        .err(
            "thread/readState/update",
            json!({"threadId": UNKNOWN_ID, "operation": {"type": "read"},
                   "expectedRevision": "x"}),
        )
        .await;
    assert_eq!(err.message, format!("thread not loaded: {UNKNOWN_ID}"));
}

on_both_transports!(turn_marks_unread_and_update_marks_read);
