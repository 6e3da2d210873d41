//! Writing a thread and reading it back.

use super::*;

#[tokio::test]
async fn write_then_read_rebuilds_history_and_turns() {
    let home = tempfile::tempdir().unwrap();
    let (writer, id) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();
    let turn1 = new_turn(
        &writer,
        "remember 42",
        "Okay, 42.",
        Some(TurnStatus::Completed),
    );
    new_turn(
        &writer,
        "what number?",
        "You said 42.",
        Some(TurnStatus::Failed),
    );
    writer.append(RolloutRecord::ThreadNameSet {
        name: "numbers".into(),
    });
    writer.flush(true).await.unwrap();

    // Layout: sessions/YYYY/MM/DD/rollout-<created>-<id>.jsonl.
    let relative = path.strip_prefix(home.path().join(SESSIONS_DIR)).unwrap();
    assert_eq!(relative.components().count(), 4, "{relative:?}");
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("rollout-") && name.ends_with(&format!("-{id}.jsonl")));

    let replay = read_rollout(&path).unwrap();
    assert_eq!(replay.meta.id, id);
    assert_eq!(replay.skipped_lines, 0);
    assert_eq!(
        texts(&replay.history),
        ["remember 42", "Okay, 42.", "what number?", "You said 42."]
    );
    assert_eq!(replay.turns.len(), 2);
    let first = &replay.turns[0];
    assert_eq!(first.id, turn1);
    assert_eq!(first.status, TurnStatus::Completed);
    assert_eq!(first.items_view, TurnItemsView::Full);
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.root_turn_id.as_ref(), Some(&turn1));
    assert!(first.started_at.is_some() && first.completed_at.is_some());
    assert!(matches!(
        &first.items[1].details,
        ThreadItemDetails::AgentMessage(m) if m.text == "Okay, 42."
    ));
    let second = &replay.turns[1];
    assert_eq!(second.status, TurnStatus::Failed);
    assert_eq!(
        second.error.as_ref().map(|e| e.message.as_str()),
        Some("boom")
    );
    assert_eq!(replay.token_usage, Some(usage(42)));
    assert_eq!(replay.name.as_deref(), Some("numbers"));
    assert_eq!(replay.preview, "remember 42");
    assert!(replay.updated_at >= replay.meta.created_at);
    assert_eq!(replay.last_context, Some(context("gpt-test")));

    let thread = replay.thread(Some(&path));
    assert_eq!(thread.status, ThreadStatus::NotLoaded);
    assert_eq!(thread.preview, "remember 42");
    assert_eq!(thread.name.as_deref(), Some("numbers"));
    assert_eq!(thread.reasoning_effort, Some(ReasoningEffort::new("high")));
    assert_eq!(thread.path.as_deref(), Some(path.to_str().unwrap()));
    assert!(thread.turns.is_empty());
    let settings = replay.settings();
    assert_eq!(settings.approval_policy, AskForApproval::OnRequest);
    assert_eq!(settings.developer_instructions.as_deref(), Some("be brief"));

    // Every line has the documented shape.
    let text = std::fs::read_to_string(&path).unwrap();
    for line in text.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(value["ts"].is_i64() && value["type"].is_string(), "{line}");
        assert!(value.get("payload").is_some(), "{line}");
    }
    assert!(text.starts_with("{\"ts\":"));
    lean::tests::assert_same(&path);
    writer.close().await.unwrap();
}

#[tokio::test]
async fn a_fresh_thread_is_readable_at_once() {
    let home = tempfile::tempdir().unwrap();
    let (writer, id) = new_writer(home.path()).await;
    // No flush: the header is written by `create`.
    let replay = read_rollout(writer.path()).unwrap();
    assert_eq!(replay.meta.id, id);
    assert!(replay.turns.is_empty() && replay.history.is_empty());
    assert_eq!(replay.preview, "");
    assert_eq!(replay.last_context, None);
    assert_eq!(replay.thread(None).model.as_deref(), Some("gpt-test"));
    let found = find_rollout(home.path(), &id).unwrap().unwrap();
    assert_eq!(found.path, writer.path());
    assert!(!found.archived);
}
