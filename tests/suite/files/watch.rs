//! `fs/watch`, `fs/changed` and `fs/unwatch`: a change is reported once per debounce window,
//! a flood of changes stays within `[fs]`'s bounds, `fs/unwatch` ends the notifications, and a
//! connection's watches end with it.

use std::time::Duration;

use serde_json::{Value, json};
use weft_protocol::fs_api::FsChangedNotification;
use weft_test_support::Transport;

use super::{Files, INVALID_REQUEST, inotify_watches};

/// Watch `path` as `id` on `f`'s client; returns the response's path.
async fn watch(f: &mut Files, id: &str, path: &str) -> Value {
    let result = f
        .client
        .request_ok("fs/watch", json!({"watchId": id, "path": path}))
        .await;
    result["path"].clone()
}

async fn a_change_is_reported_once_debounced(transport: Transport) {
    let mut f = Files::start(transport, false, "[fs]\ndebounce_ms = 400\n").await;
    let dir = f.path("watched");
    std::fs::create_dir(&dir).unwrap();
    let dotted = format!("{dir}/../watched");
    assert_eq!(watch(&mut f, "w1", &dotted).await, json!(dir));
    let message = f
        .refused(
            "fs/watch",
            json!({"watchId": "w1", "path": dir}),
            INVALID_REQUEST,
        )
        .await;
    assert_eq!(message, "watchId already exists: w1");
    // Two changes close together: one notification naming both, sorted.
    f.write("watched/b.txt", "b");
    f.write("watched/a.txt", "a");
    let changed: FsChangedNotification = f.client.wait_for_notification_as("fs/changed").await;
    assert_eq!(changed.watch_id, "w1");
    let paths: Vec<String> = changed
        .changed_paths
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(
        paths,
        vec![f.path("watched/a.txt"), f.path("watched/b.txt")]
    );
    f.client
        .expect_no_message_within(Duration::from_millis(600))
        .await;
    // Reading a watched file is no change.
    f.client
        .request_ok("fs/readFile", json!({"path": f.path("watched/a.txt")}))
        .await;
    f.client
        .expect_no_message_within(Duration::from_millis(600))
        .await;
    // A file can be watched, and a path that does not exist yet.
    let file = f.write("file.txt", "1");
    watch(&mut f, "file", &file).await;
    let later = f.path("later/deep.txt");
    assert_eq!(watch(&mut f, "later", &later).await, json!(later));
    f.write("file.txt", "2");
    let changed: FsChangedNotification = f.client.wait_for_notification_as("fs/changed").await;
    assert_eq!(changed.watch_id, "file");
    assert_eq!(changed.changed_paths[0].to_string(), file);
    // Replaced by a rename (as an editor saves, or git writes `HEAD`), twice: still followed.
    for round in ["3", "4"] {
        let staged = f.write("file.txt.tmp", round);
        std::fs::rename(&staged, &file).unwrap();
        let changed: FsChangedNotification = f.client.wait_for_notification_as("fs/changed").await;
        assert_eq!(changed.watch_id, "file");
        assert_eq!(changed.changed_paths.len(), 1, "{changed:?}");
        assert_eq!(changed.changed_paths[0].to_string(), file);
    }
    std::fs::create_dir(f.work.join("later")).unwrap();
    let changed: FsChangedNotification = f.client.wait_for_notification_as("fs/changed").await;
    assert_eq!(changed.watch_id, "later");
    assert_eq!(changed.changed_paths[0].to_string(), f.path("later"));
}

async fn a_flood_stays_bounded(transport: Transport) {
    let config =
        "[fs]\nmax_watches_per_connection = 3\nmax_pending_changes = 8\ndebounce_ms = 300\n";
    let mut f = Files::start(transport, false, config).await;
    let dir = f.path("flood");
    std::fs::create_dir(&dir).unwrap();
    watch(&mut f, "flood", &dir).await;
    let work = f.path("");
    watch(&mut f, "two", &work).await;
    watch(&mut f, "three", &dir).await;
    let message = f
        .refused(
            "fs/watch",
            json!({"watchId": "four", "path": dir}),
            INVALID_REQUEST,
        )
        .await;
    assert_eq!(
        message,
        "this connection already holds 3 watches, the most fs.max_watches_per_connection allows"
    );
    for i in 0..500 {
        std::fs::write(f.work.join(format!("flood/f{i}")), "x").unwrap();
    }
    // Past the bound a batch collapses to the watched directory; no batch is larger.
    let mut notifications = 0;
    let mut collapsed = false;
    loop {
        let message = match f.client.recv(Duration::from_millis(1500)).await {
            weft_test_support::client::Recv::Message(message) => message,
            _ => break,
        };
        assert_eq!(message["method"], "fs/changed", "{message}");
        let paths = message["params"]["changedPaths"]
            .as_array()
            .unwrap()
            .clone();
        assert!(paths.len() <= 8, "{} paths", paths.len());
        if message["params"]["watchId"] == "flood" && paths == [json!(dir)] {
            collapsed = true;
        }
        notifications += 1;
    }
    assert!(collapsed, "the flood never collapsed to its directory");
    // At most one notification per watch per debounce window: far fewer than the changes.
    assert!(notifications < 60, "{notifications} notifications");
}

async fn unwatch_ends_the_notifications(transport: Transport) {
    let mut f = Files::start(transport, false, "[fs]\ndebounce_ms = 100\n").await;
    let dir = f.path("w");
    std::fs::create_dir(&dir).unwrap();
    let before = inotify_watches(f.daemon.pid());
    watch(&mut f, "w", &dir).await;
    assert_eq!(inotify_watches(f.daemon.pid()), before + 1);
    f.write("w/one", "1");
    let changed: FsChangedNotification = f.client.wait_for_notification_as("fs/changed").await;
    assert_eq!(changed.watch_id, "w");
    let result = f
        .client
        .request_ok("fs/unwatch", json!({"watchId": "w"}))
        .await;
    assert_eq!(result, json!({}));
    assert_eq!(inotify_watches(f.daemon.pid()), before);
    f.write("w/two", "2");
    f.client
        .expect_no_message_within(Duration::from_millis(500))
        .await;
    // An unknown id is fine, as in the reference; a missing one is a decoding error.
    f.client
        .request_ok("fs/unwatch", json!({"watchId": "never"}))
        .await;
    let message = f.refused("fs/unwatch", json!({}), INVALID_REQUEST).await;
    assert_eq!(message, "Invalid request: missing field `watchId`");
    // The id can be used again.
    watch(&mut f, "w", &dir).await;
}

/// Over WebSocket a connection can close while the daemon runs on: its watches end with it,
/// and the others' do not.
#[tokio::test]
async fn watches_end_with_their_connection() {
    let config = "[fs]\nmax_watches_per_connection = 2\ndebounce_ms = 100\n";
    let mut f = Files::start(Transport::Ws, false, config).await;
    let pid = f.daemon.pid();
    let before = inotify_watches(pid);
    let a = f.path("a");
    let b = f.path("b");
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let mut other = f.daemon.initialized_client().await;
    other
        .request_ok("fs/watch", json!({"watchId": "x", "path": a}))
        .await;
    other
        .request_ok("fs/watch", json!({"watchId": "y", "path": b}))
        .await;
    watch(&mut f, "mine", &a).await;
    assert_eq!(inotify_watches(pid), before + 2);
    other.close().await;
    // `b` was watched by the closed connection only.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while inotify_watches(pid) != before + 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the closed connection's watches remain"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    f.write("a/new", "n");
    let changed: FsChangedNotification = f.client.wait_for_notification_as("fs/changed").await;
    assert_eq!(changed.watch_id, "mine");
    // A new connection has the whole budget again.
    let mut third = f.daemon.initialized_client().await;
    for id in ["p", "q"] {
        third
            .request_ok("fs/watch", json!({"watchId": id, "path": b}))
            .await;
    }
}

on_both_transports!(
    a_change_is_reported_once_debounced,
    a_flood_stays_bounded,
    unwatch_ends_the_notifications,
);
