//! `feedback/save`: a ZIP at the caller's path with the report, the thread's rollout and the
//! extra files, never a file of `$WEFT_HOME` but the rollout; the reference's refusals; and
//! `feedback/upload`, which is not served.

use std::io::Read;

use serde_json::{Value, json};
use weft_test_support::Transport;

use crate::thread_state::Tui;

const SECRET: &str = "weft-secret-token-3f9c2a";

/// The ZIP's entries, each with its bytes.
fn entries(path: &str) -> Vec<(String, Vec<u8>)> {
    let file = std::fs::File::open(path).expect("the bundle");
    let mut archive = zip::ZipArchive::new(file).expect("a ZIP");
    (0..archive.len())
        .map(|i| {
            let mut entry = archive.by_index(i).unwrap();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            (entry.name().unwrap().to_string(), bytes)
        })
        .collect()
}

async fn save_bundle(transport: Transport) {
    let mut t = Tui::start(transport).await;
    std::fs::write(t.home.path().join("ws-token"), SECRET).unwrap();
    let thread = t.thread().await;
    t.turn(&thread, "the answer").await;
    let out = tempfile::tempdir().unwrap();
    let extra = out.path().join("client.log");
    std::fs::write(&extra, "client side log").unwrap();
    let save_path = out.path().join("bundle.zip").display().to_string();

    let saved = t
        .ok(
            "feedback/save",
            json!({"classification": "bad_result", "reason": "wrong file", "threadId": thread,
                   "includeLogs": true, "tags": {"turn": "1"},
                   "extraLogFiles": [extra.display().to_string()], "savePath": save_path}),
        )
        .await;
    assert_eq!(
        saved,
        json!({"savedPath": save_path, "threadId": thread, "promptHash": null})
    );
    let files = entries(&save_path);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[0], "report.json");
    assert_eq!(*names.last().unwrap(), "manifest.json");
    let rollout = files
        .iter()
        .find(|(n, _)| {
            n.starts_with("attachments/0000/rollout-") && n.ends_with(&format!("{thread}.jsonl"))
        })
        .expect("the thread's rollout");
    assert!(String::from_utf8_lossy(&rollout.1).contains("the answer"));
    assert!(names.contains(&"attachments/0001/client.log"));
    let report: Value = serde_json::from_slice(&files[0].1).unwrap();
    assert_eq!(report["tags"]["classification"], "bad_result");
    assert_eq!(report["tags"]["reason"], "wrong file");
    assert_eq!(report["tags"]["turn"], "1");
    assert_eq!(report["tags"]["thread_id"], thread.as_str());
    assert_eq!(
        report["message"],
        format!("[Bad result]: Weft session {thread}")
    );
    let manifest: Value = serde_json::from_slice(&files.last().unwrap().1).unwrap();
    assert_eq!(manifest.as_array().unwrap().len(), 2);
    assert_eq!(manifest[1]["filename"], "client.log");
    // No secret of $WEFT_HOME, no config.
    let config = std::fs::read_to_string(t.home.path().join("config.toml")).unwrap();
    for (name, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(SECRET), "{name} holds the token");
        assert!(!text.contains(config.trim()), "{name} holds the config");
    }

    // Without includeLogs: the report and the extra files only; no thread: a new id.
    let bare_path = out.path().join("bare.zip").display().to_string();
    let bare = t
        .ok(
            "feedback/save",
            json!({"classification": "bug", "savePath": bare_path}),
        )
        .await;
    assert!(
        bare["threadId"]
            .as_str()
            .unwrap()
            .starts_with("no-active-thread-")
    );
    let names: Vec<String> = entries(&bare_path).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["report.json", "manifest.json"]);

    // Refusals, each leaving nothing behind.
    let err = t
        .err(
            "feedback/save",
            json!({"classification": "bug", "savePath": save_path}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            -32603,
            "failed to save feedback: feedback save path already exists"
        )
    );
    let err = t
        .err(
            "feedback/save",
            json!({"classification": "bug", "savePath": "rel.zip"}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32600, "feedback savePath must be an absolute host path")
    );
    let token = t.home.path().join("ws-token").display().to_string();
    let refused = out.path().join("refused.zip");
    let err = t
        .err(
            "feedback/save",
            json!({"classification": "bug", "extraLogFiles": [token],
                   "savePath": refused.display().to_string()}),
        )
        .await;
    assert_eq!(err.code, -32600);
    assert!(err.message.contains("inside $WEFT_HOME"), "{}", err.message);
    assert!(!refused.exists());
    let err = t
        .err("feedback/save", json!({"classification": "bug"}))
        .await;
    assert_eq!(err.message, "Invalid request: missing field `savePath`");

    // feedback/upload sends to OpenAI: not served.
    let err = t
        .err("feedback/upload", json!({"classification": "bug"}))
        .await;
    assert_eq!(err.code, -32600);
    assert!(
        err.message
            .starts_with("Invalid request: unknown variant `feedback/upload`"),
        "{}",
        err.message
    );
}

on_both_transports!(save_bundle);
