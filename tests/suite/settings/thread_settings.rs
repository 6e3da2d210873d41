//! `thread/settings/update` (experimental): the next turns' settings of a loaded thread, idle
//! or running, and the `thread/settings/updated` that follows its answer.

use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply};
use weft_test_support::{Client, Transport};

use crate::turns::{Harness, Setup, gated_message, label, wait_gate};

/// A harness whose client opted in to the experimental API.
async fn experimental(transport: Transport) -> Harness {
    Harness::start(Setup::new(transport).init_params(json!({
        "clientInfo": {"name": "weft-e2e", "version": "0.1.0"},
        "capabilities": {"experimentalApi": true}
    })))
    .await
}

/// `thread/settings/update`, its `{}`, and the messages up to and including the
/// `thread/settings/updated` that must follow it.
async fn update(client: &mut Client, params: Value) -> Value {
    let id = client.send_request("thread/settings/update", params).await;
    let mut answered = false;
    loop {
        let msg = client.next_message().await;
        if msg.get("id") == Some(&id) {
            assert_eq!(msg["result"], json!({}), "{msg}");
            answered = true;
            continue;
        }
        if msg["method"] == "thread/settings/updated" {
            assert!(
                answered,
                "thread/settings/updated came before the answer: {msg}"
            );
            return msg["params"].clone();
        }
        assert_ne!(label(&msg), "error-response", "{msg}");
    }
}

async fn an_idle_thread_takes_the_new_settings_for_its_next_turn(transport: Transport) {
    let mut h = experimental(transport).await;
    let thread = h.start_thread().await;
    let updated = update(
        &mut h.client,
        json!({"threadId": thread, "model": "updated-model", "effort": "high",
            "permissions": ":workspace", "approvalPolicy": "on-request"}),
    )
    .await;
    assert_eq!(updated["threadId"], thread.as_str());
    let settings = &updated["threadSettings"];
    assert_eq!(settings["model"], "updated-model");
    assert_eq!(settings["effort"], "high");
    assert_eq!(settings["approvalPolicy"], "on-request");
    assert_eq!(settings["sandboxPolicy"]["type"], "workspaceWrite");
    assert_eq!(settings["activePermissionProfile"]["id"], ":workspace");
    assert_eq!(
        settings["collaborationMode"]["settings"]["model"],
        "updated-model"
    );
    // Nothing changed: `{}` and no notification.
    let same = h
        .client
        .request_ok(
            "thread/settings/update",
            json!({"threadId": thread, "model": "updated-model"}),
        )
        .await;
    assert_eq!(same, json!({}));
    h.client
        .expect_no_message_within(Duration::from_millis(300))
        .await;
    h.push(Reply::new().text("ok"));
    h.run_turn(&thread, "hi").await;
    let requests = h.wait_for_requests(1).await;
    assert_eq!(requests[0].body["model"], "updated-model");
    assert_eq!(requests[0].body["reasoning"]["effort"], "high");
    // thread/resume reports them too.
    let resumed = h
        .client
        .request_ok("thread/resume", json!({"threadId": thread}))
        .await;
    assert_eq!(resumed["model"], "updated-model");
}

async fn a_running_turn_keeps_its_settings_and_the_next_turn_takes_the_new(transport: Transport) {
    let mut h = experimental(transport).await;
    let thread = h.start_thread().await;
    let gate = Gate::new();
    h.push(gated_message("m1", "Hel", &gate, "lo"));
    h.start_turn(&thread, "first").await;
    wait_gate(&gate).await;
    let updated = update(
        &mut h.client,
        json!({"threadId": thread, "model": "later-model"}),
    )
    .await;
    assert_eq!(updated["threadSettings"]["model"], "later-model");
    gate.release();
    h.client.wait_for_notification("turn/completed").await;
    h.push(Reply::new().text("second"));
    h.run_turn(&thread, "second").await;
    let requests = h.wait_for_requests(2).await;
    assert_eq!(requests[0].body["model"], "mock-model");
    assert_eq!(requests[1].body["model"], "later-model");
}

async fn bad_updates_are_refused(transport: Transport) {
    let mut h = experimental(transport).await;
    let thread = h.start_thread().await;
    let c = &mut h.client;
    for (params, message) in [
        (
            json!({"threadId": thread, "permissions": ":read-only",
                "sandboxPolicy": {"type": "readOnly"}}),
            "`permissions` cannot be combined with `sandboxPolicy`".to_owned(),
        ),
        (
            json!({"threadId": thread, "permissions": ":bogus"}),
            "failed to load configuration: default_permissions refers to unknown built-in profile `:bogus`".to_owned(),
        ),
        (
            json!({"threadId": "00000000-0000-0000-0000-000000000000", "model": "x"}),
            "thread not found: 00000000-0000-0000-0000-000000000000".to_owned(),
        ),
        (
            json!({"threadId": thread, "environments": [{"environmentId": "e", "cwd": "/"}]}),
            "thread/settings/update.environments is not supported by Weft".to_owned(),
        ),
    ] {
        let err = c.request_err("thread/settings/update", params).await;
        assert_eq!((err.code, err.message), (-32600, message));
    }
    // Without the experimental opt-in the method is refused.
    if transport == Transport::Ws {
        let mut plain = h.second_client().await;
        let err = plain
            .request_err("thread/settings/update", json!({"threadId": thread}))
            .await;
        assert_eq!(
            err.message,
            "thread/settings/update requires experimentalApi capability"
        );
    }
}

on_both_transports!(
    an_idle_thread_takes_the_new_settings_for_its_next_turn,
    a_running_turn_keeps_its_settings_and_the_next_turn_takes_the_new,
    bad_updates_are_refused,
);
