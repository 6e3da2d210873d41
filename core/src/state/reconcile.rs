//! Bringing the index level with the rollouts at start-up, without reading or even listing
//! every rollout (docs/architecture.md §10).
//!
//! # What can be behind, and how start-up finds it
//!
//! - **No DB** (first start, deleted DB), or a full rebuild that never finished (the daemon
//!   stopped first: the rebuild marks the index complete in the transaction of its rows):
//!   everything. A full rebuild ([`StateDb::rebuild_from_rollouts`]).
//! - **A thread the last daemon had open for writing and never closed** (it was killed, or
//!   its last index update failed): its row is still `dirty` (set when a writer opens the
//!   file, or for a resumed thread before its writer first changes it; cleared after it
//!   closes it, [`StateDb::set_dirty`]). Start-up re-reads those
//!   rollouts, and only those. A catch-up leaves `dirty` the rows whose rollout a writer still
//!   holds (a second daemon started on a home the first is using), so the first daemon's later
//!   appends are re-read after it is killed too.
//! - **Files added, removed or renamed by hand** (a rollout copied in from a backup or another
//!   machine, an archived file moved back): they change their day directory's modification
//!   time, so start-up looks at each day directory's metadata
//!   ([`rollout::changed_day_dirs`]) and re-reads the rollouts of the directories changed since
//!   the DB was last written (the newer of `state.sqlite` and `state.sqlite-wal` before
//!   `open`); a row there whose file is gone is looked up by id (it may have moved) and dropped
//!   when it is nowhere.
//!
//! So start-up is linear in the number of days with rollouts and in what changed, never in the
//! number of stored threads. A file rewritten in place by hand (not appended by Weft, not
//! added) is not noticed: deleting `state.sqlite` forces a full rebuild.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use sqlx::Row;
use weft_protocol::ThreadId;

use sqlx::SqlitePool;

use super::upsert::{ROWS_PER_STATEMENT, upsert_rows};
use super::{Opened, RebuildReport, StateDb, StateError, ThreadRow, delete_with};
use crate::rollout::{self, ARCHIVED_SESSIONS_DIR};

#[cfg(test)]
mod tests;

impl StateDb {
    /// [`open`](StateDb::open), then [`catch_up`](StateDb::catch_up) (the report is `Some`
    /// when anything was re-indexed or dropped).
    pub async fn open_and_catch_up(
        home: &Path,
    ) -> Result<(StateDb, Option<RebuildReport>), StateError> {
        let db = StateDb::open(home).await?;
        let report = db.catch_up(home).await?;
        Ok((db, report))
    }

    /// Re-index what may be behind the rollouts (see the module docs); `None` when nothing is.
    /// A [`StateDb::deferred`] DB does this once, when it opens.
    pub async fn catch_up(&self, home: &Path) -> Result<Option<RebuildReport>, StateError> {
        catch_up(self.opened().await?, home).await
    }

    /// Mark a thread's row as possibly behind its rollout (a writer has the file open), or as
    /// level with it again (the writer closed it after the last update). `false` when there is
    /// no such row.
    pub async fn set_dirty(&self, id: &ThreadId, dirty: bool) -> Result<bool, StateError> {
        self.update_thread("UPDATE threads SET dirty = $1 WHERE id = $2", dirty, id)
            .await
    }

    /// Insert or replace the row of a thread whose rollout a writer now holds open: the row
    /// is `dirty` until the writer closes it.
    pub async fn upsert_open(&self, row: &ThreadRow) -> Result<(), StateError> {
        upsert_rows(self.pool().await?, std::slice::from_ref(row), true).await
    }

    /// Re-index every rollout under `sessions/` and `archived_sessions/` (the rollouts win over
    /// what the DB holds), and drop rows whose rollout is gone. A rollout that cannot be read is
    /// logged, reported and skipped; it never stops the scan.
    pub async fn rebuild_from_rollouts(&self, home: &Path) -> Result<RebuildReport, StateError> {
        rebuild(self.pool().await?, home).await
    }
}

/// Log what a catch-up did.
pub(super) fn log_report(report: Option<&RebuildReport>) {
    let Some(report) = report else {
        return;
    };
    let (indexed, skipped, removed) = (report.indexed, report.skipped.len(), report.removed);
    if report.full {
        tracing::info!(
            indexed,
            skipped,
            removed,
            "rebuilt the thread index from the rollouts"
        );
    } else {
        tracing::info!(
            indexed,
            skipped,
            removed,
            "re-read the rollouts the thread index may be behind"
        );
    }
    for (path, why) in &report.skipped {
        tracing::warn!(path = %path.display(), %why, "rollout skipped while indexing");
    }
}

/// [`StateDb::catch_up`] on an open DB.
pub(super) async fn catch_up(
    opened: &Opened,
    home: &Path,
) -> Result<Option<RebuildReport>, StateError> {
    let pool = &opened.pool;
    let complete: i64 = sqlx::query_scalar("SELECT count(*) FROM index_complete")
        .fetch_one(pool)
        .await?;
    let since = match opened.modified_before_open {
        Some(time) if !opened.fresh && complete > 0 => time,
        _ => return rebuild(pool, home).await.map(Some),
    };
    let dirty: Vec<(String, String)> =
        sqlx::query("SELECT id, rollout_path FROM threads WHERE dirty")
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| Ok((r.try_get("id")?, r.try_get("rollout_path")?)))
            .collect::<Result<_, sqlx::Error>>()?;
    let owned = home.to_path_buf();
    let changed = blocking(home, move || rollout::changed_day_dirs(&owned, since)).await??;
    if dirty.is_empty() && changed.is_empty() {
        return Ok(None);
    }

    // Every file to read, with whether it is archived; ids whose file is not where the row
    // says.
    let mut paths: BTreeMap<PathBuf, bool> = BTreeMap::new();
    let mut lost: Vec<String> = Vec::new();
    let archived_root = home.join(ARCHIVED_SESSIONS_DIR);
    for (id, path) in &dirty {
        let path = PathBuf::from(path);
        if path.is_file() {
            let archived = path.starts_with(&archived_root);
            paths.insert(path, archived);
        } else {
            lost.push(id.clone());
        }
    }
    for (dir, archived) in &changed {
        for path in rollout::rollouts_in(dir)? {
            paths.insert(path, *archived);
        }
        let prefix = format!("{}/", dir.display());
        let rows = sqlx::query(
            "SELECT id, rollout_path FROM threads \
             WHERE substr(rollout_path, 1, length($1)) = $1",
        )
        .bind(&prefix)
        .fetch_all(pool)
        .await?;
        for row in rows {
            let path: String = row.try_get("rollout_path")?;
            if !Path::new(&path).is_file() {
                lost.push(row.try_get("id")?);
            }
        }
    }
    let mut gone = Vec::new();
    for id in lost {
        match rollout::find_rollout(home, &ThreadId::from(id.clone()))? {
            Some(found) => {
                paths.insert(found.path, found.archived);
            }
            None => gone.push(id),
        }
    }

    let scanned = blocking(home, move || read_rows(paths)).await?;
    let mut report = RebuildReport::default();
    let mut tx = pool.begin_with(WRITE_TRANSACTION).await?;
    let mut seen = HashSet::new();
    let mut scanned = scanned.into_iter();
    loop {
        let batch: Vec<Scanned> = scanned.by_ref().take(ROWS_PER_STATEMENT).collect();
        if batch.is_empty() {
            break;
        }
        upsert_scanned(&mut tx, batch, &mut report, &mut seen).await?;
    }
    for id in gone.iter().filter(|id| !seen.contains(*id)) {
        if delete_with(&mut tx, id).await? {
            report.removed += 1;
        }
    }
    clear_dirty(&mut tx, home).await?;
    tx.commit().await?;
    Ok(Some(report))
}

/// Catch-ups write in a transaction that holds SQLite's write lock from its first statement, so
/// a writer that opens a rollout meanwhile marks its row `dirty` after the catch-up's commit
/// (never between its lock check and its update, see [`clear_dirty`]).
const WRITE_TRANSACTION: &str = "BEGIN IMMEDIATE";

/// Mark the `dirty` rows level with their rollouts again, except those whose rollout a writer
/// still holds: another daemon on the same home (or this one) has the thread open and may append
/// to it after this catch-up, so its row stays `dirty` until that writer closes it, and a start
/// after that daemon is killed re-reads it (docs/architecture.md §10).
async fn clear_dirty(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    home: &Path,
) -> Result<(), StateError> {
    let dirty: Vec<(String, String)> =
        sqlx::query("SELECT id, rollout_path FROM threads WHERE dirty")
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|r| Ok((r.try_get("id")?, r.try_get("rollout_path")?)))
            .collect::<Result<_, sqlx::Error>>()?;
    if dirty.is_empty() {
        return Ok(());
    }
    let level: Vec<String> = blocking(home, move || {
        dirty
            .into_iter()
            .filter(|(_, path)| !held_by_writer(Path::new(path)))
            .map(|(id, _)| id)
            .collect()
    })
    .await?;
    for id in level {
        sqlx::query("UPDATE threads SET dirty = FALSE WHERE id = $1")
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Whether a rollout writer holds the file's lock (rollout.rs, "Writing"). Tested by taking a
/// shared lock and letting it go at once; a file that is gone, or a file system without locks,
/// counts as not held.
fn held_by_writer(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    matches!(
        file.try_lock_shared(),
        Err(std::fs::TryLockError::WouldBlock)
    )
}

/// [`StateDb::rebuild_from_rollouts`] on an open DB.
///
/// One thread reads the rollouts into rows, [`ROWS_PER_STATEMENT`] at a time, while this task
/// writes the batches it has read (a few batches ahead at most), all in one transaction that
/// also marks the index complete. A progress line goes to the log every
/// [`PROGRESS_EVERY`] rollouts.
async fn rebuild(pool: &SqlitePool, home: &Path) -> Result<RebuildReport, StateError> {
    let owned = home.to_path_buf();
    let found = blocking(home, move || rollout::list_rollouts(&owned)).await??;
    let total = found.len();
    let paths: Vec<(PathBuf, bool)> = found.into_iter().map(|f| (f.path, f.archived)).collect();
    tracing::info!(
        rollouts = total,
        "rebuilding the thread index from the rollouts"
    );
    let (sender, mut batches) = tokio::sync::mpsc::channel(READ_AHEAD_BATCHES);
    let reader = tokio::task::spawn_blocking(move || {
        for chunk in paths.chunks(ROWS_PER_STATEMENT) {
            let batch: Vec<Scanned> = chunk
                .iter()
                .map(|(path, archived)| read_row(path, *archived))
                .collect();
            if sender.blocking_send(batch).is_err() {
                break; // The writer failed and stopped listening.
            }
        }
    });
    // The rebuild writes every page of the DB's B-trees (13 indexes and the search index);
    // with SQLite's default 2 MiB page cache most of them would be spilled and read back
    // within the transaction. The connection gets a bigger cache for the rebuild only.
    let mut conn = pool.acquire().await?;
    sqlx::query(REBUILD_CACHE).execute(&mut *conn).await?;
    let rebuilt = rebuild_on(&mut conn, home, total, &mut batches).await;
    drop(batches);
    let restored = sqlx::query(DEFAULT_CACHE).execute(&mut *conn).await;
    let report = rebuilt?;
    restored?;
    reader.await.map_err(|err| StateError::Io {
        path: home.to_path_buf(),
        source: std::io::Error::other(err),
    })?;
    Ok(report)
}

/// The page cache of the rebuild's connection (64 MiB), and back after it (SQLite's default).
const REBUILD_CACHE: &str = "PRAGMA cache_size = -65536";
const DEFAULT_CACHE: &str = "PRAGMA cache_size = -2000";

/// The writing half of [`rebuild`], on `conn`: the batches read, in one transaction that also
/// drops the rows whose rollout is gone and marks the index complete.
async fn rebuild_on(
    conn: &mut sqlx::SqliteConnection,
    home: &Path,
    total: usize,
    batches: &mut tokio::sync::mpsc::Receiver<Vec<Scanned>>,
) -> Result<RebuildReport, StateError> {
    use sqlx::Connection as _;
    let mut report = RebuildReport {
        full: true,
        ..RebuildReport::default()
    };
    let mut tx = conn.begin_with(WRITE_TRANSACTION).await?;
    let mut seen = HashSet::new();
    let mut progress = Progress::new(total);
    while let Some(batch) = batches.recv().await {
        let n = batch.len();
        upsert_scanned(&mut tx, batch, &mut report, &mut seen).await?;
        if let Some(done) = progress.step(n) {
            tracing::info!(done, of = total, "rebuilding the thread index");
        }
    }
    let ids: Vec<String> = sqlx::query("SELECT id FROM threads")
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| r.try_get::<String, _>("id"))
        .collect::<Result<_, _>>()?;
    for id in ids.into_iter().filter(|id| !seen.contains(id)) {
        delete_with(&mut tx, &id).await?;
        report.removed += 1;
    }
    clear_dirty(&mut tx, home).await?;
    sqlx::query("INSERT INTO index_complete (id) VALUES (1) ON CONFLICT (id) DO NOTHING")
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(report)
}

/// Batches the rebuild's reader may be ahead of its writer (bounds the rows held in memory).
const READ_AHEAD_BATCHES: usize = 4;

/// A rebuild logs a progress line each time this many more rollouts are read.
const PROGRESS_EVERY: usize = 10_000;

/// Counts a rebuild's rollouts and says when a progress line is due.
struct Progress {
    total: usize,
    done: usize,
    next_line_at: usize,
}

impl Progress {
    fn new(total: usize) -> Progress {
        Progress {
            total,
            done: 0,
            next_line_at: PROGRESS_EVERY,
        }
    }

    /// `n` more rollouts done: the count so far when a line is due (each [`PROGRESS_EVERY`],
    /// never for the last batch, which the rebuild's report logs).
    fn step(&mut self, n: usize) -> Option<usize> {
        self.done += n;
        if self.done < self.next_line_at || self.done >= self.total {
            return None;
        }
        while self.next_line_at <= self.done {
            self.next_line_at += PROGRESS_EVERY;
        }
        Some(self.done)
    }
}

/// A rollout read into its row, or the file and why it could not be read.
type Scanned = Result<ThreadRow, (PathBuf, String)>;

/// Read each rollout into its row (blocking).
fn read_rows(paths: BTreeMap<PathBuf, bool>) -> Vec<Scanned> {
    paths
        .into_iter()
        .map(|(path, archived)| read_row(&path, archived))
        .collect()
}

/// Read one rollout into its row (blocking).
fn read_row(path: &Path, archived: bool) -> Scanned {
    match read_for_row(path) {
        Ok(replay) => Ok(ThreadRow::from_replay(&replay, path, archived)),
        Err(err) => Err((path.to_path_buf(), err.to_string())),
    }
}

/// Above this size a rollout is read through its index (a few lines parsed, bounded memory);
/// below it, reading it whole is faster (one read, no second pass).
const LEAN_READ_BYTES: u64 = 1 << 20;

/// A rollout's replay, enough for its row.
fn read_for_row(path: &Path) -> Result<rollout::Replay, rollout::RolloutError> {
    let big = std::fs::metadata(path).is_ok_and(|m| m.len() > LEAN_READ_BYTES);
    if big {
        rollout::lean::read_rollout_lean(path)
    } else {
        rollout::read_rollout(path)
    }
}

/// Upsert one batch of the rows read (at most [`ROWS_PER_STATEMENT`], one statement); an
/// unreadable rollout is logged, reported and skipped. Adds the ids indexed to `seen`.
async fn upsert_scanned(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    batch: Vec<Scanned>,
    report: &mut RebuildReport,
    seen: &mut HashSet<String>,
) -> Result<(), StateError> {
    let mut rows = Vec::with_capacity(batch.len());
    for entry in batch {
        match entry {
            Ok(row) => rows.push(row),
            Err((path, reason)) => {
                tracing::warn!(path = %path.display(), %reason, "skipping an unreadable rollout while indexing");
                report.skipped.push((path, reason));
            }
        }
    }
    upsert_rows(&mut **tx, &rows, false).await?;
    report.indexed += rows.len();
    seen.extend(rows.into_iter().map(|row| row.id.into_string()));
    Ok(())
}

/// Run blocking file work on the blocking pool.
async fn blocking<T: Send + 'static>(
    home: &Path,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, StateError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| StateError::Io {
            path: home.to_path_buf(),
            source: std::io::Error::other(err),
        })
}
