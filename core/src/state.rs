//! The state DB: an index of every stored thread for listing, naming, archiving and filtering
//! (docs/architecture.md §10). SQLite (`$WEFT_HOME/state.sqlite`, WAL mode) through sqlx, migrations
//! embedded with `sqlx::migrate!`.
//!
//! The rollouts are the source of truth; this is only an index and can always be rebuilt from
//! them ([`StateDb::rebuild_from_rollouts`]). At start, [`StateDb::catch_up`] re-indexes only
//! what may be behind: everything when there was no DB, else the threads a killed daemon left
//! open and the day directories changed by hand (`reconcile.rs` has the rule). The runtime
//! writes the rollout first and the DB second, so a clean run leaves the DB level.
//!
//! The SQL is kept portable to PostgreSQL (the planned second backend): `$N` placeholders,
//! `ON CONFLICT … DO UPDATE`, `BIGINT`/`BOOLEAN`/`TEXT` columns, keyset pagination with plain
//! comparisons, and `LIKE … ESCAPE` for the search (case-sensitive: SQLite connections set
//! `case_sensitive_like`, PostgreSQL's `LIKE` already is).

pub mod attachments;
mod goals;
mod list;
mod reconcile;
mod row;
mod sections;
mod thread_state;
mod upsert;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{Row, Sqlite};
use weft_protocol::{ReasoningEffort, ThreadId};

use crate::rollout;

pub use goals::{GoalError, GoalSet, GoalUpdate};
pub use list::{
    DEFAULT_LIST_LIMIT, INTERACTIVE_SOURCE_KINDS, Lineage, ListPage, ListQuery, ListSortKey,
    MAX_LIST_LIMIT, check_search_term,
};
pub use row::{ThreadRow, source_kind};
pub use sections::{PINNED_SECTION_ID, SectionError};
pub use thread_state::ReadStateError;
use upsert::upsert_rows;

/// A statement with its arguments bound, ready to run.
pub(crate) type SqliteQuery<'q> = sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments>;

/// The DB file name under `$WEFT_HOME`.
pub const STATE_DB_FILE: &str = "state.sqlite";

const COLUMNS: &str = "id, rollout_path, cwd, model, model_provider, reasoning_effort, source, \
     source_json, originator, cli_version, thread_source, preview, name, created_at, updated_at, \
     archived, forked_from_id, recency_at, parent_thread_id, agent_closed";

/// Why a state DB operation failed.
///
/// The database's own error text (SQL fragments, parser messages such as `unterminated
/// string`) never reaches a client: it is logged where the error arises (the `From`
/// conversions below), and the error's text is a generic one, since errors of this type end
/// up in JSON-RPC error messages (SECURITY.md, "Skills and thread search").
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The database said no (the detail is in the daemon's log).
    #[error("the thread index (state DB) failed; the daemon's log has the details")]
    Db(#[source] sqlx::Error),
    /// A migration failed, or the DB is newer than this Weft (the detail is in the log).
    #[error("the thread index (state DB) could not be migrated; the daemon's log has the details")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    /// A `thread/list` search term the index cannot search for.
    #[error("{0}")]
    InvalidSearchTerm(String),
    /// File system trouble around the DB or the rollouts.
    #[error("state db: {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Listing the rollouts failed.
    #[error(transparent)]
    Rollout(#[from] rollout::RolloutError),
    /// A `thread/list` cursor this DB did not hand out.
    #[error("invalid cursor: {0}")]
    InvalidCursor(String),
    /// A row whose `source_json` cannot be written.
    #[error("state db: corrupt row {id}: {source}")]
    Encode {
        /// The row id.
        id: String,
        /// Why the source does not serialize.
        source: serde_json::Error,
    },
    /// A row that does not decode (a bad `source_json`).
    #[error("state db: corrupt row {id}: source_json: {source}")]
    Corrupt {
        /// The row id.
        id: String,
        /// Why `source_json` does not parse.
        source: serde_json::Error,
    },
}

impl From<sqlx::Error> for StateError {
    fn from(err: sqlx::Error) -> StateError {
        tracing::error!(%err, "state db error");
        StateError::Db(err)
    }
}

impl From<sqlx::migrate::MigrateError> for StateError {
    fn from(err: sqlx::migrate::MigrateError) -> StateError {
        tracing::error!(%err, "state db migration error");
        StateError::Migrate(err)
    }
}

/// What a rebuild did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RebuildReport {
    /// Every rollout was read (there was no DB), not only what may have changed.
    pub full: bool,
    /// Rollouts indexed.
    pub indexed: usize,
    /// Rollouts that could not be read, with why.
    pub skipped: Vec<(PathBuf, String)>,
    /// Rows dropped because their rollout is gone.
    pub removed: usize,
}

/// The state DB. Cheap to clone (clones share the connections).
///
/// A DB made with [`StateDb::deferred`] is opened by its first use (or by
/// [`StateDb::ready`]), so the daemon answers `initialize` without waiting for SQLite: every
/// method waits until the DB is open, its migrations have run and it has caught up with the
/// rollouts.
#[derive(Debug, Clone)]
pub struct StateDb {
    path: PathBuf,
    home: PathBuf,
    /// Catch up with the rollouts while opening (the daemon's DB).
    catch_up: bool,
    opened: Arc<tokio::sync::OnceCell<Opened>>,
}

/// An open DB.
#[derive(Debug)]
struct Opened {
    pool: SqlitePool,
    /// `state.sqlite` did not exist before it was opened.
    fresh: bool,
    /// Newest modification time of `state.sqlite` / `-wal` before it was opened.
    modified_before_open: Option<SystemTime>,
}

impl StateDb {
    /// Open (creating it and `home` when missing) `home/state.sqlite` in WAL mode and run the
    /// migrations.
    pub async fn open(home: &Path) -> Result<StateDb, StateError> {
        let db = StateDb::new(home, false);
        db.ready().await?;
        Ok(db)
    }

    /// The daemon's DB: nothing is done now; the first use (or [`StateDb::ready`]) opens it,
    /// runs the migrations and catches up with the rollouts ([`StateDb::catch_up`], its
    /// report logged).
    pub fn deferred(home: &Path) -> StateDb {
        StateDb::new(home, true)
    }

    fn new(home: &Path, catch_up: bool) -> StateDb {
        StateDb {
            path: home.join(STATE_DB_FILE),
            home: home.to_path_buf(),
            catch_up,
            opened: Arc::new(tokio::sync::OnceCell::new()),
        }
    }

    /// Open the DB now if it is not open yet. A failure is returned to every caller that
    /// waited for it, and the next use tries again.
    pub async fn ready(&self) -> Result<(), StateError> {
        self.opened().await.map(|_| ())
    }

    async fn opened(&self) -> Result<&Opened, StateError> {
        self.opened
            .get_or_try_init(|| async {
                let opened = open_pool(&self.home, &self.path).await?;
                if self.catch_up {
                    let report = reconcile::catch_up(&opened, &self.home).await?;
                    reconcile::log_report(report.as_ref());
                }
                Ok(opened)
            })
            .await
    }

    /// The connections, once the DB is open.
    async fn pool(&self) -> Result<&SqlitePool, StateError> {
        Ok(&self.opened().await?.pool)
    }

    /// The DB file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Insert or replace a thread's row.
    pub async fn upsert(&self, row: &ThreadRow) -> Result<(), StateError> {
        upsert_rows(self.pool().await?, std::slice::from_ref(row), false).await
    }

    /// A thread's row.
    pub async fn get(&self, id: &ThreadId) -> Result<Option<ThreadRow>, StateError> {
        let sql = format!("SELECT {COLUMNS} FROM threads WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.as_str())
            .fetch_optional(self.pool().await?)
            .await?;
        row.map(|r| decode_row(&r)).transpose()
    }

    /// Set (or clear) a thread's name. `false` when there is no such row.
    pub async fn set_name(&self, id: &ThreadId, name: Option<&str>) -> Result<bool, StateError> {
        self.update_thread("UPDATE threads SET name = $1 WHERE id = $2", name, id)
            .await
    }

    /// Record an archive move. `false` when there is no such row.
    pub async fn set_archived(
        &self,
        id: &ThreadId,
        archived: bool,
        new_path: &Path,
    ) -> Result<bool, StateError> {
        self.changed(
            sqlx::query("UPDATE threads SET archived = $1, rollout_path = $2 WHERE id = $3")
                .bind(archived)
                .bind(new_path.display().to_string())
                .bind(id.as_str()),
        )
        .await
    }

    /// Bump `updated_at` (never backwards), and set the preview when given. `false` when there
    /// is no such row.
    pub async fn touch(
        &self,
        id: &ThreadId,
        updated_at: i64,
        preview: Option<&str>,
    ) -> Result<bool, StateError> {
        self.changed(
            sqlx::query(
                "UPDATE threads SET \
                 updated_at = CASE WHEN updated_at > $1 THEN updated_at ELSE $1 END, \
                 preview = COALESCE($2, preview) \
                 WHERE id = $3",
            )
            .bind(updated_at)
            .bind(preview)
            .bind(id.as_str()),
        )
        .await
    }

    /// Remove a thread's row, read state and goal. `false` when there was no row.
    pub async fn delete(&self, id: &ThreadId) -> Result<bool, StateError> {
        let mut tx = self.pool().await?.begin().await?;
        let done = delete_with(&mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(done)
    }

    /// Bump a thread's `recency_at` (never backwards). `false` when there is no such row.
    pub async fn touch_recency(&self, id: &ThreadId, at: i64) -> Result<bool, StateError> {
        self.update_thread(
            "UPDATE threads SET \
             recency_at = CASE WHEN recency_at > $1 THEN recency_at ELSE $1 END WHERE id = $2",
            at,
            id,
        )
        .await
    }

    /// Mark a sub-agent closed (`close_agent`) or open again (`resume_agent`). `false` when
    /// there is no such row.
    pub async fn set_agent_closed(&self, id: &ThreadId, closed: bool) -> Result<bool, StateError> {
        self.update_thread(
            "UPDATE threads SET agent_closed = $1 WHERE id = $2",
            closed,
            id,
        )
        .await
    }

    /// Run `sql`, an `UPDATE` of one thread's row with `$1` the value and `$2` the thread's
    /// id. `false` when there is no such row.
    pub(crate) async fn update_thread<'q, T>(
        &self,
        sql: &'static str,
        value: T,
        id: &'q ThreadId,
    ) -> Result<bool, StateError>
    where
        T: 'q + sqlx::Encode<'q, Sqlite> + sqlx::Type<Sqlite> + Send,
    {
        self.changed(sqlx::query(sql).bind(value).bind(id.as_str()))
            .await
    }

    /// Run a write; whether it changed a row.
    pub(crate) async fn changed(&self, query: SqliteQuery<'_>) -> Result<bool, StateError> {
        let done = query.execute(self.pool().await?).await?;
        Ok(done.rows_affected() > 0)
    }

    /// Close the pool (waits for connections to finish); nothing when it was never opened.
    pub async fn close(&self) {
        if let Some(opened) = self.opened.get() {
            opened.pool.close().await;
        }
    }
}

/// Open (creating it and `home` when missing) `path` in WAL mode, run the migrations and
/// backfill what they could not.
async fn open_pool(home: &Path, path: &Path) -> Result<Opened, StateError> {
    std::fs::create_dir_all(home).map_err(|source| StateError::Io {
        path: home.to_path_buf(),
        source,
    })?;
    let fresh = !path.exists();
    let modified_before_open = [path.to_path_buf(), wal_path(path)]
        .iter()
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .max();
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5))
        .pragma("case_sensitive_like", "ON");
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await?;
    sqlx::migrate!("./migrations").run(&pool).await?;
    backfill_parents(&pool).await?;
    Ok(Opened {
        pool,
        fresh,
        modified_before_open,
    })
}

/// Delete a thread's row and its per-thread state in `tx`; `false` when there was no row.
async fn delete_with(tx: &mut sqlx::Transaction<'_, Sqlite>, id: &str) -> Result<bool, StateError> {
    for table in [
        "thread_read_states",
        "thread_goals",
        "thread_section_members",
        "thread_git_info",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM {table} WHERE thread_id = $1"
        )))
        .bind(id)
        .execute(&mut **tx)
        .await?;
    }
    let done = sqlx::query("DELETE FROM threads WHERE id = $1")
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Rows written before `parent_thread_id` existed get it from their `source_json`.
async fn backfill_parents(pool: &SqlitePool) -> Result<(), StateError> {
    let rows = sqlx::query(
        "SELECT id, source_json FROM threads \
         WHERE source = 'subAgentThreadSpawn' AND parent_thread_id IS NULL",
    )
    .fetch_all(pool)
    .await?;
    for row in rows {
        let id: String = row.try_get("id")?;
        let json: String = row.try_get("source_json")?;
        let source: weft_protocol::SessionSource =
            serde_json::from_str(&json).map_err(|source| StateError::Corrupt {
                id: id.clone(),
                source,
            })?;
        if let Some(parent_thread_id) = weft_protocol::SubAgentSource::parent_of(&source) {
            sqlx::query("UPDATE threads SET parent_thread_id = $1 WHERE id = $2")
                .bind(parent_thread_id.as_str())
                .bind(&id)
                .execute(pool)
                .await?;
        }
    }
    Ok(())
}

fn wal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

fn decode_row(row: &SqliteRow) -> Result<ThreadRow, StateError> {
    let id: String = row.try_get("id")?;
    let source_json: String = row.try_get("source_json")?;
    let source = serde_json::from_str(&source_json).map_err(|source| StateError::Corrupt {
        id: id.clone(),
        source,
    })?;
    let rollout_path: String = row.try_get("rollout_path")?;
    let effort: Option<String> = row.try_get("reasoning_effort")?;
    let forked: Option<String> = row.try_get("forked_from_id")?;
    Ok(ThreadRow {
        id: ThreadId::from(id),
        rollout_path: PathBuf::from(rollout_path),
        cwd: row.try_get("cwd")?,
        model: row.try_get("model")?,
        model_provider: row.try_get("model_provider")?,
        reasoning_effort: effort.filter(|e| !e.is_empty()).map(ReasoningEffort),
        source,
        originator: row.try_get("originator")?,
        cli_version: row.try_get("cli_version")?,
        thread_source: row.try_get("thread_source")?,
        preview: row.try_get("preview")?,
        name: row.try_get("name")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        archived: row.try_get("archived")?,
        forked_from_id: forked.map(ThreadId::from),
        recency_at: row.try_get("recency_at")?,
        agent_closed: row.try_get("agent_closed")?,
    })
}
