//! Attachments kept per stored thread: an idempotent add, pages oldest first, the reverse
//! lookup by identity with the archived filter, removal, the notification every client gets
//! after the response, the reference's errors, and attachments that survive a restart.

use std::time::Duration;

use serde_json::{Value, json};
use weft_test_support::Transport;

use crate::persistence::UNKNOWN_ID;
use crate::thread_state::{Tui, labels, through_answer};

const QUIET: Duration = Duration::from_millis(300);

fn add_params(thread: &str, key: &str, payload: Value) -> Value {
    json!({"threadId": thread, "attachmentType": "pull_request", "identityKey": key, "payload": payload})
}

/// `thread/attachment/add`, answered before its notification; the response and the
/// notification the caller got.
async fn add_created(t: &mut Tui, thread: &str, key: &str, payload: Value) -> (Value, Value) {
    let id = t
        .client
        .send_request("thread/attachment/add", add_params(thread, key, payload))
        .await;
    let messages = through_answer(&mut t.client, &id).await;
    assert_eq!(labels(&messages), ["response"], "{messages:?}");
    let response = messages[0]["result"].clone();
    assert_eq!(response["outcome"], "created");
    let told = t
        .client
        .wait_for_notification("thread/attachment/updated")
        .await;
    (response, told["params"].clone())
}

async fn add_list_owners_remove(transport: Transport) {
    let mut t = Tui::start(transport).await;
    // Over WebSocket a second client (without the experimental opt-in) watches; stdio has one.
    let mut watcher = match transport {
        Transport::Ws => {
            let mut watcher = t.daemon.client().await;
            watcher.initialize().await;
            Some(watcher)
        }
        Transport::Stdio => None,
    };
    let a = t.thread().await;
    let b = t.thread().await;

    let (first, told) = add_created(&mut t, &a, "k1", json!({"n": 1})).await;
    let attachment = first["attachment"].clone();
    assert_eq!(attachment["attachmentType"], "pull_request");
    assert_eq!(attachment["identityKey"], "k1");
    assert_eq!(attachment["payload"], json!({"n": 1}));
    let expected = json!({
        "threadId": a, "attachmentType": "pull_request", "identityKey": "k1",
        "attachmentId": attachment["id"], "operation": "created",
    });
    assert_eq!(told, expected);
    // Every client is told, not only the caller.
    if let Some(watcher) = &mut watcher {
        let seen = watcher
            .wait_for_notification("thread/attachment/updated")
            .await;
        assert_eq!(seen["params"], expected);
    }

    // The same identity again: the stored attachment, unchanged, and no notification.
    let again = t
        .ok(
            "thread/attachment/add",
            add_params(&a, "k1", json!({"n": 2})),
        )
        .await;
    assert_eq!(
        again,
        json!({"outcome": "existing", "attachment": attachment})
    );
    t.client.expect_no_message_within(QUIET).await;

    for key in ["k2", "k3"] {
        add_created(&mut t, &a, key, json!(key)).await;
    }
    add_created(&mut t, &b, "k1", json!("on b")).await;

    // Pages, oldest first.
    let page = t
        .ok("thread/attachment/list", json!({"threadId": a, "limit": 2}))
        .await;
    let keys = |page: &Value| -> Vec<String> {
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["identityKey"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(&page), ["k1", "k2"]);
    assert_eq!(page["data"][0], attachment);
    let cursor = page["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_string();
    let rest = t
        .ok(
            "thread/attachment/list",
            json!({"threadId": a, "limit": 2, "cursor": cursor}),
        )
        .await;
    assert_eq!(keys(&rest), ["k3"]);
    assert_eq!(rest["nextCursor"], Value::Null);
    let all = t.ok("thread/attachment/list", json!({"threadId": a})).await;
    assert_eq!(keys(&all), ["k1", "k2", "k3"]);

    // Owners of one identity, by thread; the archived filter.
    let mut both = [a.clone(), b.clone()];
    both.sort();
    let owners = t
        .ok(
            "thread/attachmentOwner/list",
            json!({"attachmentType": "pull_request", "identityKey": "k1", "limit": 1}),
        )
        .await;
    assert_eq!(
        owners["data"],
        json!([{"threadId": both[0], "archived": false}])
    );
    let next = t
        .ok(
            "thread/attachmentOwner/list",
            json!({"attachmentType": "pull_request", "identityKey": "k1", "limit": 1,
                   "cursor": owners["nextCursor"]}),
        )
        .await;
    assert_eq!(next["data"][0]["threadId"], both[1].as_str());
    assert_eq!(next["nextCursor"], Value::Null);
    t.ok("thread/archive", json!({"threadId": b})).await;
    let live = t
        .ok(
            "thread/attachmentOwner/list",
            json!({"attachmentType": "pull_request", "identityKey": "k1", "archived": false}),
        )
        .await;
    assert_eq!(live["data"], json!([{"threadId": a, "archived": false}]));
    let archived = t
        .ok(
            "thread/attachmentOwner/list",
            json!({"attachmentType": "pull_request", "identityKey": "k1", "archived": true}),
        )
        .await;
    assert_eq!(archived["data"], json!([{"threadId": b, "archived": true}]));

    // Remove: `{}`, then `deleted`; again: `{}` and nothing told.
    let remove = json!({"threadId": a, "attachmentType": "pull_request", "identityKey": "k2"});
    let id = t
        .client
        .send_request("thread/attachment/remove", remove.clone())
        .await;
    let messages = through_answer(&mut t.client, &id).await;
    assert_eq!(messages.last().unwrap()["result"], json!({}));
    let told = t
        .client
        .wait_for_notification("thread/attachment/updated")
        .await;
    assert_eq!(told["params"]["operation"], "deleted");
    assert_eq!(told["params"]["identityKey"], "k2");
    assert_eq!(t.ok("thread/attachment/remove", remove).await, json!({}));
    t.client.expect_no_message_within(QUIET).await;

    // They are in the state DB: a restart keeps them.
    t.restart().await;
    let kept = t.ok("thread/attachment/list", json!({"threadId": a})).await;
    assert_eq!(keys(&kept), ["k1", "k3"]);

    // They go with their thread: after `thread/delete`, neither its list nor the owners name it.
    t.ok("thread/delete", json!({"threadId": a})).await;
    let gone = t.ok("thread/attachment/list", json!({"threadId": a})).await;
    assert_eq!(gone, json!({"data": [], "nextCursor": null}));
    let owners = t
        .ok(
            "thread/attachmentOwner/list",
            json!({"attachmentType": "pull_request", "identityKey": "k1"}),
        )
        .await;
    assert_eq!(owners["data"], json!([{"threadId": b, "archived": true}]));
}

async fn errors(transport: Transport) {
    let limits =
        "[limits]\nthread_attachment_payload_bytes = 64\nthread_attachments_per_thread = 2\n";
    let mut t = Tui::start_with(transport, limits).await;
    let thread = t.thread().await;
    let cases = [
        (
            add_params(UNKNOWN_ID, "k", json!(1)),
            format!("thread not found: {UNKNOWN_ID}"),
        ),
        (
            json!({"threadId": thread, "attachmentType": " ", "identityKey": "k", "payload": 1}),
            "attachmentType must not be empty".to_string(),
        ),
        (
            add_params(&thread, &"k".repeat(257), json!(1)),
            "identityKey must not exceed 256 bytes".to_string(),
        ),
        (
            add_params(&thread, "big", json!("x".repeat(64))),
            "attachment payload must not exceed 64 bytes".to_string(),
        ),
        // The reference's order: the payload is checked before the thread id.
        (
            add_params("nope", "big", json!("x".repeat(64))),
            "attachment payload must not exceed 64 bytes".to_string(),
        ),
    ];
    for (params, message) in cases {
        let err = t.err("thread/attachment/add", params).await;
        assert_eq!((err.code, err.message), (-32602, message));
    }
    let err = t
        .err("thread/attachment/add", add_params("nope", "k", json!(1)))
        .await;
    assert_eq!(err.code, -32602);
    assert!(
        err.message.starts_with("invalid thread id: "),
        "{}",
        err.message
    );
    let err = t
        .err(
            "thread/attachment/add",
            json!({"threadId": thread, "attachmentType": "t", "identityKey": "k"}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32600, "Invalid request: missing field `payload`")
    );
    for key in ["a", "b"] {
        t.ok(
            "thread/attachment/add",
            add_params(&thread, key, json!(key)),
        )
        .await;
    }
    let err = t
        .err("thread/attachment/add", add_params(&thread, "c", json!(1)))
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32602, "thread attachment identity count exceeds 2")
    );
    let err = t
        .err(
            "thread/attachment/list",
            json!({"threadId": thread, "cursor": "garbage"}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32602, "invalid pagination cursor")
    );
    let err = t
        .err(
            "thread/attachmentOwner/list",
            json!({"attachmentType": "t", "identityKey": "k", "cursor": "garbage"}),
        )
        .await;
    assert_eq!(err.message, "invalid pagination cursor");
    let err = t
        .err(
            "thread/attachment/remove",
            json!({"threadId": UNKNOWN_ID, "attachmentType": "t", "identityKey": "k"}),
        )
        .await;
    assert_eq!(
        (err.code, err.message),
        (-32602, format!("thread not found: {UNKNOWN_ID}"))
    );
    // An unknown thread has no attachments (the reference lists it empty).
    let none = t
        .ok("thread/attachment/list", json!({"threadId": UNKNOWN_ID}))
        .await;
    assert_eq!(none, json!({"data": [], "nextCursor": null}));
    // The connection and the daemon are still fine.
    let all = t
        .ok("thread/attachment/list", json!({"threadId": thread}))
        .await;
    assert_eq!(all["data"].as_array().unwrap().len(), 2);

    // A fork gets copies of the thread's attachments: the same identities and payloads, new
    // ids (the reference's `thread/fork`).
    let forked = t.ok("thread/fork", json!({"threadId": thread})).await;
    let fork = forked["thread"]["id"].as_str().unwrap().to_string();
    let copies = t
        .ok("thread/attachment/list", json!({"threadId": fork}))
        .await;
    let pairs = |page: &Value| -> Vec<(Value, Value)> {
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (a["identityKey"].clone(), a["payload"].clone()))
            .collect()
    };
    assert_eq!(pairs(&copies), pairs(&all));
    assert_ne!(copies["data"][0]["id"], all["data"][0]["id"]);
}

on_both_transports!(add_list_owners_remove, errors);
