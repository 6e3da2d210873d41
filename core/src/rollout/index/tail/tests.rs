use std::path::{Path, PathBuf};

use weft_protocol::SortDirection::{Asc, Desc};
use weft_protocol::TurnItemsView::{Full, Summary};
use weft_protocol::TurnStatus;

use super::super::super::lean::replay_from_index;
use super::super::super::pages::{ItemScope, items_page, resume_cursors, turns_page};
use super::super::held::TAIL_TURNS;
use super::super::tests::{append, rollout, thread, turn};
use super::super::{IndexCache, RolloutIndex, sidecar};
use super::path_for;
use crate::rollout::{RolloutError, RolloutLine, RolloutRecord};

fn cache(dir: &Path) -> IndexCache {
    IndexCache::with_sidecars(4, dir.join("rollout-index"), 0)
}

fn tail_of(dir: &Path, path: &Path) -> PathBuf {
    path_for(&sidecar::path_for(&dir.join("rollout-index"), path).unwrap())
}

/// What a resume and the latest pages answer from `index`, as one comparable text: the
/// thread replayed, the resume's cursors, the first turns page (summary and full), and the
/// latest items of the thread and of its last turn.
fn latest(index: &RolloutIndex) -> Result<String, RolloutError> {
    let replay = replay_from_index(index)?;
    let cursors = resume_cursors(index, &thread())?;
    let summary = turns_page(index, &thread(), None, Desc, 10, Summary, false)?;
    let full = turns_page(index, &thread(), None, Desc, TAIL_TURNS, Full, false)?;
    let items = items_page(index, &thread(), ItemScope::Thread, None, Desc, 5)?;
    let last = ItemScope::Turn(index.turns().len() - 1);
    let last_items = items_page(index, &thread(), last, None, Asc, 100)?;
    Ok(format!(
        "{replay:?}\n{cursors:?}\n{}\n{}\n{}\n{}",
        serde_json::to_string(&summary).unwrap(),
        serde_json::to_string(&full).unwrap(),
        serde_json::to_string(&items).unwrap(),
        serde_json::to_string(&last_items).unwrap(),
    ))
}

/// `(partial?, answer)` of a new daemon's resume of `path`.
fn resume_in_new_daemon(dir: &Path, path: &Path) -> (bool, String) {
    cache(dir)
        .with_recent(path, |index| Ok((index.is_partial(), latest(index)?)))
        .unwrap()
}

fn whole(path: &Path) -> String {
    latest(&RolloutIndex::build(path).unwrap()).unwrap()
}

#[test]
fn a_new_daemon_resumes_from_the_tail_with_the_answers_of_the_whole_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), TAIL_TURNS + 8);
    // The first daemon indexes the file and writes the sidecar and its tail.
    cache(dir.path()).with_index(&path, |_| Ok(())).unwrap();
    assert!(tail_of(dir.path(), &path).is_file());
    let (partial, answer) = resume_in_new_daemon(dir.path(), &path);
    assert!(partial);
    assert_eq!(answer, whole(&path));
    // Read from the tail: the last turns, nothing streamed, the turns' positions count from
    // the first one held.
    cache(dir.path())
        .with_recent(&path, |index| {
            assert_eq!(index.turns().len(), TAIL_TURNS);
            assert_eq!(index.turns_before(), 8);
            assert_eq!(index.items_before(), 8 * 3);
            assert_eq!(index.streamed_bytes(), 0);
            assert_eq!(index.turns()[0].id.as_str(), "turn-8");
            Ok(())
        })
        .unwrap();
    // A thread with fewer turns than a tail keeps is held whole.
    let other = tempfile::tempdir().unwrap();
    let small = rollout(other.path(), 3);
    cache(other.path()).with_index(&small, |_| Ok(())).unwrap();
    assert!(tail_of(other.path(), &small).is_file());
    assert_eq!(
        resume_in_new_daemon(other.path(), &small),
        (false, whole(&small))
    );
}

#[test]
fn a_question_the_tail_cannot_answer_is_asked_of_the_whole_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), TAIL_TURNS + 8);
    cache(dir.path()).with_index(&path, |_| Ok(())).unwrap();
    let built = RolloutIndex::build(&path).unwrap();
    let oldest = |index: &RolloutIndex| {
        let page = turns_page(index, &thread(), None, Asc, 3, Summary, false)?;
        Ok(serde_json::to_string(&page).unwrap())
    };
    let cache = cache(dir.path());
    let mut runs = 0;
    let answer = cache
        .with_recent(&path, |index| {
            runs += 1;
            oldest(index)
        })
        .unwrap();
    assert_eq!((runs, answer), (2, oldest(&built).unwrap()));
    // The cache now holds the whole index: asked once.
    let mut runs = 0;
    cache
        .with_recent(&path, |index| {
            runs += 1;
            assert!(!index.is_partial());
            Ok(())
        })
        .unwrap();
    assert_eq!(runs, 1);
    // A turn the tail does not hold is not taken for one the file does not have.
    let fresh = super::super::IndexCache::with_sidecars(4, dir.path().join("rollout-index"), 0);
    let wanted = built.turns()[0].id.clone();
    let found = fresh
        .with_recent(&path, |index| index.find_turn(&wanted))
        .unwrap();
    assert_eq!(found, Some(0));
    let missing = weft_protocol::TurnId::from("turn-none");
    let fresh = super::super::IndexCache::with_sidecars(4, dir.path().join("rollout-index"), 0);
    assert_eq!(
        fresh
            .with_recent(&path, |index| index.find_turn(&missing))
            .unwrap(),
        None
    );
}

#[test]
fn lines_appended_after_the_tail_keep_it_and_the_sidecar_true() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), TAIL_TURNS + 8);
    cache(dir.path()).with_index(&path, |_| Ok(())).unwrap();
    // A loaded partial index follows the file (turn 40 starts, its items, then it ends)...
    let cache_a = cache(dir.path());
    cache_a.with_recent(&path, |_| Ok(())).unwrap();
    let lines = turn(TAIL_TURNS + 8, 1_700_001_000_000, true);
    append(&path, &lines[..3]);
    cache_a.with_recent(&path, |_| Ok(())).unwrap();
    append(&path, &lines[3..]);
    cache_a.remember(&path).unwrap();
    // ... and what it appended to the sidecar is what a whole pass computes.
    let (partial, answer) = resume_in_new_daemon(dir.path(), &path);
    assert!(partial);
    assert_eq!(answer, whole(&path));
    let built = RolloutIndex::build(&path).unwrap();
    cache(dir.path())
        .with_index(&path, |index| {
            assert!(!index.is_partial());
            assert_eq!(index.turns(), built.turns());
            assert_eq!(index.items(), built.items());
            assert_eq!(index.landmarks(), built.landmarks());
            assert_eq!(index.streamed_bytes(), 0);
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_line_naming_a_turn_the_tail_does_not_hold_reads_the_whole_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), TAIL_TURNS + 8);
    cache(dir.path()).with_index(&path, |_| Ok(())).unwrap();
    // The first turn's late ending (no such line is written today, but a file may have it).
    append(
        &path,
        &[RolloutLine {
            ts: 1_700_002_000_000,
            record: RolloutRecord::TurnEnded {
                turn_id: "turn-0".into(),
                status: TurnStatus::Interrupted,
                error: None,
                completed_at: 1_700_002_000,
                duration_ms: Some(1),
            },
        }],
    );
    let (partial, answer) = resume_in_new_daemon(dir.path(), &path);
    assert!(!partial);
    assert_eq!(answer, whole(&path));
    // The turn's own answer moved: the first page, ascending, shows it interrupted.
    cache(dir.path())
        .with_recent(&path, |index| {
            let page = turns_page(index, &thread(), None, Asc, 1, Summary, false)?;
            assert_eq!(page.data[0].status, TurnStatus::Interrupted);
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_stale_or_damaged_tail_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let path = rollout(dir.path(), TAIL_TURNS + 8);
    cache(dir.path()).with_index(&path, |_| Ok(())).unwrap();
    let tail = tail_of(dir.path(), &path);
    let old = std::fs::read(&tail).unwrap();
    // A segment appended after the tail was written (a crash between the two writes).
    append(&path, &turn(TAIL_TURNS + 8, 1_700_001_000_000, true));
    cache(dir.path()).with_index(&path, |_| Ok(())).unwrap();
    std::fs::write(&tail, &old).unwrap();
    let (partial, answer) = resume_in_new_daemon(dir.path(), &path);
    assert!(!partial);
    assert_eq!(answer, whole(&path));
    // That resume wrote the tail anew.
    assert_ne!(std::fs::read(&tail).unwrap(), old);
    assert!(resume_in_new_daemon(dir.path(), &path).0);
    // A flipped byte, a torn tail, a rollout rewritten under it: not used.
    let good = std::fs::read(&tail).unwrap();
    let mut flipped = good.clone();
    let at = flipped.len() - 3;
    flipped[at] ^= 1;
    for bad in [flipped, good[..good.len() / 2].to_vec()] {
        std::fs::write(&tail, &bad).unwrap();
        assert_eq!(
            resume_in_new_daemon(dir.path(), &path),
            (false, whole(&path))
        );
        assert!(resume_in_new_daemon(dir.path(), &path).0);
    }
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 20;
    bytes[at] = if bytes[at] == b'x' { b'y' } else { b'x' };
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(
        resume_in_new_daemon(dir.path(), &path),
        (false, whole(&path))
    );
    // Forgetting the thread removes the tail with the sidecar.
    cache(dir.path()).forget(&path);
    assert!(!tail.exists());
}
