//! Compaction and forks.

use super::*;

#[tokio::test]
async fn compaction_restarts_the_history() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    new_turn(&writer, "one", "first", Some(TurnStatus::Completed));
    writer.append(RolloutRecord::Compacted {
        summary: "we talked".into(),
        replacement_history: vec![ResponseItem::user_text("summary: we talked")],
    });
    new_turn(&writer, "two", "second", Some(TurnStatus::Completed));
    writer.flush(false).await.unwrap();
    let replay = read_rollout(writer.path()).unwrap();
    assert_eq!(
        texts(&replay.history),
        ["summary: we talked", "two", "second"]
    );
    assert_eq!(replay.turns.len(), 2, "turns keep their items");
    assert_eq!(replay.preview, "one");
    lean::tests::assert_same(writer.path());
}

#[tokio::test]
async fn fork_lines_copy_history_and_close_an_open_turn() {
    let home = tempfile::tempdir().unwrap();
    let (writer, source_id) = new_writer(home.path()).await;
    let turn1 = new_turn(&writer, "one", "first", Some(TurnStatus::Completed));
    new_turn(&writer, "two", "second", Some(TurnStatus::Completed));
    writer.append(RolloutRecord::ThreadNameSet { name: "src".into() });
    let turn3 = new_turn(&writer, "three", "partial", None);
    writer.flush(false).await.unwrap();
    let (lines, _) = read_lines(writer.path()).unwrap();

    // Whole (busy) source: the open turn is closed as an interrupt would close it.
    let copied = fork_lines(&lines, None).unwrap();
    assert!(
        !copied
            .iter()
            .any(|l| matches!(l.record, RolloutRecord::SessionMeta(_)))
    );
    let fork_id = new_thread_id();
    let mut fork_meta = meta(&fork_id, now_secs());
    fork_meta.forked_from_id = Some(source_id.clone());
    let fork = RolloutWriter::create(home.path(), fork_meta).await.unwrap();
    for line in copied {
        fork.append_line(line);
    }
    fork.close().await.unwrap();
    let found = find_rollout(home.path(), &fork_id).unwrap().unwrap();
    let replay = read_rollout(&found.path).unwrap();
    assert_eq!(replay.meta.forked_from_id, Some(source_id));
    assert_eq!(replay.name.as_deref(), Some("src"));
    assert_eq!(replay.preview, "one");
    assert_eq!(
        replay.turns.iter().map(|t| t.status).collect::<Vec<_>>(),
        [
            TurnStatus::Completed,
            TurnStatus::Completed,
            TurnStatus::Interrupted
        ]
    );
    assert_eq!(
        texts(&replay.history).last().map(String::as_str),
        Some(TURN_ABORTED_MARKER)
    );
    assert!(replay.updated_at >= replay.meta.created_at);

    // Through turn 1: turn 2 and later are left out.
    let through = fork_lines(&lines, Some(&turn1)).unwrap();
    let started: Vec<_> = through
        .iter()
        .filter_map(|l| match &l.record {
            RolloutRecord::TurnStarted { turn_id, .. } => Some(turn_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started, std::slice::from_ref(&turn1));
    assert!(!through.iter().any(|l| matches!(
        &l.record,
        RolloutRecord::ResponseItem(item) if item.message_text().as_deref() == Some(TURN_ABORTED_MARKER)
    )));
    assert!(matches!(
        fork_lines(&lines, Some(&turn3)).unwrap_err(),
        RolloutError::TurnInProgress(_)
    ));
    assert!(matches!(
        fork_lines(&lines, Some(&new_turn_id())).unwrap_err(),
        RolloutError::TurnNotFound(_)
    ));
}
