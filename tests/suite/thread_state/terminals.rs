//! Background terminals: commands left running as sessions are listed with the reference's
//! fields and paging, terminated one by one, or all cleaned.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{Tui, thread_param};
use crate::persistence::UNKNOWN_ID;
use crate::turns::run_turn_on;

/// A turn whose model starts `sleep 60` as a background session (`call_id`); the session id
/// and the item's command line.
async fn start_session(t: &mut Tui, thread: &str, call_id: &str) -> (String, String) {
    t.push(Reply::new().function_call(
        call_id,
        "exec_command",
        json!({"cmd": "sleep 60", "yield_time_ms": 250}).to_string(),
    ));
    t.push(Reply::new().text("Started."));
    let run = run_turn_on(&mut t.client, thread, "start it").await;
    let item = run
        .messages
        .iter()
        .find(|m| m["method"] == "item/completed" && m["params"]["item"]["id"] == call_id)
        .unwrap_or_else(|| panic!("no item/completed for {call_id}"));
    let item = &item["params"]["item"];
    let session = item["processId"].as_str().expect("a session id");
    let command = item["command"].as_str().expect("a command");
    (session.to_string(), command.to_string())
}

fn pid_runs(pid: &Value) -> bool {
    let pid = pid.as_u64().expect("an osPid");
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

async fn list_terminate_clean(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let thread = t
        .thread_with(json!({"approvalPolicy": "never", "sandbox": "danger-full-access"}))
        .await;
    let empty = t
        .ok("thread/backgroundTerminals/list", thread_param(&thread))
        .await;
    assert_eq!(empty, json!({"data": [], "nextCursor": null}));

    let (first, command) = start_session(&mut t, &thread, "call_one").await;
    let (second, _) = start_session(&mut t, &thread, "call_two").await;
    let all = t
        .ok("thread/backgroundTerminals/list", thread_param(&thread))
        .await;
    let data = all["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "{all}");
    assert_eq!(data[0]["processId"], first.as_str());
    assert_eq!(data[0]["itemId"], "call_one");
    assert_eq!(data[0]["command"], command.as_str());
    assert!(command.contains("sleep 60"), "{command}");
    assert_eq!(data[0]["cwd"], t.home.path().display().to_string());
    assert_eq!(data[0]["cpuPercent"], Value::Null);
    assert!(pid_runs(&data[0]["osPid"]));
    assert_eq!(data[1]["processId"], second.as_str());
    assert_eq!(all["nextCursor"], Value::Null);

    let page = t
        .ok(
            "thread/backgroundTerminals/list",
            json!({"threadId": thread, "limit": 1}),
        )
        .await;
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
    assert_eq!(page["data"][0]["processId"], first.as_str());
    let rest = t
        .ok(
            "thread/backgroundTerminals/list",
            json!({"threadId": thread, "limit": 1, "cursor": page["nextCursor"]}),
        )
        .await;
    assert_eq!(rest["data"][0]["processId"], second.as_str());
    assert_eq!(rest["nextCursor"], Value::Null);

    let pid = data[0]["osPid"].clone();
    let terminate = json!({"threadId": thread, "processId": first});
    let done = t
        .ok("thread/backgroundTerminals/terminate", terminate.clone())
        .await;
    assert_eq!(done, json!({"terminated": true}));
    assert!(!pid_runs(&pid));
    let again = t
        .ok("thread/backgroundTerminals/terminate", terminate)
        .await;
    assert_eq!(again, json!({"terminated": false}));

    let pid = data[1]["osPid"].clone();
    let cleaned = t
        .ok("thread/backgroundTerminals/clean", thread_param(&thread))
        .await;
    assert_eq!(cleaned, json!({}));
    assert!(!pid_runs(&pid));
    let empty = t
        .ok("thread/backgroundTerminals/list", thread_param(&thread))
        .await;
    assert_eq!(empty["data"], json!([]));

    let err = t
        .err("thread/backgroundTerminals/list", thread_param(UNKNOWN_ID))
        .await;
    assert_eq!(err.message, format!("thread not found: {UNKNOWN_ID}"));
}

on_both_transports!(list_terminate_clean);
