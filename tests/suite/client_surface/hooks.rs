//! `hooks/list`: the configured stop hooks, per cwd, with the entries that were skipped.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{Surface, assert_invalid_request};

on_both_transports!(
    stop_hooks_are_listed_with_warnings_for_bad_entries,
    hooks_of_a_loaded_thread,
    hooks_from_the_command_line,
    a_hooks_value_of_the_wrong_shape_is_an_error,
);

const HOOKS: &str = "[[hooks.stop]]\ncommand = \"echo stop-hook\"\ntimeout = 30\n\n\
                     [[hooks.stop]]\ntimeout = 5\n\n\
                     [[hooks.stop]]\ncommand = [\"python3\", \"my check.py\"]\n\n\
                     [[hooks.stop]]\ncommand = \"x\"\ntimeout = \"soon\"\n";

async fn stop_hooks_are_listed_with_warnings_for_bad_entries(transport: Transport) {
    let mut s = Surface::start(transport, "", HOOKS, &[]).await;
    let file = s.home.config_path().display().to_string();
    let ws = s.ws().display().to_string();
    let answer = s
        .client
        .request_ok(
            "hooks/list",
            json!({"cwds": [ws, "relative/dir"], "threadId": null}),
        )
        .await;
    let data = answer["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(data[1]["cwd"], "relative/dir");
    let entry = &data[0];
    assert_eq!(entry["cwd"], ws.as_str());
    assert_eq!(
        entry["hooks"][0],
        json!({
            "key": format!("{file}:stop:0:0"), "eventName": "stop", "handlerType": "command",
            "command": "echo stop-hook", "async": false, "matcher": null, "timeoutSec": 30,
            "statusMessage": null, "additionalContextLimit": null, "sourcePath": file,
            "source": "user", "pluginId": null, "environmentId": null, "displayOrder": 0,
            "enabled": true, "isManaged": false,
            // The reference's hash of the same hook.
            "currentHash": "sha256:9d795f8609e1b45dbc9c8aecadc43c475f6b21b1f358f72d0185febcd57679fd",
            "trustStatus": "trusted",
        })
    );
    let second = &entry["hooks"][1];
    assert_eq!(second["key"], format!("{file}:stop:2:0"));
    assert_eq!(second["command"], "python3 'my check.py'");
    assert_eq!(second["timeoutSec"], 60);
    assert_eq!(second["displayOrder"], 1);
    assert_eq!(entry["hooks"].as_array().unwrap().len(), 2);
    let warnings: Vec<&str> = entry["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert_eq!(
        warnings[0],
        format!("skipping stop hook 1 in {file}: missing field `command`")
    );
    assert!(
        warnings[1].starts_with(&format!("skipping stop hook 3 in {file}: invalid type")),
        "{warnings:?}"
    );
    assert_eq!(entry["errors"], json!([]));
    // The daemon started all the same, and said so.
    s.daemon.wait_for_stderr("skipping stop hook 1").await;
}

async fn hooks_of_a_loaded_thread(transport: Transport) {
    let mut s = Surface::start(transport, "", "[[hooks.stop]]\ncommand = \"true\"\n", &[]).await;
    let ws = s.ws().display().to_string();
    let started = s
        .client
        .request_ok("thread/start", json!({"cwd": ws}))
        .await;
    let thread_id = started["thread"]["id"].as_str().unwrap().to_owned();
    let answer = s
        .client
        .request_ok("hooks/list", json!({"threadId": thread_id}))
        .await;
    assert_eq!(answer["data"][0]["cwd"], ws.as_str());
    assert_eq!(answer["data"][0]["hooks"][0]["command"], "true");
    assert_invalid_request(
        s.client
            .request("hooks/list", json!({"threadId": thread_id, "cwds": [ws]}))
            .await,
        "specify either threadId or cwds",
    );
    assert_invalid_request(
        s.client
            .request(
                "hooks/list",
                json!({"threadId": "019a0000-0000-7000-8000-000000000000"}),
            )
            .await,
        "thread not found: 019a0000-0000-7000-8000-000000000000",
    );
}

async fn hooks_from_the_command_line(transport: Transport) {
    let mut s = Surface::start(
        transport,
        "",
        "[[hooks.stop]]\ncommand = \"from-file\"\n",
        &["-c", "hooks.stop=[{command=\"from-flags\", timeout=7}]"],
    )
    .await;
    let answer = s.client.request_ok("hooks/list", json!({})).await;
    let entry = &answer["data"][0];
    // An empty `cwds` is the daemon's cwd.
    assert!(
        entry["cwd"]
            .as_str()
            .is_some_and(|cwd| cwd.starts_with('/'))
    );
    let hooks = entry["hooks"].as_array().unwrap();
    assert_eq!(
        hooks.len(),
        1,
        "the flags replace the file's hooks: {hooks:?}"
    );
    assert_eq!(hooks[0]["command"], "from-flags");
    assert_eq!(hooks[0]["source"], "sessionFlags");
    assert_eq!(hooks[0]["sourcePath"], "/<session-flags>/config.toml");
    assert_eq!(hooks[0]["timeoutSec"], 7);
    assert_eq!(entry["errors"], Value::Array(Vec::new()));
}

/// A `hooks` value that is not a table is an error of the file, and no stop hook runs.
async fn a_hooks_value_of_the_wrong_shape_is_an_error(transport: Transport) {
    let mut s = Surface::start(transport, "hooks = 3\n", "", &[]).await;
    let file = s.home.config_path().display().to_string();
    let answer = s
        .client
        .request_ok("hooks/list", json!({"cwds": ["/"]}))
        .await;
    assert_eq!(
        answer["data"][0],
        json!({"cwd": "/", "hooks": [], "warnings": [],
               "errors": [{"path": file, "message": "`hooks` must be a table"}]})
    );
}
