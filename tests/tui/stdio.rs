//! The TUI's start-up sequence over stdio with `experimentalApi: true`, as an editor
//! extension starts the app server as a child: every request the Codex TUI 0.171.0 sent the
//! reference at start-up and for its first turn (`fixtures/tui-startup.jsonl`, captured, with
//! the workspace and thread id as placeholders), in order, each answered as the reference
//! answered it (`expect`: a result, or the reference's error code and message).

use serde_json::{Value, json};
use weft_mock_model::{MockModel, Reply};
use weft_test_support::{ClientHome, Daemon, TestHome, mock_model_config};

const STARTUP: &str = include_str!("fixtures/tui-startup.jsonl");

#[tokio::test]
async fn the_tui_startup_sequence_over_stdio() {
    let mock = MockModel::start().await.unwrap();
    let weft = TestHome::with_config(&format!(
        "approval_policy = \"on-request\"\n{}",
        mock_model_config(&mock.base_url(), "responses")
    ));
    let scratch = ClientHome::new();
    let cwd = scratch.workspace().display().to_string();
    let mut daemon = Daemon::builder(&weft)
        .current_dir(scratch.workspace())
        .start()
        .await;
    let mut client = daemon.client().await;
    client
        .initialize_with(json!({
            "clientInfo": {"name": "codex-tui", "title": null, "version": "0.171.0"},
            "capabilities": {"requiredHumanApproval": true, "experimentalApi": true,
                             "requestAttestation": false, "optOutNotificationMethods": null}
        }))
        .await;
    mock.push(Reply::new().text("Hello from the mock model.").responses());
    let mut thread_id = String::new();
    for (n, line) in STARTUP.lines().enumerate() {
        let text = line
            .replace("{{CWD}}", &cwd)
            .replace("{{THREAD_ID}}", &thread_id);
        let mut message: Value = serde_json::from_str(&text).unwrap();
        let expect = message
            .as_object_mut()
            .and_then(|m| m.remove("expect"))
            .unwrap();
        let method = message["method"].as_str().unwrap().to_owned();
        let id = json!(format!("startup-{n}"));
        message["id"] = id.clone();
        client.send_json(message).await;
        let answer = client.response_to(&id).await;
        match (&expect["error"], answer) {
            (Value::Null, Ok(result)) => {
                if method == "thread/start" {
                    thread_id = result["thread"]["id"].as_str().unwrap().to_owned();
                    assert_eq!(result["cwd"], cwd.as_str(), "thread/start without a cwd");
                }
            }
            (Value::Null, Err(err)) => panic!("request {n} `{method}` failed: {err}"),
            (error, Ok(result)) => {
                panic!("request {n} `{method}`: the reference answers {error}, Weft {result}")
            }
            (error, Err(err)) => {
                assert_eq!(
                    (err.code, err.message.as_str()),
                    (
                        error["code"].as_i64().unwrap(),
                        error["message"].as_str().unwrap()
                    ),
                    "request {n} `{method}`: not the reference's error"
                );
            }
        }
    }
    assert!(!thread_id.is_empty(), "the sequence has no thread/start");
    client
        .wait_for("turn/completed", |m| m["method"] == "turn/completed")
        .await;
    // The TUI marks the thread read with the revision Weft announced.
    let changed = client
        .wait_for("thread/readState/changed", |m| {
            m["method"] == "thread/readState/changed"
        })
        .await;
    let revision = changed["params"]["readState"]["revision"].clone();
    client
        .request(
            "thread/readState/update",
            json!({"threadId": thread_id, "operation": {"type": "read"},
                   "expectedRevision": revision}),
        )
        .await
        .unwrap_or_else(|err| panic!("thread/readState/update failed: {err}"));
}
