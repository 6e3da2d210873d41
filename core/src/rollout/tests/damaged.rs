//! Damaged rollouts: torn or unterminated last lines, bad headers, turns cut by a crash.

use super::*;

/// Writes four files without a valid header: empty, `garbage`, a torn header and `last`;
/// returns each case's name, path and bytes.
fn bad_header_files<'a>(
    dir: &Path,
    garbage: &'a [u8],
    last: (&'a str, &'a [u8]),
) -> Vec<(&'a str, PathBuf, &'a [u8])> {
    let torn: &[u8] = br#"{"ts":1,"type":"session_meta","payload":{"id":"#;
    [
        ("empty", &b""[..]),
        ("garbage", garbage),
        ("torn header", torn),
        last,
    ]
    .into_iter()
    .map(|(name, bytes)| {
        let path = dir.join(format!("{name}.jsonl"));
        std::fs::write(&path, bytes).unwrap();
        (name, path, bytes)
    })
    .collect()
}

fn assert_bad_header(name: &str, err: &RolloutError) {
    assert!(
        matches!(err, RolloutError::BadHeader { .. }),
        "{name}: {err}"
    );
}

#[tokio::test]
async fn a_torn_last_line_is_skipped_and_kept_on_resume() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();
    new_turn(&writer, "hi", "hello", Some(TurnStatus::Completed));
    writer.close().await.unwrap();
    append_bytes(
        &path,
        br#"{"ts":1,"type":"response_item","payload":{"type":"mess"#,
    );

    let replay = read_rollout(&path).unwrap();
    assert_eq!(replay.skipped_lines, 1);
    assert_eq!(texts(&replay.history), ["hi", "hello"]);
    assert_eq!(replay.turns[0].status, TurnStatus::Completed);
    lean::tests::assert_same(&path);

    let before = std::fs::read(&path).unwrap();
    let writer = RolloutWriter::resume(&path).await.unwrap();
    writer.append(RolloutRecord::ThreadNameSet { name: "n".into() });
    writer.flush(false).await.unwrap();
    // Only appended to: the torn line stays, ended by a newline, and is still skipped.
    let after = std::fs::read(&path).unwrap();
    assert!(after.starts_with(&before));
    assert_eq!(after[before.len()], b'\n');
    let replay = read_rollout(&path).unwrap();
    assert_eq!(replay.skipped_lines, 1);
    assert_eq!(texts(&replay.history), ["hi", "hello"]);
    assert_eq!(replay.name.as_deref(), Some("n"));
    assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));
    lean::tests::assert_same(&path);
}

#[tokio::test]
async fn a_rollout_without_a_valid_header_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let files = bad_header_files(
        dir.path(),
        b"not json at all\n{\"ts\":1}\n",
        (
            "torn header, more lines",
            b"{\"ts\":1,\"type\":\"session_meta\",\"pay\n{\"ts\":2,\"type\":\"thread_name_set\",\"payload\":{\"name\":\"x\"}}\n",
        ),
    );
    for (name, path, bytes) in files {
        let err = RolloutWriter::resume(&path).await.unwrap_err();
        assert_bad_header(name, &err);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name}");
    }
}

#[tokio::test]
async fn a_complete_unterminated_last_line_is_kept() {
    let home = tempfile::tempdir().unwrap();
    let (path, _) = closed_rollout(home.path()).await;
    let line = RolloutLine::now(RolloutRecord::ThreadNameSet { name: "a".into() });
    append_bytes(&path, &serde_json::to_vec(&line).unwrap());
    assert_eq!(read_rollout(&path).unwrap().name.as_deref(), Some("a"));

    let writer = RolloutWriter::resume(&path).await.unwrap();
    writer.append(RolloutRecord::TokenUsage(usage(7)));
    writer.close().await.unwrap();
    let replay = read_rollout(&path).unwrap();
    assert_eq!(replay.skipped_lines, 0);
    assert_eq!(replay.name.as_deref(), Some("a"));
    assert_eq!(replay.token_usage, Some(usage(7)));
}

#[test]
fn a_rollout_without_a_valid_header_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let files = bad_header_files(
        dir.path(),
        b"not json at all\n",
        (
            "no header",
            br#"{"ts":1,"type":"thread_name_set","payload":{"name":"x"}}
"#,
        ),
    );
    for (name, path, _) in files {
        let err = read_rollout(&path).unwrap_err();
        assert_bad_header(name, &err);
        assert!(err.to_string().contains("no valid session header"), "{err}");
    }
    let missing = read_rollout(&dir.path().join("missing.jsonl")).unwrap_err();
    assert!(matches!(missing, RolloutError::Io { .. }));
}

#[tokio::test]
async fn a_turn_cut_by_a_crash_is_interrupted() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    new_turn(&writer, "one", "first", Some(TurnStatus::Completed));
    new_turn(&writer, "two", "partial", None);
    let path = writer.path().to_path_buf();
    writer.append(RolloutRecord::ResponseItem(ResponseItem::FunctionCall {
        id: None,
        name: "exec_command".into(),
        namespace: None,
        arguments: "{}".into(),
        call_id: "call_1".into(),
    }));
    writer.flush(true).await.unwrap();
    drop(writer); // the "crash": no turn_ended

    let last_ts = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .last()
        .map(|l| serde_json::from_str::<RolloutLine>(l).unwrap().ts)
        .unwrap();
    let replay = read_rollout(&path).unwrap();
    let cut = &replay.turns[1];
    assert_eq!(cut.status, TurnStatus::Interrupted);
    assert_eq!(cut.completed_at, Some(last_ts / 1000));
    assert!(cut.duration_ms.is_some());
    assert_eq!(cut.items.len(), 2, "completed items survive");
    assert_eq!(
        replay
            .history
            .last()
            .and_then(ResponseItem::message_text)
            .as_deref(),
        Some(TURN_ABORTED_MARKER)
    );
    lean::tests::assert_same(&path);

    // Resumed later: the cut turn stays interrupted, its marker sits before the next turn.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let writer = RolloutWriter::resume(&path).await.unwrap();
    new_turn(&writer, "three", "third", Some(TurnStatus::Completed));
    writer.close().await.unwrap();
    let replay = read_rollout(&path).unwrap();
    assert_eq!(
        replay.turns.iter().map(|t| t.status).collect::<Vec<_>>(),
        [
            TurnStatus::Completed,
            TurnStatus::Interrupted,
            TurnStatus::Completed
        ]
    );
    assert_eq!(replay.turns[1].completed_at, Some(last_ts / 1000));
    let history = texts(&replay.history);
    let marker = history
        .iter()
        .position(|t| t == TURN_ABORTED_MARKER)
        .unwrap();
    assert_eq!(history[marker + 1], "three");
    assert_eq!(
        history.iter().filter(|t| *t == TURN_ABORTED_MARKER).count(),
        1
    );
    lean::tests::assert_same(&path);
}

#[tokio::test]
async fn an_interrupted_turn_keeps_the_runtime_marker_only() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    new_turn(&writer, "go", "going", Some(TurnStatus::Interrupted));
    writer.flush(false).await.unwrap();
    let replay = read_rollout(writer.path()).unwrap();
    assert_eq!(replay.turns[0].status, TurnStatus::Interrupted);
    assert_eq!(texts(&replay.history), ["go", "going", TURN_ABORTED_MARKER]);
}
