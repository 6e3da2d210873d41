//! `thread/archive`, `thread/unarchive` (docs/protocol.md §7.8–§7.9) and `thread/name/set` (§7.11):
//! their notification orders, broadcasts to every connection, errors, and that they survive a
//! restart.

use serde_json::{Value, json};
use weft_mock_model::Gate;
use weft_test_support::{Client, QUIET_PERIOD, Transport};

use super::{
    Persist, assert_error, ids, label, list, list_ids, loaded, ok, path_of, read, read_through,
    rollout_lines, turns,
};
use crate::requests::{Requests, name_params};
use crate::turns::gated_message;

/// The messages through `thread/archived` for `thread`, as labels, keeping only the ones about
/// `thread` (and answers).
async fn through_archived(client: &mut Client, thread: &str) -> Vec<String> {
    read_through(client, |m| {
        m["method"] == "thread/archived" && m["params"]["threadId"] == thread
    })
    .await
    .iter()
    .filter(|m| {
        m.get("method").is_none()
            || m["params"]["threadId"] == thread
            || m["params"]["thread"]["id"] == thread
    })
    .filter(|m| m["method"] != "thread/started")
    .map(label)
    .collect()
}

/// Send `method` (`thread/archive` or `thread/unarchive`) for `thread`, then read through the
/// notification `until`: the request's id, the messages, and their labels.
async fn send_through(
    client: &mut Client,
    method: &str,
    thread: &str,
    until: &str,
) -> (Value, Vec<Value>, Vec<String>) {
    let id = client
        .send_request(method, json!({"threadId": thread}))
        .await;
    let messages = read_through(client, |m| m["method"] == until).await;
    let labels = messages.iter().map(label).collect();
    (id, messages, labels)
}

/// `thread/unarchive` of `thread`, which is not archived, is refused.
async fn assert_not_archived(client: &mut Client, thread: &str) {
    let answer = client
        .request("thread/unarchive", json!({"threadId": thread}))
        .await;
    assert_error(
        answer,
        &format!("no archived rollout found for thread id {thread}"),
    );
}

async fn archive_and_unarchive(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let mut other = p.other_client().await;
    let gate = Gate::new();
    p.push(gated_message("msg_arch", "working ", &gate, "on it"));
    let first = p.start_thread().await;
    let second = p.start_thread().await;
    let busy = p.start_thread().await;
    let first_path = path_of(&read(&mut p.client, &first, false).await);

    // A loaded, idle thread: notLoaded (broadcast) → {} → thread/archived (broadcast); no
    // thread/closed.
    let (id, messages, labels) =
        send_through(&mut p.client, "thread/archive", &first, "thread/archived").await;
    assert_eq!(
        labels,
        [
            "thread/status/changed:notLoaded",
            "response",
            "thread/archived"
        ]
    );
    assert_eq!(messages[0]["params"]["threadId"], first.as_str());
    assert_eq!(messages[1]["id"], id);
    assert_eq!(messages[1]["result"], json!({}));
    assert_eq!(messages[2]["params"], json!({"threadId": first}));
    p.client.expect_no_message_within(QUIET_PERIOD).await;
    if let Some(other) = other.as_mut() {
        assert_eq!(
            through_archived(other, &first).await,
            ["thread/status/changed:notLoaded", "thread/archived"],
            "what another connection sees"
        );
        other.expect_no_message_within(QUIET_PERIOD).await;
    }

    assert!(!loaded(&mut p.client).await.contains(&first));
    assert!(!first_path.exists(), "the rollout was not moved");
    let mut rest = list_ids(&mut p.client, json!({})).await;
    rest.sort();
    let mut expected = vec![second.clone(), busy.clone()];
    expected.sort();
    assert_eq!(rest, expected, "an archived thread is hidden by default");
    let archived = list(&mut p.client, json!({"archived": true})).await;
    assert_eq!(ids(&archived), [first.as_str()]);
    assert_eq!(archived["data"][0]["status"]["type"], "notLoaded");
    let archived_path = path_of(&archived["data"][0]);
    assert!(
        archived_path.starts_with(p.home.path().join("archived_sessions")),
        "{}",
        archived_path.display()
    );
    assert!(archived_path.is_file());
    assert_eq!(
        read(&mut p.client, &first, false).await["id"],
        first.as_str()
    );

    let no_rollout = format!("no rollout found for thread id {first}");
    for method in ["thread/archive", "thread/resume", "thread/fork"] {
        let answer = p.client.request(method, json!({"threadId": first})).await;
        assert_error(answer, &no_rollout);
    }
    let answer = p.client.set_name(&first, "x").await;
    assert_error(answer, &no_rollout);
    assert_not_archived(&mut p.client, &second).await;

    // Unarchive: {thread} → thread/unarchived (broadcast).
    let (id, messages, labels) = send_through(
        &mut p.client,
        "thread/unarchive",
        &first,
        "thread/unarchived",
    )
    .await;
    assert_eq!(labels, ["response", "thread/unarchived"]);
    assert_eq!(messages[0]["id"], id);
    let back = &messages[0]["result"]["thread"];
    assert_eq!(back["id"], first.as_str());
    assert_eq!(back["status"]["type"], "notLoaded");
    assert_eq!(
        path_of(back),
        first_path,
        "unarchive restores the original path"
    );
    assert!(first_path.is_file());
    assert_eq!(messages[1]["params"], json!({"threadId": first}));
    if let Some(other) = other.as_mut() {
        let seen = other.wait_for_notification("thread/unarchived").await;
        assert_eq!(seen["params"]["threadId"], first.as_str());
    }
    assert_eq!(
        ids(&list(&mut p.client, json!({"archived": true})).await).len(),
        0
    );
    assert!(list_ids(&mut p.client, json!({})).await.contains(&first));
    assert_not_archived(&mut p.client, &first).await;

    // A thread that is not loaded: {} → thread/archived, no status change.
    let (id, _, labels) =
        send_through(&mut p.client, "thread/archive", &first, "thread/archived").await;
    assert_eq!(labels, ["response", "thread/archived"], "request {id}");
    ok(
        &mut p.client,
        "thread/unarchive",
        json!({"threadId": first}),
    )
    .await;
    p.client.wait_for_notification("thread/unarchived").await;
    let resumed = ok(&mut p.client, "thread/resume", json!({"threadId": first})).await;
    assert_eq!(resumed["thread"]["status"]["type"], "idle");

    // A busy thread: its turn is interrupted first, then it is unloaded and archived.
    let turn = p.begin_held_turn(&busy, "a long job", &gate).await;
    let (_, messages, labels) =
        send_through(&mut p.client, "thread/archive", &busy, "thread/archived").await;
    let at = |wanted: &str| {
        labels
            .iter()
            .position(|l| l == wanted)
            .unwrap_or_else(|| panic!("no {wanted}: {labels:?}"))
    };
    assert!(
        at("thread/status/changed:idle") < at("turn/completed")
            && at("turn/completed") < at("thread/status/changed:notLoaded")
            && at("thread/status/changed:notLoaded") < at("response")
            && at("response") < at("thread/archived"),
        "busy archive order: {labels:?}"
    );
    let completed = messages
        .iter()
        .find(|m| m["method"] == "turn/completed")
        .expect("turn/completed");
    assert_eq!(completed["params"]["turn"]["id"], turn.as_str());
    assert_eq!(completed["params"]["turn"]["status"], "interrupted");
    let stored = read(&mut p.client, &busy, true).await;
    assert_eq!(turns(&stored)[0]["status"], "interrupted");
    rollout_lines(&path_of(&stored));
    let mut loaded_now = loaded(&mut p.client).await;
    loaded_now.sort();
    let mut expected = vec![first, second];
    expected.sort();
    assert_eq!(loaded_now, expected);
}

/// Wait for `thread/name/updated` on `client` and check it.
async fn name_updated(client: &mut Client, thread: &str, name: &str) {
    let seen = client.wait_for_notification("thread/name/updated").await;
    assert_eq!(
        seen["params"],
        json!({"threadId": thread, "threadName": name})
    );
}

/// Check that `thread` is named `name` as `thread/read` shows it, and as the first thread that
/// `thread/list` with `params` lists.
async fn assert_named(client: &mut Client, thread: &str, name: &str, params: Value) {
    assert_eq!(read(client, thread, false).await["name"], name);
    assert_eq!(list(client, params).await["data"][0]["name"], name);
}

async fn name_set(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let mut other = p.other_client().await;
    let thread = p.start_thread().await;

    // {} → thread/name/updated, to every connection.
    let id = p
        .client
        .send_request("thread/name/set", name_params(&thread, "My thread"))
        .await;
    let messages = read_through(&mut p.client, |m| m["method"] == "thread/name/updated").await;
    let labels: Vec<String> = messages.iter().map(label).collect();
    assert_eq!(labels, ["response", "thread/name/updated"]);
    assert_eq!(messages[0]["id"], id);
    assert_eq!(messages[0]["result"], json!({}));
    assert_eq!(
        messages[1]["params"],
        json!({"threadId": thread, "threadName": "My thread"})
    );
    if let Some(other) = other.as_mut() {
        name_updated(other, &thread, "My thread").await;
    }

    for empty in ["", "   "] {
        let answer = p.client.set_name(&thread, &empty).await;
        assert_error(answer, "thread name must not be empty");
    }
    let ephemeral = p.start_thread_with(json!({"ephemeral": true})).await;
    let answer = p.client.set_name(&ephemeral, "nope").await;
    assert_error(
        answer,
        &format!("ephemeral thread does not support metadata updates: {ephemeral}"),
    );
    assert_named(&mut p.client, &thread, "My thread", json!({})).await;

    // After a restart: the name is there, and it can be changed without loading the thread.
    p.restart().await;
    let mut other = p.other_client().await;
    let stored = read(&mut p.client, &thread, false).await;
    assert_eq!(stored["name"], "My thread");
    assert_eq!(stored["status"]["type"], "notLoaded");
    let answer = ok(
        &mut p.client,
        "thread/name/set",
        json!({"threadId": thread, "name": "Renamed while stored"}),
    )
    .await;
    assert_eq!(answer, json!({}));
    name_updated(&mut p.client, &thread, "Renamed while stored").await;
    if let Some(other) = other.as_mut() {
        name_updated(other, &thread, "Renamed while stored").await;
    }
    assert!(
        loaded(&mut p.client).await.is_empty(),
        "name/set loaded the thread"
    );
    let search = json!({"searchTerm": "while stored"});
    assert_named(&mut p.client, &thread, "Renamed while stored", search).await;

    // And it survives another restart; the resumed thread carries it.
    p.restart().await;
    assert_named(&mut p.client, &thread, "Renamed while stored", json!({})).await;
    let resumed = ok(&mut p.client, "thread/resume", json!({"threadId": thread})).await;
    assert_eq!(resumed["thread"]["name"], "Renamed while stored");
    let lines = rollout_lines(&path_of(&resumed["thread"]));
    let names: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "thread_name_set")
        .map(|l| &l["payload"]["name"])
        .collect();
    assert_eq!(names, [&json!("My thread"), &json!("Renamed while stored")]);
}

on_both_transports!(archive_and_unarchive, name_set);
