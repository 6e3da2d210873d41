use std::io::Write as _;
use std::path::{Path, PathBuf};

use weft_protocol::{ThreadTokenUsage, TurnError, TurnId, TurnStatus};

use super::super::tests::{append, header, turn};
use super::super::{IndexFeed, RolloutIndex, Tee, sidecar};
use super::IndexCache;
use crate::model::ResponseItem;
use crate::rollout::{RolloutLine, RolloutRecord};

fn line(ts: i64, record: RolloutRecord) -> RolloutLine {
    RolloutLine { ts, record }
}

/// A rollout with every kind of line the index records: ended turns, a failed turn with an
/// error, a compaction, token usage, a name, an unparsable line, and (when `open_end`) a last
/// turn the daemon never finished.
fn varied_rollout(dir: &Path, open_end: bool) -> PathBuf {
    let path = dir.join("rollout-2026-12-07T00-00-00-x.jsonl");
    append(&path, &[line(1_700_000_000_000, header())]);
    for i in 0..4 {
        append(&path, &turn(i, 1_700_000_001_000 + 10_000 * i as i64, true));
    }
    let failed = TurnId::from("turn-failed");
    append(
        &path,
        &[
            line(
                1_700_000_100_000,
                RolloutRecord::TurnStarted {
                    turn_id: failed.clone(),
                    started_at: 1_700_000_100,
                    context: crate::rollout::tests::context("m"),
                },
            ),
            line(
                1_700_000_100_100,
                RolloutRecord::TurnEnded {
                    turn_id: failed,
                    status: TurnStatus::Failed,
                    error: Some(TurnError {
                        message: "the model said \"no\"".into(),
                        codex_error_info: None,
                        additional_details: Some("details".into()),
                        misalignment: None,
                    }),
                    completed_at: 1_700_000_100,
                    duration_ms: Some(100),
                },
            ),
            line(
                1_700_000_100_200,
                RolloutRecord::Compacted {
                    summary: "summary".into(),
                    replacement_history: vec![ResponseItem::user_text("summary")],
                },
            ),
            line(
                1_700_000_100_300,
                RolloutRecord::TokenUsage(ThreadTokenUsage::default()),
            ),
            line(
                1_700_000_100_400,
                RolloutRecord::ThreadNameSet {
                    name: "named".into(),
                },
            ),
        ],
    );
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{not json\n")
        .unwrap();
    append(&path, &turn(9, 1_700_000_200_000, !open_end));
    path
}

/// Everything an index answers with, to compare two indexes of one file.
fn same(a: &RolloutIndex, b: &RolloutIndex) {
    assert_eq!(a.turns(), b.turns());
    assert_eq!(a.items(), b.items());
    assert_eq!(a.landmarks(), b.landmarks());
    assert_eq!(a.indexed_bytes(), b.indexed_bytes());
    assert_eq!(a.skipped_lines(), b.skipped_lines());
    assert_eq!(a.last_ms(), b.last_ms());
    assert_eq!(a.turn_ids, b.turn_ids);
    assert_eq!(a.next_ordinal, b.next_ordinal);
}

fn cache(dir: &Path) -> IndexCache {
    IndexCache::with_sidecars(4, dir.join("rollout-index"), 0)
}

/// `(index equal to a fresh build, bytes streamed)` from a new cache (a new daemon).
fn open_in_new_daemon(dir: &Path, path: &Path) -> u64 {
    let built = RolloutIndex::build(path).unwrap();
    cache(dir)
        .with_index(path, |index| {
            same(index, &built);
            Ok(index.streamed_bytes())
        })
        .unwrap()
}

fn sidecar_of(dir: &Path, path: &Path) -> PathBuf {
    sidecar::path_for(&dir.join("rollout-index"), path).unwrap()
}

#[test]
fn a_new_daemon_reads_the_index_back_instead_of_the_file() {
    for open_end in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = varied_rollout(dir.path(), open_end);
        let len = std::fs::metadata(&path).unwrap().len();
        // The first daemon streams the whole file and writes the sidecar.
        assert_eq!(open_in_new_daemon(dir.path(), &path), len);
        assert!(sidecar_of(dir.path(), &path).is_file());
        // The next one streams nothing.
        assert_eq!(open_in_new_daemon(dir.path(), &path), 0);
    }
}

#[test]
fn lines_appended_since_are_streamed_alone_and_appended() {
    let dir = tempfile::tempdir().unwrap();
    let path = varied_rollout(dir.path(), true);
    open_in_new_daemon(dir.path(), &path);
    let before = std::fs::metadata(&path).unwrap().len();
    let side_before = std::fs::metadata(sidecar_of(dir.path(), &path))
        .unwrap()
        .len();
    append(&path, &turn(10, 1_700_000_300_000, true));
    let grown = std::fs::metadata(&path).unwrap().len() - before;
    assert_eq!(open_in_new_daemon(dir.path(), &path), grown);
    assert!(
        std::fs::metadata(sidecar_of(dir.path(), &path))
            .unwrap()
            .len()
            > side_before
    );
    assert_eq!(open_in_new_daemon(dir.path(), &path), 0);
    // A loaded index that follows the file appends as it goes.
    let cache = cache(dir.path());
    cache.with_index(&path, |_| Ok(())).unwrap();
    append(&path, &turn(11, 1_700_000_400_000, true));
    cache.with_index(&path, |_| Ok(())).unwrap();
    assert_eq!(open_in_new_daemon(dir.path(), &path), 0);
}

#[test]
fn a_rewritten_or_shrunk_rollout_is_indexed_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = varied_rollout(dir.path(), false);
    open_in_new_daemon(dir.path(), &path);
    // Same length, other bytes at the end: the tail check fails.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 20;
    bytes[at] = if bytes[at] == b'x' { b'y' } else { b'x' };
    std::fs::write(&path, &bytes).unwrap();
    let len = bytes.len() as u64;
    assert_eq!(open_in_new_daemon(dir.path(), &path), len);
    assert_eq!(open_in_new_daemon(dir.path(), &path), 0);
    // Shorter than what was indexed.
    let cut = RolloutIndex::build(&path).unwrap().turns()[3].ordinal;
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: String = text.split_inclusive('\n').take(cut as usize).collect();
    std::fs::write(&path, &kept).unwrap();
    assert_eq!(open_in_new_daemon(dir.path(), &path), kept.len() as u64);
    // A loaded index of a file that shrinks writes its sidecar anew.
    let cache = cache(dir.path());
    cache.with_index(&path, |_| Ok(())).unwrap();
    std::fs::write(&path, text.as_bytes()).unwrap();
    cache.with_index(&path, |_| Ok(())).unwrap();
    assert_eq!(open_in_new_daemon(dir.path(), &path), 0);
}

#[test]
fn a_torn_or_foreign_sidecar_is_cut_back_or_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = varied_rollout(dir.path(), true);
    open_in_new_daemon(dir.path(), &path);
    let first = std::fs::metadata(sidecar_of(dir.path(), &path))
        .unwrap()
        .len();
    append(&path, &turn(10, 1_700_000_300_000, true));
    open_in_new_daemon(dir.path(), &path);
    let side = sidecar_of(dir.path(), &path);
    let second = std::fs::metadata(&side).unwrap().len();
    // The second segment torn half way: the first still serves, the tail is streamed again.
    let bytes = std::fs::read(&side).unwrap();
    std::fs::write(&side, &bytes[..(first + (second - first) / 2) as usize]).unwrap();
    let streamed = open_in_new_daemon(dir.path(), &path);
    assert!(streamed > 0 && streamed < std::fs::metadata(&path).unwrap().len());
    assert_eq!(open_in_new_daemon(dir.path(), &path), 0);
    // Garbage, or another layout: rebuilt.
    std::fs::write(&side, b"WEFTRIX0 something else").unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    assert_eq!(open_in_new_daemon(dir.path(), &path), len);
    // Someone else appended to the sidecar under a loaded index: it is dropped, never mixed.
    let cache = cache(dir.path());
    cache.with_index(&path, |_| Ok(())).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&side)
        .unwrap()
        .write_all(b"xx")
        .unwrap();
    append(&path, &turn(11, 1_700_000_400_000, true));
    cache.with_index(&path, |_| Ok(())).unwrap();
    assert!(!side.exists());
    let len = std::fs::metadata(&path).unwrap().len();
    assert_eq!(open_in_new_daemon(dir.path(), &path), len);
}

#[test]
fn small_rollouts_get_no_sidecar_until_they_grow() {
    let dir = tempfile::tempdir().unwrap();
    let path = varied_rollout(dir.path(), false);
    let len = std::fs::metadata(&path).unwrap().len();
    let cache = IndexCache::with_sidecars(4, dir.path().join("rollout-index"), len + 1);
    cache.with_index(&path, |_| Ok(())).unwrap();
    cache.remember(&path).unwrap();
    assert!(!sidecar_of(dir.path(), &path).exists());
    append(&path, &turn(10, 1_700_000_300_000, true));
    cache.remember(&path).unwrap();
    assert!(sidecar_of(dir.path(), &path).is_file());
    assert_eq!(open_in_new_daemon(dir.path(), &path), 0);
    cache.forget(&path);
    assert!(!sidecar_of(dir.path(), &path).exists());
}

#[test]
fn an_index_fed_as_the_file_is_written_is_the_one_a_read_builds() {
    for open_end in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let bytes = std::fs::read(varied_rollout(dir.path(), open_end)).unwrap();
        let header = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
        let path = dir.path().join("rollout-2026-12-07T00-00-01-y.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        file.write_all(&bytes[..header]).unwrap();
        let mut feed = IndexFeed::new(&bytes[..header]);
        // Written in odd pieces: lines split across writes, a torn last line at the end.
        let mut tee = Tee {
            out: &mut file,
            feed: &mut feed,
        };
        for piece in bytes[header..].chunks(37) {
            tee.write_all(piece).unwrap();
        }
        tee.write_all(br#"{"ts":1,"type":"resp"#).unwrap();
        let fed = feed.finish(&path).unwrap();
        same(&fed, &RolloutIndex::build(&path).unwrap());
        // Kept with its sidecar: a new daemon reads that back and streams nothing of the file.
        cache(dir.path()).adopt(fed);
        assert!(sidecar_of(dir.path(), &path).is_file());
        assert_eq!(open_in_new_daemon(dir.path(), &path), 0);
    }
}

#[test]
fn a_fed_index_of_another_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(varied_rollout(dir.path(), false)).unwrap();
    let header = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut feed = IndexFeed::new(&bytes[..header]);
    feed.feed(&bytes[header..]);
    // The file on disk has a line more than what was fed.
    let path = dir.path().join("other.jsonl");
    std::fs::write(&path, [&bytes[..], b"{}\n"].concat()).unwrap();
    assert!(feed.finish(&path).is_err());
    // A first line that is no header is refused too.
    assert!(IndexFeed::new(b"{}\n").finish(&path).is_err());
}
