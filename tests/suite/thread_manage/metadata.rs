//! `thread/metadata/update` (docs/protocol.md §7.36): the Git fields patched (set, cleared,
//! kept), shown by `thread/read` and `thread/list`, kept across a restart; the refusals.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::on;
use crate::persistence::{Persist, UNKNOWN_ID, assert_error, list, ok, read};

fn update(thread: &str, git: Value) -> Value {
    json!({"threadId": thread, "gitInfo": git})
}

async fn round_trip(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let thread = p.start_thread().await;
    let answer = ok(
        &mut p.client,
        "thread/metadata/update",
        update(&thread, json!({"branch": " main ", "sha": "abc123"})),
    )
    .await;
    let expected = json!({"sha": "abc123", "branch": "main", "originUrl": null});
    assert_eq!(answer["thread"]["id"], thread.as_str());
    assert_eq!(answer["thread"]["gitInfo"], expected);
    assert_eq!(answer["thread"]["status"]["type"], "idle");
    assert_eq!(
        read(&mut p.client, &thread, false).await["gitInfo"],
        expected
    );

    // `null` clears a field, an omitted one stays.
    let answer = ok(
        &mut p.client,
        "thread/metadata/update",
        update(
            &thread,
            json!({"sha": null, "originUrl": "https://example.com/r.git"}),
        ),
    )
    .await;
    let expected = json!({"sha": null, "branch": "main", "originUrl": "https://example.com/r.git"});
    assert_eq!(answer["thread"]["gitInfo"], expected);
    // Stored: a restart keeps it, for thread/read and thread/list alike.
    p.restart().await;
    assert_eq!(
        read(&mut p.client, &thread, false).await["gitInfo"],
        expected
    );
    let listed = list(&mut p.client, json!({})).await;
    assert_eq!(listed["data"][0]["gitInfo"], expected);
    // A stored thread that is not loaded is updated too.
    let answer = ok(
        &mut p.client,
        "thread/metadata/update",
        update(&thread, json!({"branch": "dev"})),
    )
    .await;
    assert_eq!(answer["thread"]["gitInfo"]["branch"], "dev");
    assert_eq!(answer["thread"]["status"]["type"], "notLoaded");
}

async fn refusals(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let thread = p.start_thread().await;
    let cases = [
        (
            on(&thread),
            "thread metadata update must include at least one field",
        ),
        (
            json!({"threadId": thread, "gitInfo": null}),
            "thread metadata update must include at least one field",
        ),
        (
            update(&thread, json!({})),
            "gitInfo must include at least one field",
        ),
        (
            update(&thread, json!({"branch": "  "})),
            "gitInfo.branch must not be empty",
        ),
        (
            update(&thread, json!({"sha": ""})),
            "gitInfo.sha must not be empty",
        ),
    ];
    for (params, message) in cases {
        let answer = p.client.request("thread/metadata/update", params).await;
        assert_error(answer, message);
    }
    let answer = p
        .client
        .request(
            "thread/metadata/update",
            update(UNKNOWN_ID, json!({"sha": "a"})),
        )
        .await;
    assert_error(
        answer,
        &format!("no rollout found for thread id {UNKNOWN_ID}"),
    );
    let ephemeral = p.start_thread_with(json!({"ephemeral": true})).await;
    let answer = p
        .client
        .request(
            "thread/metadata/update",
            update(&ephemeral, json!({"sha": "a"})),
        )
        .await;
    assert_error(
        answer,
        &format!("ephemeral thread does not support metadata updates: {ephemeral}"),
    );
    assert_eq!(
        read(&mut p.client, &thread, false).await["gitInfo"],
        Value::Null
    );
}

on_both_transports!(round_trip, refusals);
