use std::path::{Path, PathBuf};

use weft_protocol::ThreadId;

use super::super::tests::{open_upgraded, raw_pool, remove_db, write_rollout};
use super::super::{ListQuery, StateDb};
use crate::rollout::{RolloutRecord, RolloutWriter, archive};

async fn reopen(home: &Path) -> (StateDb, Option<super::RebuildReport>) {
    StateDb::open_and_catch_up(home).await.unwrap()
}

/// Stops the daemon's DB and opens it again, as the next start does.
async fn restart(db: StateDb, home: &Path) -> (StateDb, Option<super::RebuildReport>) {
    db.close().await;
    drop(db);
    reopen(home).await
}

/// Restarts and asserts the catch-up had nothing to read (`why`), then stops.
async fn restart_reads_nothing(db: StateDb, home: &Path, why: &str) {
    let (db, report) = restart(db, home).await;
    assert_eq!(report, None, "{why}");
    db.close().await;
}

/// Two threads' rollouts (1 and 2) and the DB opened over them.
async fn indexed(home: &Path) -> ([(ThreadId, PathBuf); 2], StateDb) {
    let first = write_rollout(home, 1, None).await;
    let second = write_rollout(home, 2, None).await;
    let (db, _) = reopen(home).await;
    ([first, second], db)
}

async fn dirty_ids(db: &StateDb) -> Vec<String> {
    sqlx::query_scalar("SELECT id FROM threads WHERE dirty ORDER BY id")
        .fetch_all(db.pool().await.unwrap())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_clean_start_reads_no_rollout() {
    let home = tempfile::tempdir().unwrap();
    write_rollout(home.path(), 1, None).await;
    write_rollout(home.path(), 2, None).await;
    let (db, report) = reopen(home.path()).await;
    assert_eq!(report.map(|r| r.indexed), Some(2), "no DB: a full rebuild");
    restart_reads_nothing(db, home.path(), "nothing changed since the DB was written").await;
}

#[tokio::test]
async fn a_thread_left_open_is_re_read_and_only_it() {
    let home = tempfile::tempdir().unwrap();
    let ([(id1, path1), (id2, _)], db) = indexed(home.path()).await;
    // A writer opened the thread (the row is dirty) and appended a name the DB never heard
    // of before the daemon died.
    assert!(db.set_dirty(&id1, true).await.unwrap());
    let writer = RolloutWriter::resume(&path1).await.unwrap();
    writer.append(RolloutRecord::ThreadNameSet {
        name: "renamed".into(),
    });
    writer.close().await.unwrap();
    assert_eq!(dirty_ids(&db).await, [id1.as_str()]);

    let (db, report) = restart(db, home.path()).await;
    let report = report.unwrap();
    assert_eq!((report.indexed, report.removed), (1, 0), "{report:?}");
    let row = db.get(&id1).await.unwrap().unwrap();
    assert_eq!(row.name.as_deref(), Some("renamed"));
    assert!(db.get(&id2).await.unwrap().is_some());
    assert!(dirty_ids(&db).await.is_empty());
    restart_reads_nothing(db, home.path(), "level after the re-read").await;
}

#[tokio::test]
async fn files_added_moved_or_removed_by_hand_are_noticed() {
    let home = tempfile::tempdir().unwrap();
    let ([(id1, path1), (id2, path2)], db) = indexed(home.path()).await;
    db.close().await;
    drop(db);

    // One copied in from elsewhere (written while no daemon ran), one archived by hand, one
    // deleted by hand.
    let other = tempfile::tempdir().unwrap();
    let (id3, path3) = write_rollout(other.path(), 3, Some("copied")).await;
    let rel = path3.strip_prefix(other.path()).unwrap();
    std::fs::create_dir_all(home.path().join(rel).parent().unwrap()).unwrap();
    std::fs::copy(&path3, home.path().join(rel)).unwrap();
    let archived1 = archive(home.path(), &path1).unwrap();
    std::fs::remove_file(&path2).unwrap();

    let (db, report) = reopen(home.path()).await;
    let report = report.unwrap();
    assert_eq!(report.removed, 1, "{report:?}");
    assert_eq!(db.get(&id2).await.unwrap(), None);
    let copied = db.get(&id3).await.unwrap().unwrap();
    assert_eq!(copied.name.as_deref(), Some("copied"));
    let moved = db.get(&id1).await.unwrap().unwrap();
    assert!(moved.archived);
    assert_eq!(moved.rollout_path, archived1);
    let (rows, _) = db.list(&ListQuery::default()).await.unwrap().into_pair();
    assert_eq!(rows.len(), 1);
    db.close().await;
    drop(db);

    // Deleting the DB still rebuilds everything.
    remove_db(home.path());
    let (db, report) = reopen(home.path()).await;
    assert_eq!(report.map(|r| r.indexed), Some(2));
    db.close().await;
}

#[tokio::test]
async fn an_open_row_stays_dirty_until_marked_level() {
    let home = tempfile::tempdir().unwrap();
    let (id, _) = write_rollout(home.path(), 1, None).await;
    let (db, _) = reopen(home.path()).await;
    let row = db.get(&id).await.unwrap().unwrap();
    db.upsert_open(&row).await.unwrap();
    assert_eq!(dirty_ids(&db).await, [id.as_str()]);
    // A plain upsert (a re-index) leaves the mark as it is.
    db.upsert(&row).await.unwrap();
    assert_eq!(dirty_ids(&db).await, [id.as_str()]);
    assert!(db.set_dirty(&id, false).await.unwrap());
    assert!(dirty_ids(&db).await.is_empty());
    assert!(
        !db.set_dirty(&ThreadId::from("nope"), true).await.unwrap(),
        "no such row"
    );
    db.close().await;
}

#[tokio::test]
async fn a_db_of_the_previous_schema_upgrades_in_place() {
    let home = tempfile::tempdir().unwrap();
    let pool = raw_pool(home.path()).await;
    sqlx::migrate!("./migrations")
        .run_to(3, &pool)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO threads (id, rollout_path, cwd, model_provider, source, source_json, \
         cli_version, preview, name, created_at, updated_at) VALUES \
         ('old', '/nowhere/old.jsonl', '/w', 'openai', 'vscode', '\"vscode\"', '0.1.0', \
         'fix the parser', 'old one', 10, 10)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let db = open_upgraded(pool, home.path()).await;
    let old = db.get(&ThreadId::from("old")).await.unwrap().unwrap();
    assert_eq!(old.preview, "fix the parser");
    assert!(dirty_ids(&db).await.is_empty());
    let found = db
        .list(&ListQuery {
            search_term: Some("the parser".into()),
            ..ListQuery::default()
        })
        .await
        .unwrap();
    assert!(
        db.few_search_matches("the parser").await.unwrap(),
        "indexed"
    );
    assert_eq!(found.rows.len(), 1);
    db.close().await;
}

#[tokio::test]
async fn a_rebuild_that_never_finished_is_done_again() {
    let home = tempfile::tempdir().unwrap();
    write_rollout(home.path(), 1, None).await;
    write_rollout(home.path(), 2, None).await;
    // The DB was created and migrated, and the daemon stopped before its first rebuild
    // committed: the file exists, newer than every rollout, with no rows.
    let db = StateDb::open(home.path()).await.unwrap();
    let (db, report) = restart(db, home.path()).await;
    let report = report.unwrap();
    assert!(report.full, "{report:?}");
    assert_eq!(report.indexed, 2);
    restart_reads_nothing(db, home.path(), "complete now").await;
}

/// A second daemon's catch-up while the first holds a thread open (issue 24 §8): the row is
/// re-read but stays `dirty`, so what the first daemon appends before it is killed is re-read
/// at the next start; once the writer has closed the file, a catch-up marks it level.
#[tokio::test]
async fn a_row_whose_rollout_a_writer_holds_stays_dirty() {
    let home = tempfile::tempdir().unwrap();
    let (id, path) = write_rollout(home.path(), 1, None).await;
    let (db, _) = reopen(home.path()).await;
    let writer = RolloutWriter::resume(&path).await.unwrap();
    assert!(db.set_dirty(&id, true).await.unwrap());

    let (db, report) = restart(db, home.path()).await;
    assert_eq!(report.map(|r| r.indexed), Some(1));
    assert_eq!(
        dirty_ids(&db).await,
        [id.as_str()],
        "the writer still holds it"
    );
    db.close().await;
    drop(db);

    // The first daemon appends, then dies without marking the row level.
    writer.append(RolloutRecord::ThreadNameSet {
        name: "later".into(),
    });
    writer.close().await.unwrap();
    let (db, report) = reopen(home.path()).await;
    assert_eq!(report.map(|r| r.indexed), Some(1));
    let row = db.get(&id).await.unwrap().unwrap();
    assert_eq!(row.name.as_deref(), Some("later"));
    assert!(dirty_ids(&db).await.is_empty(), "nobody holds it now");
    db.close().await;
}

/// A full rebuild leaves the rows of held rollouts `dirty` too.
#[tokio::test]
async fn a_rebuild_leaves_held_rows_dirty() {
    let home = tempfile::tempdir().unwrap();
    let ([(id, path), (id2, _)], db) = indexed(home.path()).await;
    let writer = RolloutWriter::resume(&path).await.unwrap();
    assert!(db.set_dirty(&id, true).await.unwrap());
    assert!(db.set_dirty(&id2, true).await.unwrap());
    let report = db.rebuild_from_rollouts(home.path()).await.unwrap();
    assert_eq!(report.indexed, 2);
    assert_eq!(dirty_ids(&db).await, [id.as_str()]);
    writer.close().await.unwrap();
    db.rebuild_from_rollouts(home.path()).await.unwrap();
    assert!(dirty_ids(&db).await.is_empty());
    db.close().await;
}

/// A rebuild of more rollouts than one statement holds: every batch is written, an unreadable
/// rollout in the middle of one is skipped, and a second rebuild over the full index replaces
/// rows through the multi-row statement's update path (the search index follows the names).
#[tokio::test]
async fn a_rebuild_writes_every_batch_and_replaces_rows() {
    let home = tempfile::tempdir().unwrap();
    let n = 2 * super::ROWS_PER_STATEMENT + 3;
    let mut ids = Vec::new();
    for i in 1..=n {
        let name = (i % 100 == 0).then(|| format!("needle-{i}"));
        ids.push(
            write_rollout(home.path(), i as i64, name.as_deref())
                .await
                .0,
        );
    }
    let corrupt = home.path().join(
        "sessions/2023/11/14/rollout-2023-11-14T22-15-00-0190a0b0-0000-7000-8000-000000000300x.jsonl",
    );
    std::fs::write(&corrupt, "{ not json\n").unwrap();

    let (db, report) = reopen(home.path()).await;
    let report = report.unwrap();
    assert!(report.full);
    assert_eq!((report.indexed, report.skipped.len()), (n, 1), "{report:?}");
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM threads")
        .fetch_one(db.pool().await.unwrap())
        .await
        .unwrap();
    assert_eq!(count, n as i64);
    for (i, id) in ids.iter().enumerate() {
        let row = db.get(id).await.unwrap().unwrap();
        assert_eq!(row.preview, format!("hello {}", i + 1));
    }

    // Names changed in the index only: the next rebuild puts the rollouts' names back, in the
    // rows and in the search index.
    for id in ids.iter().step_by(7) {
        assert!(db.set_name(id, Some("stale")).await.unwrap());
    }
    let report = db.rebuild_from_rollouts(home.path()).await.unwrap();
    assert_eq!((report.indexed, report.removed), (n, 0));
    let search = |term: &str| ListQuery {
        search_term: Some(term.into()),
        limit: 100,
        ..ListQuery::default()
    };
    let (stale, _) = db.list(&search("stale")).await.unwrap().into_pair();
    assert!(stale.is_empty(), "{stale:?}");
    let (needles, _) = db.list(&search("needle-")).await.unwrap().into_pair();
    assert_eq!(needles.len(), n / 100);
    db.close().await;
}

#[tokio::test]
async fn the_rebuilds_page_cache_goes_back_to_the_default() {
    let home = tempfile::tempdir().unwrap();
    write_rollout(home.path(), 1, None).await;
    let (db, report) = reopen(home.path()).await;
    assert!(report.unwrap().full);
    db.rebuild_from_rollouts(home.path()).await.unwrap();
    // Every connection the pool holds, the rebuild's among them, has SQLite's default cache.
    let pool = db.pool().await.unwrap();
    let mut held = Vec::new();
    for _ in 0..pool.options().get_max_connections() {
        held.push(pool.acquire().await.unwrap());
    }
    for conn in &mut held {
        let size: i64 = sqlx::query_scalar("PRAGMA cache_size")
            .fetch_one(&mut **conn)
            .await
            .unwrap();
        assert_eq!(size, -2000);
    }
    drop(held);
    db.close().await;
}

#[test]
fn a_rebuild_logs_progress_each_ten_thousand_rollouts_but_not_at_the_end() {
    let mut progress = super::Progress::new(25_000);
    let steps: Vec<Option<usize>> = std::iter::repeat_n(4_096, 7)
        .map(|n| progress.step(n))
        .collect();
    // 4,096 … 28,672 done (the last batch is short in a real run; here it passes the total).
    assert_eq!(
        steps,
        [None, None, Some(12_288), None, Some(20_480), None, None]
    );
}
