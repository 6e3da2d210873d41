//! Large rollouts: parallel parsing, round trips, the read benchmark.

use super::*;

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
    let (path, _) = closed_rollout(home.path()).await;
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
    append_bytes(&path, &data);
    let replay = read_rollout(&path).unwrap();
    assert_eq!(replay.skipped_lines, 2);
    assert_eq!(texts(&replay.history), expected);
    lean::tests::assert_same(&path);
}

#[tokio::test]
async fn a_large_rollout_round_trips() {
    large_round_trip(10_000).await;
}

/// `cargo test --release -p weft-core rollout::tests::large::bench -- --ignored --nocapture`
#[tokio::test]
#[ignore = "benchmark: run in release mode"]
async fn bench_read_100k_items() {
    let elapsed = large_round_trip(100_000).await;
    if !cfg!(debug_assertions) {
        assert!(elapsed < std::time::Duration::from_secs(1), "{elapsed:?}");
    }
}
