//! `RolloutWriter::truncate` (`thread/revert`, docs/protocol.md §7.27): the file is cut at a
//! turn's start, what was queued before is written first, and later lines follow the cut.

use super::*;

/// The byte offset of the line that starts `turn`.
fn start_of(path: &Path, turn: &TurnId) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    let mut at = 0u64;
    for line in text.split_inclusive('\n') {
        let parsed: RolloutLine = serde_json::from_str(line).unwrap();
        if matches!(&parsed.record, RolloutRecord::TurnStarted { turn_id, .. } if turn_id == turn) {
            return at;
        }
        at += line.len() as u64;
    }
    panic!("no start of {turn}");
}

#[tokio::test]
async fn a_cut_drops_the_turns_from_its_offset_and_later_lines_follow_it() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let first = new_turn(&writer, "one", "first answer", Some(TurnStatus::Completed));
    let second = new_turn(&writer, "two", "second answer", Some(TurnStatus::Completed));
    writer.flush(true).await.unwrap();
    let path = writer.path().to_path_buf();
    let cut = start_of(&path, &second);
    // Queued before the cut: written, then cut away with the rest.
    new_turn(
        &writer,
        "three",
        "third answer",
        Some(TurnStatus::Completed),
    );
    writer.truncate(cut).await.unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), cut);
    let fourth = new_turn(
        &writer,
        "four",
        "fourth answer",
        Some(TurnStatus::Completed),
    );
    writer.flush(true).await.unwrap();
    let replay = read_rollout(&path).unwrap();
    let ids: Vec<&TurnId> = replay.turns.iter().map(|t| &t.id).collect();
    assert_eq!(ids, [&first, &fourth]);
    let said = texts(&replay.history).join("|");
    assert!(
        said.contains("first answer") && said.contains("fourth answer"),
        "{said}"
    );
    assert!(
        !said.contains("second answer") && !said.contains("third answer"),
        "{said}"
    );
}
