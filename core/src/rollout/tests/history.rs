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

/// The streamed copy of a stored thread writes the lines `fork_lines` returns for the same cut
/// (the closing lines of an open turn stamped at their own "now"), skips a torn last line,
/// and refuses the cuts `fork_lines` refuses.
#[tokio::test]
async fn copy_fork_streams_what_fork_lines_returns() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let turn1 = new_turn(&writer, "one", "first", Some(TurnStatus::Completed));
    let turn2 = new_turn(&writer, "two", "second", Some(TurnStatus::Completed));
    let turn3 = new_turn(&writer, "three", "partial", None);
    writer.flush(false).await.unwrap();
    let path = writer.path().to_path_buf();
    writer.close().await.unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"ts":1,"type":"respo"#)
        .unwrap();
    let (lines, skipped) = read_lines(&path).unwrap();
    assert_eq!(skipped, 1);

    // The closing lines of an open turn are stamped when written: their times (the line's, and
    // the turn end's `completed_at` and `duration_ms`) are left out of the comparison.
    let without_ts = |lines: &[RolloutLine]| -> Vec<RolloutRecord> {
        lines
            .iter()
            .map(|l| match l.record.clone() {
                RolloutRecord::TurnEnded {
                    turn_id,
                    status,
                    error,
                    ..
                } => RolloutRecord::TurnEnded {
                    turn_id,
                    status,
                    error,
                    completed_at: 0,
                    duration_ms: None,
                },
                record => record,
            })
            .collect()
    };
    for cut in [None, Some(&turn1), Some(&turn2)] {
        let expected = fork_lines(&lines, cut).unwrap();
        let mut out = Vec::new();
        let written = copy_fork(&path, &mut out, cut).unwrap();
        let copied: Vec<RolloutLine> = out
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(written, copied.len(), "{cut:?}");
        assert_eq!(without_ts(&copied), without_ts(&expected), "{cut:?}");
        // Copied lines keep their times; only the closing lines of the open turn (cut None)
        // are stamped when written.
        let closing = if cut.is_none() { 2 } else { 0 };
        let kept = copied.len() - closing;
        assert_eq!(copied[..kept], expected[..kept], "{cut:?}");
    }
    let mut out = Vec::new();
    assert!(matches!(
        copy_fork(&path, &mut out, Some(&turn3)).unwrap_err(),
        RolloutError::TurnInProgress(_)
    ));
    assert!(matches!(
        copy_fork(&path, &mut Vec::new(), Some(&new_turn_id())).unwrap_err(),
        RolloutError::TurnNotFound(_)
    ));
}

/// A whole new rollout written in one pass: its body follows the header and it resumes like
/// any other; when the body fails, no file is left behind.
#[tokio::test]
async fn a_new_rollout_is_written_whole_or_not_at_all() {
    let home = tempfile::tempdir().unwrap();
    let failed = new_thread_id();
    let err = RolloutWriter::write_new(home.path(), meta(&failed, now_secs()), |_, _| {
        Err::<(), _>(RolloutError::TurnNotFound("t".into()))
    })
    .await
    .unwrap_err();
    assert!(matches!(err, RolloutError::TurnNotFound(_)), "{err}");
    assert!(find_rollout(home.path(), &failed).unwrap().is_none());

    let id = new_thread_id();
    let line = RolloutLine::now(RolloutRecord::ThreadNameSet { name: "n".into() });
    let bytes = serde_json::to_vec(&line).unwrap();
    let (path, header) =
        RolloutWriter::write_new(home.path(), meta(&id, now_secs()), move |out, header| {
            out.write_all(&bytes).unwrap();
            out.write_all(b"\n").unwrap();
            Ok(header.to_vec())
        })
        .await
        .unwrap();
    let written = std::fs::read(&path).unwrap();
    assert!(
        written.starts_with(&header),
        "the body is given the header as written"
    );
    assert_eq!(header.last(), Some(&b'\n'));
    assert_eq!(read_rollout(&path).unwrap().name.as_deref(), Some("n"));
    let writer = RolloutWriter::resume(&path).await.unwrap();
    writer.close().await.unwrap();
}
