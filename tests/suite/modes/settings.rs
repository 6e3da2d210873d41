//! `thread/settings/updated`: a `turn/start` that changes the thread's settings tells the
//! thread's experimental subscribers before its response; one that changes nothing says
//! nothing; a client without `experimentalApi` never sees it (docs/protocol.md §7.25, §4.2).

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{Modes, send_turn};
use crate::turns::{Harness, read_through_turn_completed, str_at};

fn position(messages: &[Value], pred: impl Fn(&Value) -> bool) -> Option<usize> {
    messages.iter().position(pred)
}

async fn changed_settings_are_announced_before_the_response(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let started = m.thread(json!({})).await;
    let thread = str_at(&started, "/thread/id");
    m.h.push(Reply::new().text("One."));
    let id = send_turn(&mut m.h.client, &thread, "Hi.", json!({"effort": "high"})).await;
    let messages = read_through_turn_completed(&mut m.h.client).await;
    let updated = position(&messages, |v| v["method"] == "thread/settings/updated")
        .unwrap_or_else(|| panic!("no thread/settings/updated: {messages:#?}"));
    let response = position(&messages, |v| v.get("method").is_none() && v["id"] == id)
        .expect("the turn/start response");
    assert!(updated < response, "{messages:#?}");
    let params = &messages[updated]["params"];
    assert_eq!(params["threadId"], thread.as_str());
    let settings = &params["threadSettings"];
    assert_eq!(settings["effort"], "high");
    assert_eq!(settings["cwd"], m.cwd());
    assert_eq!(settings["approvalsReviewer"], "user");
    assert_eq!(settings["collaborationMode"]["mode"], "default");
    assert_eq!(
        settings["collaborationMode"]["settings"]["reasoning_effort"],
        "high"
    );

    // The same settings again: nothing to announce.
    m.h.push(Reply::new().text("Two."));
    send_turn(
        &mut m.h.client,
        &thread,
        "Again.",
        json!({"effort": "high"}),
    )
    .await;
    let messages = read_through_turn_completed(&mut m.h.client).await;
    assert_eq!(
        position(&messages, |v| v["method"] == "thread/settings/updated"),
        None,
        "{messages:#?}"
    );
}

async fn clients_without_the_opt_in_are_not_told(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let thread = h.start_thread().await;
    h.push(Reply::new().text("One."));
    send_turn(&mut h.client, &thread, "Hi.", json!({"effort": "high"})).await;
    let messages = read_through_turn_completed(&mut h.client).await;
    assert_eq!(
        position(&messages, |v| v["method"] == "thread/settings/updated"),
        None,
        "{messages:#?}"
    );
}

on_both_transports!(
    changed_settings_are_announced_before_the_response,
    clients_without_the_opt_in_are_not_told,
);
