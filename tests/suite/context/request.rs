//! What is sent again (docs/architecture.md §9.4): reasoning from before the latest user message is not,
//! and the environment context is sent in full once, then only as a diff of what changed.

use serde_json::json;
use weft_mock_model::{Reasoning, Reply, Usage};
use weft_test_support::Transport;

use super::{
    Persist, answer, conversation, environment_contexts, read_through_turn_completed, start,
    start_full_access_thread, str_at, text_input,
};
use crate::persistence::assert_follow_up;

/// Reasoning of the running turn goes back to the model (its tool round needs it); reasoning of
/// an earlier turn does not, while that turn's messages and tool calls still do.
async fn reasoning_from_an_old_turn_is_not_sent(transport: Transport) {
    let mut p = start(transport).await;
    p.push(
        Reply::new()
            .reasoning(
                Reasoning::new()
                    .summary("Planning the echo")
                    .encrypted_content(Some("enc-turn-1-a")),
            )
            .function_call(
                "call_echo",
                "exec_command",
                json!({"cmd": "echo hi"}).to_string(),
            )
            .usage(Usage::new(100, 20)),
    );
    p.push(
        Reply::new()
            .reasoning(
                Reasoning::new()
                    .summary("Reporting")
                    .encrypted_content(Some("enc-turn-1-b")),
            )
            .text("It printed hi.")
            .usage(Usage::new(140, 20)),
    );
    p.push(answer("Sure.", 160, 5));
    let thread = start_full_access_thread(&mut p).await;

    let first = p.run_turn(&thread, "run echo hi").await;
    assert_eq!(first.completed_turn()["status"], "completed");
    assert_eq!(first.completed_items_of("reasoning").len(), 2);
    let second = p.run_turn(&thread, "thanks").await;
    assert_eq!(second.completed_turn()["status"], "completed");

    let requests = p.wait_for_requests(3).await;
    let reasoning_of = |i: usize| -> Vec<String> {
        requests[i]
            .inputs_of_type("reasoning")
            .map(|item| item["encrypted_content"].as_str().unwrap_or("?").to_owned())
            .collect()
    };
    assert_eq!(
        reasoning_of(1),
        ["enc-turn-1-a"],
        "the tool round of the same turn carries its reasoning"
    );
    assert_eq!(
        reasoning_of(2),
        Vec::<String>::new(),
        "reasoning from before the latest user message is sent again: {:#?}",
        requests[2].input()
    );
    assert_follow_up(&requests[2], ["run echo hi", "It printed hi.", "thanks"]);
    assert_eq!(requests[2].inputs_of_type("function_call").count(), 1);
    assert!(requests[2].tool_output("call_echo").is_some());
}

/// `turn/start` with these extra params and one text input, through `turn/completed`.
async fn turn_with(p: &mut Persist, thread: &str, text: &str, extra: serde_json::Value) {
    let mut params = json!({"threadId": thread, "input": [text_input(text)]});
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    let id = p.client.send_request("turn/start", params).await;
    let messages = read_through_turn_completed(&mut p.client).await;
    assert!(
        messages
            .iter()
            .any(|m| m.get("id") == Some(&id) && m.get("result").is_some()),
        "turn/start failed: {messages:?}"
    );
    let completed = &messages.last().expect("turn/completed")["params"]["turn"];
    assert_eq!(completed["status"], "completed", "{completed}");
}

/// The environment context is in the first request in full, once; turns that change nothing
/// add nothing; a new `cwd` or `approvalPolicy` adds a diff with only the changed tag, just
/// before that turn's input.
async fn environment_context_once_then_only_changes(transport: Transport) {
    let mut p = start(transport).await;
    for n in 1..=5 {
        p.push(answer(format!("answer {n}"), 100, 10));
    }
    let sub = p.home.path().join("sub");
    std::fs::create_dir_all(&sub).expect("create the sub folder");
    let sub = sub.display().to_string();
    let home = p.cwd();
    let started = super::ok(
        &mut p.client,
        "thread/start",
        json!({"cwd": home, "approvalPolicy": "never", "sandbox": "read-only"}),
    )
    .await;
    let thread = str_at(&started, "/thread/id");
    let cwd = str_at(&started, "/cwd");

    turn_with(&mut p, &thread, "one", json!({})).await;
    turn_with(&mut p, &thread, "two", json!({})).await;
    turn_with(&mut p, &thread, "three", json!({"cwd": sub})).await;
    turn_with(
        &mut p,
        &thread,
        "four",
        json!({"approvalPolicy": "on-request"}),
    )
    .await;
    turn_with(&mut p, &thread, "five", json!({})).await;
    let requests = p.wait_for_requests(5).await;

    let first = environment_contexts(&requests[0]);
    assert_eq!(first.len(), 1, "{first:#?}");
    for part in [
        format!("<cwd>{cwd}</cwd>"),
        "<approval_policy>never</approval_policy>".to_owned(),
        "<sandbox_mode>read-only</sandbox_mode>".to_owned(),
        "<current_date>".to_owned(),
    ] {
        assert!(first[0].contains(&part), "{part} missing from {}", first[0]);
    }
    assert_eq!(
        environment_contexts(&requests[1]),
        first,
        "an unchanged turn adds no environment context"
    );

    let cwd_diff = format!("<environment_context>\n  <cwd>{sub}</cwd>\n</environment_context>");
    let third = environment_contexts(&requests[2]);
    assert_eq!(third, [first[0].clone(), cwd_diff.clone()]);
    let approval_diff = "<environment_context>\n  <approval_policy>on-request</approval_policy>\n</environment_context>";
    let fourth = environment_contexts(&requests[3]);
    assert_eq!(
        fourth,
        [first[0].clone(), cwd_diff.clone(), approval_diff.to_owned()]
    );
    assert_eq!(
        environment_contexts(&requests[4]),
        fourth,
        "an unchanged turn adds no environment context"
    );

    // Each diff sits right before the input of the turn that changed the setting.
    let users = requests[4].message_texts("user");
    let at = |text: &str| {
        users
            .iter()
            .position(|t| t == text)
            .unwrap_or_else(|| panic!("{text:?} not in {users:#?}"))
    };
    assert_eq!(at(&cwd_diff) + 1, at("three"), "{users:#?}");
    assert_eq!(at(approval_diff) + 1, at("four"), "{users:#?}");
    assert_eq!(
        conversation(&requests[4]).len(),
        9,
        "five questions, four answers, nothing else: {:#?}",
        conversation(&requests[4])
    );
}

on_both_transports!(
    reasoning_from_an_old_turn_is_not_sent,
    environment_context_once_then_only_changes,
);
