use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use weft_protocol::{
    AgentMessageItem, AskForApproval, CodexErrorInfo, ReasoningEffort, SandboxMode, SandboxPolicy,
    SessionSource, ThreadId, ThreadItem, ThreadItemDetails, ThreadStatus, ThreadTokenUsage,
    TokenUsageBreakdown, TurnError, TurnId, TurnItemsView, TurnStatus, UserInput, UserMessageItem,
};

use super::paths::utc_parts;
use super::*;
use crate::model::{ResponseItem, Role};
use crate::time::{new_thread_id, new_turn_id, now_secs};

fn meta(id: &ThreadId, created_at: i64) -> SessionMeta {
    SessionMeta {
        id: id.clone(),
        created_at,
        cwd: "/work/project".into(),
        model: "gpt-test".into(),
        model_provider: "mock".into(),
        source: SessionSource::Vscode,
        originator: Some("test-client".into()),
        cli_version: "0.1.0".into(),
        forked_from_id: None,
        ephemeral: false,
        base_instructions: None,
        developer_instructions: Some("be brief".into()),
        approval_policy: AskForApproval::Never,
        sandbox_policy: SandboxPolicy::from_mode(SandboxMode::ReadOnly),
        reasoning_effort: Some(ReasoningEffort::new("low")),
        reasoning_summary: None,
        thread_source: None,
        git_info: None,
        dynamic_tools: Vec::new(),
    }
}

fn context(model: &str) -> TurnContextRecord {
    TurnContextRecord {
        model: model.into(),
        model_provider: "mock".into(),
        cwd: "/work/project".into(),
        approval_policy: AskForApproval::OnRequest,
        sandbox_policy: SandboxPolicy::from_mode(SandboxMode::WorkspaceWrite),
        effort: Some(ReasoningEffort::new("high")),
        summary: None,
        collaboration_mode: None,
        permission_profile: None,
    }
}

fn user_item(id: &str, text: &str) -> ThreadItem {
    ThreadItem::new(UserMessageItem {
        id: id.into(),
        client_id: None,
        content: vec![UserInput::Text {
            text: text.into(),
            text_elements: Vec::new(),
        }],
    })
}

fn agent_item(id: &str, text: &str) -> ThreadItem {
    ThreadItem::new(AgentMessageItem::new(id, text))
}

fn usage(total: i64) -> ThreadTokenUsage {
    ThreadTokenUsage {
        total: TokenUsageBreakdown {
            total_tokens: total,
            ..Default::default()
        },
        last: TokenUsageBreakdown::default(),
        model_context_window: Some(1000),
    }
}

/// The records of one turn, the way the runtime writes them; `end` = `None` leaves it open.
fn write_turn(
    writer: &RolloutWriter,
    turn_id: &TurnId,
    user: &str,
    answer: &str,
    end: Option<TurnStatus>,
) {
    writer.append(RolloutRecord::TurnStarted {
        turn_id: turn_id.clone(),
        started_at: now_secs(),
        context: context("gpt-test"),
    });
    writer.append(RolloutRecord::ResponseItem(ResponseItem::user_text(user)));
    writer.append(RolloutRecord::ItemCompleted {
        turn_id: turn_id.clone(),
        item: user_item(&format!("u-{turn_id}"), user),
    });
    writer.append(RolloutRecord::ResponseItem(ResponseItem::text_message(
        Role::Assistant,
        answer,
    )));
    writer.append(RolloutRecord::ItemCompleted {
        turn_id: turn_id.clone(),
        item: agent_item(&format!("m-{turn_id}"), answer),
    });
    writer.append(RolloutRecord::TokenUsage(usage(42)));
    if let Some(status) = end {
        if status == TurnStatus::Interrupted {
            writer.append(RolloutRecord::ResponseItem(ResponseItem::user_text(
                TURN_ABORTED_MARKER,
            )));
        }
        writer.append(RolloutRecord::TurnEnded {
            turn_id: turn_id.clone(),
            status,
            error: (status == TurnStatus::Failed)
                .then(|| TurnError::new("boom", Some(CodexErrorInfo::Other))),
            completed_at: now_secs(),
            duration_ms: Some(5),
        });
    }
}

async fn new_writer(home: &Path) -> (RolloutWriter, ThreadId) {
    let id = new_thread_id();
    let writer = RolloutWriter::create(home, meta(&id, now_secs()))
        .await
        .unwrap();
    (writer, id)
}

fn texts(history: &[ResponseItem]) -> Vec<String> {
    history
        .iter()
        .map(|i| i.message_text().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn write_then_read_rebuilds_history_and_turns() {
    let home = tempfile::tempdir().unwrap();
    let (writer, id) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();
    let (turn1, turn2) = (new_turn_id(), new_turn_id());
    write_turn(
        &writer,
        &turn1,
        "remember 42",
        "Okay, 42.",
        Some(TurnStatus::Completed),
    );
    write_turn(
        &writer,
        &turn2,
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

#[tokio::test]
async fn a_torn_last_line_is_skipped_and_kept_on_resume() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();
    let turn = new_turn_id();
    write_turn(&writer, &turn, "hi", "hello", Some(TurnStatus::Completed));
    writer.close().await.unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"ts":1,"type":"response_item","payload":{"type":"mess"#)
        .unwrap();
    drop(file);

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
    let cases: [(&str, &[u8]); 4] = [
        ("empty", b""),
        ("garbage", b"not json at all\n{\"ts\":1}\n"),
        (
            "torn header",
            br#"{"ts":1,"type":"session_meta","payload":{"id":"#,
        ),
        (
            "torn header, more lines",
            b"{\"ts\":1,\"type\":\"session_meta\",\"pay\n{\"ts\":2,\"type\":\"thread_name_set\",\"payload\":{\"name\":\"x\"}}\n",
        ),
    ];
    for (name, bytes) in cases {
        let path = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&path, bytes).unwrap();
        let err = RolloutWriter::resume(&path).await.unwrap_err();
        assert!(
            matches!(err, RolloutError::BadHeader { .. }),
            "{name}: {err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name}");
    }
}

#[tokio::test]
async fn a_complete_unterminated_last_line_is_kept() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();
    writer.close().await.unwrap();
    let line = RolloutLine::now(RolloutRecord::ThreadNameSet { name: "a".into() });
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(&serde_json::to_vec(&line).unwrap()).unwrap();
    drop(file);
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
    let cases: [(&str, &[u8]); 4] = [
        ("empty", b""),
        ("garbage", b"not json at all\n"),
        (
            "torn header",
            br#"{"ts":1,"type":"session_meta","payload":{"id":"#,
        ),
        (
            "no header",
            br#"{"ts":1,"type":"thread_name_set","payload":{"name":"x"}}
"#,
        ),
    ];
    for (name, bytes) in cases {
        let path = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&path, bytes).unwrap();
        let err = read_rollout(&path).unwrap_err();
        assert!(
            matches!(err, RolloutError::BadHeader { .. }),
            "{name}: {err}"
        );
        assert!(err.to_string().contains("no valid session header"), "{err}");
    }
    let missing = read_rollout(&dir.path().join("missing.jsonl")).unwrap_err();
    assert!(matches!(missing, RolloutError::Io { .. }));
}

#[tokio::test]
async fn a_turn_cut_by_a_crash_is_interrupted() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();
    let (turn1, turn2) = (new_turn_id(), new_turn_id());
    write_turn(&writer, &turn1, "one", "first", Some(TurnStatus::Completed));
    write_turn(&writer, &turn2, "two", "partial", None);
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
    let turn3 = new_turn_id();
    write_turn(
        &writer,
        &turn3,
        "three",
        "third",
        Some(TurnStatus::Completed),
    );
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
    let turn = new_turn_id();
    write_turn(&writer, &turn, "go", "going", Some(TurnStatus::Interrupted));
    writer.flush(false).await.unwrap();
    let replay = read_rollout(writer.path()).unwrap();
    assert_eq!(replay.turns[0].status, TurnStatus::Interrupted);
    assert_eq!(texts(&replay.history), ["go", "going", TURN_ABORTED_MARKER]);
}

#[tokio::test]
async fn a_second_writer_is_refused_while_the_first_holds_the_lock() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();

    let err = RolloutWriter::resume(&path).await.unwrap_err();
    assert!(matches!(err, RolloutError::Locked { .. }), "{err}");
    assert!(
        err.to_string().contains("locked by another writer"),
        "{err}"
    );
    let err = archive(home.path(), &path).unwrap_err();
    assert!(matches!(err, RolloutError::Locked { .. }), "{err}");
    // Reading is always allowed.
    read_rollout(&path).unwrap();

    // A clone shares the same writer; the lock goes with the last owner.
    let clone = writer.clone();
    clone.append(RolloutRecord::ThreadNameSet { name: "x".into() });
    writer.close().await.unwrap();
    assert!(matches!(
        clone.flush(false).await.unwrap_err(),
        RolloutError::Closed { .. }
    ));
    clone.append(RolloutRecord::ThreadNameSet {
        name: "dropped".into(),
    });
    let second = RolloutWriter::resume(&path).await.unwrap();
    second.close().await.unwrap();
    assert_eq!(read_rollout(&path).unwrap().name.as_deref(), Some("x"));
}

#[tokio::test]
async fn archive_and_unarchive_move_the_file() {
    let home = tempfile::tempdir().unwrap();
    let (writer, id) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();
    writer.close().await.unwrap();

    let archived = archive(home.path(), &path).unwrap();
    assert!(!path.exists() && archived.exists());
    assert_eq!(
        archived
            .strip_prefix(home.path().join(ARCHIVED_SESSIONS_DIR))
            .unwrap(),
        path.strip_prefix(home.path().join(SESSIONS_DIR)).unwrap()
    );
    let found = find_rollout(home.path(), &id).unwrap().unwrap();
    assert_eq!(
        found,
        FoundRollout {
            path: archived.clone(),
            archived: true
        }
    );
    assert!(matches!(
        archive(home.path(), &archived).unwrap_err(),
        RolloutError::NotUnder { .. }
    ));
    read_rollout(&archived).unwrap();

    let back = unarchive(home.path(), &archived).unwrap();
    assert_eq!(back, path);
    assert!(!archived.exists());
    let found = find_rollout(home.path(), &id).unwrap().unwrap();
    assert!(!found.archived);
    assert!(matches!(
        unarchive(home.path(), &back).unwrap_err(),
        RolloutError::NotUnder { .. }
    ));
    assert_eq!(find_rollout(home.path(), &new_thread_id()).unwrap(), None);
}

#[tokio::test]
async fn find_and_list_walk_both_trees() {
    let home = tempfile::tempdir().unwrap();
    // A non-UUIDv7 id (no fast path) and one created on an odd date.
    let odd = ThreadId::from("not-a-uuid");
    let writer = RolloutWriter::create(home.path(), meta(&odd, 86_400 * 3))
        .await
        .unwrap();
    let odd_path = writer.path().to_path_buf();
    writer.close().await.unwrap();
    assert!(odd_path.ends_with("sessions/1970/01/04/rollout-1970-01-04T00-00-00-not-a-uuid.jsonl"));
    let (writer, id) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();
    writer.close().await.unwrap();
    let moved = archive(home.path(), &path).unwrap();
    std::fs::write(home.path().join(SESSIONS_DIR).join("notes.txt"), "x").unwrap();

    assert_eq!(
        find_rollout(home.path(), &odd).unwrap().unwrap().path,
        odd_path
    );
    assert_eq!(find_rollout(home.path(), &id).unwrap().unwrap().path, moved);
    let all = list_rollouts(home.path()).unwrap();
    assert_eq!(
        all,
        vec![
            FoundRollout {
                path: odd_path,
                archived: false
            },
            FoundRollout {
                path: moved,
                archived: true
            },
        ]
    );
    assert!(
        list_rollouts(&home.path().join("nowhere"))
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn compaction_restarts_the_history() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let (turn1, turn2) = (new_turn_id(), new_turn_id());
    write_turn(&writer, &turn1, "one", "first", Some(TurnStatus::Completed));
    writer.append(RolloutRecord::Compacted {
        summary: "we talked".into(),
        replacement_history: vec![ResponseItem::user_text("summary: we talked")],
    });
    write_turn(
        &writer,
        &turn2,
        "two",
        "second",
        Some(TurnStatus::Completed),
    );
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
    let (turn1, turn2, turn3) = (new_turn_id(), new_turn_id(), new_turn_id());
    write_turn(&writer, &turn1, "one", "first", Some(TurnStatus::Completed));
    write_turn(
        &writer,
        &turn2,
        "two",
        "second",
        Some(TurnStatus::Completed),
    );
    writer.append(RolloutRecord::ThreadNameSet { name: "src".into() });
    write_turn(&writer, &turn3, "three", "partial", None);
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

#[tokio::test]
async fn ephemeral_threads_get_no_rollout() {
    let home = tempfile::tempdir().unwrap();
    let mut header = meta(&new_thread_id(), now_secs());
    header.ephemeral = true;
    assert!(matches!(
        RolloutWriter::create(home.path(), header)
            .await
            .unwrap_err(),
        RolloutError::Ephemeral(_)
    ));
    assert!(!home.path().join(SESSIONS_DIR).exists());
}

#[test]
fn rollout_paths_use_utc_dates() {
    let home = Path::new("/h");
    let id = ThreadId::from("0190a0b0-0000-7000-8000-000000000000");
    // 2024-02-29T23:59:59Z
    assert_eq!(
        rollout_path(home, 1_709_251_199, &id),
        PathBuf::from(
            "/h/sessions/2024/02/29/rollout-2024-02-29T23-59-59-0190a0b0-0000-7000-8000-000000000000.jsonl"
        )
    );
    assert_eq!(utc_parts(0), ((1970, 1, 1), (0, 0, 0)));
    assert_eq!(utc_parts(951_782_400), ((2000, 2, 29), (0, 0, 0)));
    assert_eq!(utc_parts(-1), ((1969, 12, 31), (23, 59, 59)));
    assert_eq!(utc_parts(4_102_444_800), ((2100, 1, 1), (0, 0, 0)));
}

#[test]
fn record_lines_have_a_stable_shape() {
    let line = RolloutLine {
        ts: 1_767_225_600_123,
        record: RolloutRecord::TurnEnded {
            turn_id: TurnId::from("t1"),
            status: TurnStatus::Interrupted,
            error: None,
            completed_at: 1_767_225_600,
            duration_ms: Some(1500),
        },
    };
    let json = serde_json::to_string(&line).unwrap();
    assert_eq!(
        json,
        r#"{"ts":1767225600123,"type":"turn_ended","payload":{"turn_id":"t1","status":"interrupted","error":null,"completed_at":1767225600,"duration_ms":1500}}"#
    );
    assert_eq!(serde_json::from_str::<RolloutLine>(&json).unwrap(), line);
}

/// The header keeps a thread's dynamic tools; a header without them (older rollouts, or a
/// thread without any) reads as none, and none are not written.
#[test]
fn session_meta_keeps_dynamic_tools_compatibly() {
    let id = ThreadId::from("t");
    let plain = serde_json::to_value(meta(&id, 1)).unwrap();
    assert!(plain.get("dynamic_tools").is_none(), "{plain}");
    let old: SessionMeta = serde_json::from_value(plain).unwrap();
    assert!(old.dynamic_tools.is_empty());
    let mut with_tools = meta(&id, 1);
    with_tools.dynamic_tools = serde_json::from_value(serde_json::json!([
        {"type": "namespace", "name": "codex_tui", "description": "d", "tools": [
            {"type": "function", "name": "list_threads", "description": "d",
             "inputSchema": {"type": "object"}, "deferLoading": true}
        ]}
    ]))
    .unwrap();
    let value = serde_json::to_value(&with_tools).unwrap();
    assert_eq!(value["dynamic_tools"][0]["tools"][0]["deferLoading"], true);
    assert_eq!(
        serde_json::from_value::<SessionMeta>(value).unwrap(),
        with_tools
    );
}

/// Write `items` completed items (in turns of 10: 1 user + 9 agent messages, each also a
/// history item) and read them back, returning the read time.
async fn large_round_trip(items: usize) -> std::time::Duration {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let turns = items / 10;
    for t in 0..turns {
        let turn_id = TurnId::from(format!("turn-{t}"));
        writer.append(RolloutRecord::TurnStarted {
            turn_id: turn_id.clone(),
            started_at: now_secs(),
            context: context("gpt-test"),
        });
        let user = format!("user message {t} with a little text to make the line realistic");
        writer.append(RolloutRecord::ResponseItem(ResponseItem::user_text(&user)));
        writer.append(RolloutRecord::ItemCompleted {
            turn_id: turn_id.clone(),
            item: user_item(&format!("u{t}"), &user),
        });
        for i in 0..9 {
            let text = format!(
                "agent answer {t}/{i}: lorem ipsum dolor sit amet, consectetur adipiscing elit"
            );
            writer.append(RolloutRecord::ResponseItem(ResponseItem::text_message(
                Role::Assistant,
                &text,
            )));
            writer.append(RolloutRecord::ItemCompleted {
                turn_id: turn_id.clone(),
                item: agent_item(&format!("m{t}-{i}"), &text),
            });
        }
        writer.append(RolloutRecord::TurnEnded {
            turn_id,
            status: TurnStatus::Completed,
            error: None,
            completed_at: now_secs(),
            duration_ms: Some(1),
        });
    }
    writer.flush(true).await.unwrap();
    let path = writer.path().to_path_buf();
    let start = Instant::now();
    let replay = read_rollout(&path).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(replay.turns.len(), turns);
    assert_eq!(
        replay.turns.iter().map(|t| t.items.len()).sum::<usize>(),
        items
    );
    assert_eq!(replay.history.len(), items);
    assert_eq!(replay.skipped_lines, 0);
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!("read {items} items ({bytes} bytes) in {elapsed:?}");
    elapsed
}

#[tokio::test]
async fn a_big_file_skips_bad_lines_when_parsed_in_parallel() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();
    writer.close().await.unwrap();
    let mut data = Vec::new();
    let mut expected = Vec::new();
    let mut n = 0;
    while data.len() < 6 << 20 {
        if n == 5000 {
            data.extend_from_slice(b"{\"ts\": garbage in the middle\n");
        }
        let text = format!("line {n} {}", "x".repeat(200));
        let line = RolloutLine::now(RolloutRecord::ResponseItem(ResponseItem::user_text(&text)));
        serde_json::to_writer(&mut data, &line).unwrap();
        data.push(b'\n');
        expected.push(text);
        n += 1;
    }
    data.extend_from_slice(br#"{"ts":1,"type":"response_item","payload":{"#);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&data)
        .unwrap();
    let replay = read_rollout(&path).unwrap();
    assert_eq!(replay.skipped_lines, 2);
    assert_eq!(texts(&replay.history), expected);
    lean::tests::assert_same(&path);
}

#[tokio::test]
async fn a_large_rollout_round_trips() {
    large_round_trip(10_000).await;
}

/// `cargo test --release -p weft-core rollout::tests::bench -- --ignored --nocapture`
#[tokio::test]
#[ignore = "benchmark: run in release mode"]
async fn bench_read_100k_items() {
    let elapsed = large_round_trip(100_000).await;
    if !cfg!(debug_assertions) {
        assert!(elapsed < std::time::Duration::from_secs(1), "{elapsed:?}");
    }
}
