//! `config/value/write` and `config/batchWrite` against the daemon's `config.toml`.

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{file_version, refused, temporaries, value_write};
use crate::turns::{Harness, Setup};

/// What the tests append to the harness's config: comments above, beside and between keys.
const COMMENTED: &str = "# Features I turned on myself.\n[features]\ngoals = true # keep pursuing goals\n\n# Limits, tuned.\n[limits]\nmax_connections = 16 # two editors and a TUI\n";

async fn a_write_keeps_comments_and_order_and_new_threads_use_it(transport: Transport) {
    let mut h = Harness::start(Setup::new(transport).config(COMMENTED)).await;
    let path = h.home.config_path();
    let before = std::fs::read_to_string(&path).unwrap();
    // A thread loaded before the write keeps its model.
    let loaded = h.start_thread().await;
    let version = file_version(&mut h.client).await;
    let written = h
        .client
        .request_ok(
            "config/value/write",
            json!({"keyPath": "model", "value": "written-model", "mergeStrategy": "replace",
                "expectedVersion": version}),
        )
        .await;
    assert_eq!(written["status"], "ok", "{written}");
    assert_eq!(
        written["filePath"],
        std::fs::canonicalize(&path).unwrap().display().to_string()
    );
    assert_eq!(written["overriddenMetadata"], json!(null));
    // The answer's version is the file's version now.
    let now = file_version(&mut h.client).await;
    assert_eq!(written["version"], now.as_str());
    assert_ne!(now, version);
    let batch = h
        .client
        .request_ok(
            "config/batchWrite",
            json!({"edits": [
                {"keyPath": "model_reasoning_effort", "value": "high", "mergeStrategy": "replace"},
                {"keyPath": "limits", "value": {"max_message_bytes": 1048576}, "mergeStrategy": "upsert"},
                {"keyPath": "features.goals", "value": false, "mergeStrategy": "replace"}
            ], "expectedVersion": now, "reloadUserConfig": true}),
        )
        .await;
    assert_eq!(batch["status"], "ok", "{batch}");
    let after = std::fs::read_to_string(&path).unwrap();
    // Only the written values changed: every comment, blank line and key stays where it was.
    let expected = before
        .replace("model = \"mock-model\"\n", "model = \"written-model\"\n")
        .replace(
            "model_provider = \"mock\"\n",
            "model_provider = \"mock\"\nmodel_reasoning_effort = \"high\"\n",
        )
        .replace(
            "goals = true # keep pursuing goals",
            "goals = false # keep pursuing goals",
        )
        .replace(
            "max_connections = 16 # two editors and a TUI\n",
            "max_connections = 16 # two editors and a TUI\nmax_message_bytes = 1048576\n",
        );
    assert_eq!(after, expected);
    assert!(
        temporaries(h.home.path()).is_empty(),
        "{:?}",
        temporaries(h.home.path())
    );
    // config/read reports the written config.
    let read = h.client.request_ok("config/read", json!({})).await;
    assert_eq!(read["config"]["model"], "written-model");
    assert_eq!(read["config"]["model_reasoning_effort"], "high");
    assert_eq!(read["config"]["features"]["goals"], false);
    // A new thread starts from it; the loaded one keeps what it started with.
    let fresh = h
        .client
        .request_ok(
            "thread/start",
            json!({"cwd": h.home.path().display().to_string()}),
        )
        .await;
    assert_eq!(fresh["model"], "written-model", "{fresh}");
    assert_eq!(fresh["reasoningEffort"], "high", "{fresh}");
    let fresh_id = fresh["thread"]["id"].as_str().unwrap().to_owned();
    h.push(Reply::new().text("new"));
    h.run_turn(&fresh_id, "hi").await;
    h.push(Reply::new().text("old"));
    h.run_turn(&loaded, "hi").await;
    let requests = h.wait_for_requests(2).await;
    assert_eq!(requests[0].body["model"], "written-model");
    assert_eq!(requests[0].body["reasoning"]["effort"], "high");
    assert_eq!(requests[1].body["model"], "mock-model");
}

async fn refused_writes_leave_the_file_untouched(transport: Transport) {
    let mut h = Harness::start(Setup::new(transport).config(COMMENTED)).await;
    let path = h.home.config_path();
    let before = std::fs::read_to_string(&path).unwrap();
    let c = &mut h.client;
    let stale = json!({"keyPath": "model", "value": "m", "mergeStrategy": "replace",
        "expectedVersion": "sha256:0000"});
    let message = refused(
        c.request_err("config/value/write", stale).await,
        "configVersionConflict",
    );
    assert_eq!(
        message,
        "Configuration was modified since last read. Fetch latest version and retry."
    );
    let message = refused(
        c.request_err(
            "config/value/write",
            value_write("approval_policy", json!("bogus")),
        )
        .await,
        "configValidationError",
    );
    assert!(message.starts_with("Invalid configuration: "), "{message}");
    assert!(message.contains("approval_policy"), "{message}");
    // A wrong type inside a section Weft reads, in a batch whose first edit is fine: nothing
    // of it is written.
    let batch = json!({"edits": [
        {"keyPath": "model", "value": "m", "mergeStrategy": "replace"},
        {"keyPath": "limits.max_connections", "value": "many", "mergeStrategy": "replace"}]});
    let message = refused(
        c.request_err("config/batchWrite", batch).await,
        "configValidationError",
    );
    assert!(message.contains("limits"), "{message}");
    let message = refused(
        c.request_err("config/value/write", value_write("a..b", json!(1)))
            .await,
        "configValidationError",
    );
    assert_eq!(message, "keyPath segments must not be empty");
    refused(
        c.request_err("config/value/write", value_write("model", json!([1, null])))
            .await,
        "configValidationError",
    );
    refused(
        c.request_err(
            "config/value/write",
            value_write("profiles.x.model", json!("m")),
        )
        .await,
        "configValidationError",
    );
    let elsewhere = json!({"keyPath": "model", "value": "m", "mergeStrategy": "replace",
        "filePath": h.home.path().join("other.toml").display().to_string()});
    let message = refused(
        c.request_err("config/value/write", elsewhere).await,
        "configLayerReadonly",
    );
    assert_eq!(message, "Only writes to the user config are allowed");
    let bad_shape = c
        .request_err(
            "config/value/write",
            json!({"keyPath": "model", "value": "m"}),
        )
        .await;
    assert_eq!(bad_shape.code, -32600);
    assert!(bad_shape.message.contains("mergeStrategy"), "{bad_shape}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    assert!(temporaries(h.home.path()).is_empty());
    // The connection and the daemon go on: the config is what it was.
    let read = h.client.request_ok("config/read", json!({})).await;
    assert_eq!(read["config"]["model"], "mock-model");
}

async fn a_path_the_command_line_sets_is_reported_overridden(transport: Transport) {
    let mock = weft_mock_model::MockModel::start().await.unwrap();
    let home = weft_test_support::TestHome::with_mock_model(&mock.base_url());
    let mut daemon = weft_test_support::Daemon::builder(&home)
        .listen(transport.listen_url())
        .overrides(&["model=\"from-flags\""])
        .start()
        .await;
    let mut client = daemon.initialized_client().await;
    let written = client
        .request_ok(
            "config/value/write",
            value_write("model", json!("from-file")),
        )
        .await;
    assert_eq!(written["status"], "okOverridden", "{written}");
    let meta = &written["overriddenMetadata"];
    assert_eq!(meta["message"], "Overridden by session flags");
    assert_eq!(
        meta["overridingLayer"]["name"],
        json!({"type": "sessionFlags"})
    );
    assert_eq!(meta["effectiveValue"], "from-flags");
    let text = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(text.contains("model = \"from-file\""), "{text}");
    let read = client.request_ok("config/read", json!({})).await;
    assert_eq!(read["config"]["model"], "from-flags");
}

on_both_transports!(
    a_write_keeps_comments_and_order_and_new_threads_use_it,
    refused_writes_leave_the_file_untouched,
    a_path_the_command_line_sets_is_reported_overridden,
);
