use std::io::Write;
use std::path::Path;

use weft_protocol::SortDirection::{self, Asc, Desc};
use weft_protocol::TurnItemsView::{self, Full, NotLoaded, Summary};
use weft_protocol::history_api::{ThreadItemsListResponse, TurnsPage};
use weft_protocol::{ThreadId, TurnId, TurnStatus};

use super::super::pages::{
    Cursor, CursorScope, ItemScope, Position, find_item, items_page, page_limit, resume_cursors,
    select, turns_page,
};
use super::super::tests::{agent_item, append_bytes, context, meta, user_item};
use super::super::{RolloutLine, RolloutRecord, read_rollout};
use super::*;
use crate::model::ResponseItem;

const THREAD: &str = "0190f5a4-1b2c-7d3e-8f40-123456789abc";

pub(super) fn thread() -> ThreadId {
    ThreadId::from(THREAD)
}

pub(super) fn header() -> RolloutRecord {
    RolloutRecord::SessionMeta(Box::new(meta(&thread(), 1_700_000_000)))
}

/// Lines of a turn `n` (user, two agent messages), `ended` or left open.
pub(super) fn turn(n: usize, ts: i64, ended: bool) -> Vec<RolloutLine> {
    let id = TurnId::from(format!("turn-{n}"));
    let line = |ts, record| RolloutLine { ts, record };
    let mut lines = vec![
        line(
            ts,
            RolloutRecord::TurnStarted {
                turn_id: id.clone(),
                started_at: ts / 1000,
                context: context("m"),
            },
        ),
        line(
            ts + 1,
            RolloutRecord::ResponseItem(ResponseItem::user_text("q")),
        ),
        line(
            ts + 2,
            RolloutRecord::ItemCompleted {
                turn_id: id.clone(),
                item: user_item(&format!("u{n}"), &format!("question {n}")),
            },
        ),
        line(
            ts + 3,
            RolloutRecord::ItemCompleted {
                turn_id: id.clone(),
                item: agent_item(&format!("a{n}"), &format!("thinking {n}")),
            },
        ),
        line(
            ts + 4,
            RolloutRecord::ItemCompleted {
                turn_id: id.clone(),
                item: agent_item(&format!("b{n}"), &format!("answer {n}")),
            },
        ),
    ];
    if ended {
        lines.push(line(
            ts + 5,
            RolloutRecord::TurnEnded {
                turn_id: id,
                status: TurnStatus::Completed,
                error: None,
                completed_at: (ts + 5) / 1000,
                duration_ms: Some(5),
            },
        ));
    }
    lines
}

pub(super) fn append(path: &Path, lines: &[RolloutLine]) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for line in lines {
        writeln!(file, "{}", serde_json::to_string(line).unwrap()).unwrap();
    }
}

/// A rollout with `n` ended turns.
pub(super) fn rollout(dir: &Path, n: usize) -> std::path::PathBuf {
    let path = dir.join("rollout.jsonl");
    append(
        &path,
        &[RolloutLine {
            ts: 1_700_000_000_000,
            record: header(),
        }],
    );
    for i in 0..n {
        append(&path, &turn(i, 1_700_000_001_000 + 10_000 * i as i64, true));
    }
    path
}

fn ids(page: &TurnsPage) -> Vec<String> {
    page.data.iter().map(|t| t.id.to_string()).collect()
}

/// All turns, full, ascending: asserts they are the turns a whole read rebuilds.
fn full_page_is_the_replay(index: &RolloutIndex, path: &Path) -> TurnsPage {
    let all = turns(index, None, Asc, 100, Full, false);
    assert_eq!(all.data, read_rollout(path).unwrap().turns);
    all
}

/// A page of the test thread's turns.
fn turns(
    index: &RolloutIndex,
    from: Option<Position>,
    direction: SortDirection,
    limit: usize,
    view: TurnItemsView,
    running: bool,
) -> TurnsPage {
    turns_page(index, &thread(), from, direction, limit, view, running).unwrap()
}

/// A page of the test thread's items.
fn items(
    index: &RolloutIndex,
    scope: ItemScope,
    from: Option<Position>,
    direction: SortDirection,
    limit: usize,
) -> ThreadItemsListResponse {
    items_page(index, &thread(), scope, from, direction, limit).unwrap()
}

fn cursor_position(text: &str, scope: CursorScope) -> Position {
    Cursor::decode(text, &thread(), scope).unwrap().position()
}

#[test]
fn select_pages_both_ways_with_anchors() {
    let ords = [1, 7, 14, 20];
    assert_eq!(select(&ords, 0, None, Asc, 2).unwrap(), (vec![0, 1], true));
    assert_eq!(select(&ords, 0, None, Desc, 2).unwrap(), (vec![3, 2], true));
    let at = |ordinal, include_anchor| {
        Some(Position {
            ordinal,
            include_anchor,
        })
    };
    assert_eq!(
        select(&ords, 0, at(14, false), Desc, 5).unwrap(),
        (vec![1, 0], false)
    );
    assert_eq!(
        select(&ords, 0, at(14, true), Desc, 5).unwrap(),
        (vec![2, 1, 0], false)
    );
    assert_eq!(
        select(&ords, 0, at(14, true), Asc, 1).unwrap(),
        (vec![2], true)
    );
    assert_eq!(
        select(&ords, 0, at(20, false), Asc, 5).unwrap(),
        (vec![], false)
    );
    assert_eq!(
        select(&ords, 0, at(1000, true), Desc, 1).unwrap(),
        (vec![3], true)
    );
    assert_eq!(select(&[], 0, None, Desc, 3).unwrap(), (vec![], false));
    // Held entries with 5 more before them: a page that stays among the held is served (the
    // newest page, full, knows more are left), one that would reach before them is not.
    assert_eq!(
        select(&ords, 5, None, Desc, 4).unwrap(),
        (vec![3, 2, 1, 0], true)
    );
    assert_eq!(
        select(&ords, 5, at(14, false), Asc, 5).unwrap(),
        (vec![3], false)
    );
    assert!(matches!(
        select(&ords, 5, None, Desc, 5),
        Err(RolloutError::NotHeld)
    ));
    assert!(matches!(
        select(&ords, 5, None, Asc, 1),
        Err(RolloutError::NotHeld)
    ));
    assert!(matches!(
        select(&ords, 5, at(1, true), Asc, 1),
        Err(RolloutError::NotHeld)
    ));
    assert!(matches!(
        select(&ords, 5, at(7, false), Desc, 2),
        Err(RolloutError::NotHeld)
    ));
    assert_eq!(
        select(&ords, 5, at(14, false), Desc, 2).unwrap(),
        (vec![1, 0], true)
    );
    assert_eq!(page_limit(None), 25);
    assert_eq!(page_limit(Some(0)), 1);
    assert_eq!(page_limit(Some(1000)), 100);
}

#[test]
fn cursors_of_other_threads_or_scopes_are_refused() {
    let c = Cursor::new(&thread(), 15, true, CursorScope::Turns).encode();
    assert_eq!(
        c,
        format!(
            r#"{{"requestedThreadId":"{THREAD}","rolloutOrdinal":15,"includeAnchor":true,"scope":{{"kind":"turns"}}}}"#
        )
    );
    assert!(Cursor::decode(&c, &thread(), CursorScope::Turns).is_some());
    assert!(Cursor::decode(&c, &thread(), CursorScope::ItemsByCreatedAtOrdinal).is_none());
    let other = ThreadId::from("0190f5a4-1b2c-7d3e-8f40-000000000000");
    assert!(Cursor::decode(&c, &other, CursorScope::Turns).is_none());
    assert!(Cursor::decode("garbage", &thread(), CursorScope::Turns).is_none());
}

#[test]
fn pages_concatenate_to_the_replay_in_both_directions() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), 5);
    let index = RolloutIndex::build(&path).unwrap();
    assert_eq!(index.turns().len(), 5);
    assert_eq!(index.items().len(), 15);

    // Everything, full, ascending: the same turns a whole read rebuilds.
    let all = full_page_is_the_replay(&index, &path);
    assert_eq!(all.next_cursor, None);

    // Descending pages of 2, then back up with the backwards cursor.
    let mut seen = Vec::new();
    let mut from = None;
    loop {
        let page = turns(&index, from, Desc, 2, NotLoaded, false);
        assert!(page.data.iter().all(|t| t.items.is_empty()));
        seen.extend(ids(&page));
        match page.next_cursor {
            Some(next) => from = Some(cursor_position(&next, CursorScope::Turns)),
            None => {
                let back = cursor_position(
                    page.backwards_cursor.as_deref().unwrap(),
                    CursorScope::Turns,
                );
                let up = turns(&index, Some(back), Asc, 10, Summary, false);
                assert_eq!(ids(&up), ["turn-0", "turn-1", "turn-2", "turn-3", "turn-4"]);
                // The summary: the user message and the last agent message.
                let texts: Vec<_> = up.data[0]
                    .items
                    .iter()
                    .map(|i| i.id().to_string())
                    .collect();
                assert_eq!(texts, ["u0", "b0"]);
                break;
            }
        }
    }
    assert_eq!(seen, ["turn-4", "turn-3", "turn-2", "turn-1", "turn-0"]);

    // Items: ascending pages of 4 over the thread, then one turn with an anchor.
    let first = items(&index, ItemScope::Thread, None, Asc, 4);
    let (page, next, back) = (first.data, first.next_cursor, first.backwards_cursor);
    assert_eq!(page.len(), 4);
    assert_eq!(page[3].turn_id.as_str(), "turn-1");
    let next = cursor_position(&next.unwrap(), CursorScope::ItemsByCreatedAtOrdinal);
    let rest = items(&index, ItemScope::Thread, Some(next), Asc, 100).data;
    assert_eq!(rest.len(), 11);
    assert_eq!(rest[0].item.id().as_str(), "a1");
    let back = cursor_position(&back.unwrap(), CursorScope::ItemsByCreatedAtOrdinal);
    let down = items(&index, ItemScope::Thread, Some(back), Desc, 5);
    assert_eq!(down.data.len(), 1, "the anchor itself, nothing before it");
    assert_eq!(down.next_cursor, None);
    let anchor = find_item(&index, 2, "u2").unwrap().unwrap();
    let after = items(&index, ItemScope::Turn(2), Some(anchor), Asc, 10).data;
    let after: Vec<_> = after.iter().map(|e| e.item.id().to_string()).collect();
    assert_eq!(after, ["a2", "b2"]);
    assert_eq!(find_item(&index, 2, "u3").unwrap(), None);

    let (turns, items) = resume_cursors(&index, &thread()).unwrap();
    assert_eq!(
        cursor_position(&turns.unwrap(), CursorScope::Turns).ordinal,
        index.turns()[4].ordinal
    );
    assert_eq!(
        cursor_position(&items.unwrap(), CursorScope::ItemsByCreatedAtOrdinal).ordinal,
        index.items()[14].ordinal
    );
}

#[test]
fn a_torn_last_line_waits_and_then_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), 1);
    append_bytes(&path, br#"{"ts":1700000009000,"type":"turn_star"#);
    let mut index = RolloutIndex::build(&path).unwrap();
    assert_eq!(index.turns().len(), 1);
    assert_eq!(index.skipped_lines(), 0, "a torn line is not indexed yet");
    // The writer completes a torn line with a newline before appending (kill -9, resume).
    append_bytes(&path, b"\n");
    append(&path, &turn(1, 1_700_000_020_000, true));
    index.update().unwrap();
    assert_eq!(index.skipped_lines(), 1);
    assert_eq!(index.turns().len(), 2);
    full_page_is_the_replay(&index, &path);
    // Ordinals count the torn line: the second turn starts after it.
    assert_eq!(index.turns()[1].ordinal, index.turns()[0].ordinal + 7);
}

#[test]
fn compaction_records_do_not_change_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), 1);
    append(
        &path,
        &[RolloutLine {
            ts: 1_700_000_015_000,
            record: RolloutRecord::Compacted {
                summary: "summary".into(),
                replacement_history: vec![ResponseItem::user_text("summary")],
            },
        }],
    );
    append(&path, &turn(1, 1_700_000_020_000, true));
    let index = RolloutIndex::build(&path).unwrap();
    full_page_is_the_replay(&index, &path);
    assert_eq!(index.items().len(), 6);
}

#[test]
fn a_turn_cut_by_kill_9_is_interrupted_unless_running() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), 1);
    // Killed mid-turn, resumed, and a new turn ran: the cut turn is interrupted.
    append(&path, &turn(1, 1_700_000_020_000, false));
    append(&path, &turn(2, 1_700_000_030_000, true));
    // Killed again mid-turn.
    append(&path, &turn(3, 1_700_000_040_000, false));
    let index = RolloutIndex::build(&path).unwrap();
    let all = full_page_is_the_replay(&index, &path);
    assert_eq!(all.data[1].status, TurnStatus::Interrupted);
    assert_eq!(all.data[3].status, TurnStatus::Interrupted);
    // The same rollout while the loaded thread runs its last turn.
    let live = turns(&index, None, Desc, 1, Summary, true);
    assert_eq!(live.data[0].status, TurnStatus::InProgress);
    assert_eq!(live.data[0].completed_at, None);
}

#[test]
fn a_shrunk_or_replaced_file_is_indexed_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), 3);
    let mut index = RolloutIndex::build(&path).unwrap();
    assert_eq!(index.turns().len(), 3);
    std::fs::remove_file(&path).unwrap();
    let path = rollout(dir.path(), 1);
    index.update().unwrap();
    assert_eq!(index.turns().len(), 1);
    let cache = IndexCache::new(1);
    let n = cache.with_index(&path, |i| Ok(i.turns().len())).unwrap();
    assert_eq!(n, 1);
    append(&path, &turn(1, 1_700_000_020_000, true));
    let n = cache.with_index(&path, |i| Ok(i.turns().len())).unwrap();
    assert_eq!(n, 2, "the cache follows appends");
}
