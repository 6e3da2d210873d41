//! The state DB: an index of every stored thread for listing, naming, archiving and filtering
//! (runtime.md §7). SQLite (`$WEFT_HOME/state.sqlite`, WAL mode) through sqlx, migrations
//! embedded with `sqlx::migrate!`.
//!
//! The rollouts are the source of truth; this is only an index and can always be rebuilt from
//! them ([`StateDb::rebuild_from_rollouts`]). **Rebuild rule** ([`StateDb::needs_rebuild`]):
//! at start, rebuild when `state.sqlite` did not exist before [`StateDb::open`], or when the
//! newest rollout file was modified after the DB (the newer of `state.sqlite` and
//! `state.sqlite-wal`, as they were before `open`) — which is what a crash mid-turn, a rollout
//! copied in from a backup, or a deleted DB leave behind. The runtime writes the rollout first
//! and the DB second, so a clean run leaves the DB newer.
//!
//! The SQL is kept portable to PostgreSQL (the planned second backend): `$N` placeholders,
//! `ON CONFLICT … DO UPDATE`, `BIGINT`/`BOOLEAN`/`TEXT` columns, keyset pagination with plain
//! comparisons, and `LIKE … ESCAPE` for the search (case-sensitive: SQLite connections set
//! `case_sensitive_like`, PostgreSQL's `LIKE` already is).

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{QueryBuilder, Row, Sqlite};
use weft_protocol::{
    ReasoningEffort, SessionSource, SortDirection, SubAgentSource, Thread, ThreadHistoryMode,
    ThreadId, ThreadStatus,
};

use crate::rollout::{self, Replay};

/// The DB file name under `$WEFT_HOME`.
pub const STATE_DB_FILE: &str = "state.sqlite";

/// Page size used when a [`ListQuery`] asks for 0 rows.
pub const DEFAULT_LIST_LIMIT: u32 = 25;

/// Largest page [`StateDb::list`] returns.
pub const MAX_LIST_LIMIT: u32 = 1000;

/// The source kinds `thread/list` shows when the request names none (protocol.md §4.5).
pub const INTERACTIVE_SOURCE_KINDS: &[&str] = &["cli", "vscode"];

/// The sub-agent kinds the `subAgent` filter stands for.
const SUB_AGENT_KINDS: &[&str] = &[
    "subAgentReview",
    "subAgentCompact",
    "subAgentThreadSpawn",
    "subAgentOther",
];

const COLUMNS: &str = "id, rollout_path, cwd, model, model_provider, reasoning_effort, source, \
     source_json, originator, cli_version, thread_source, preview, name, created_at, updated_at, \
     archived, forked_from_id";

/// Why a state DB operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The database said no.
    #[error("state db: {0}")]
    Db(#[from] sqlx::Error),
    /// A migration failed (or the DB is newer than this Weft).
    #[error("state db migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
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
    /// A row that does not decode (e.g. a bad `source_json`).
    #[error("state db: corrupt row {id}: {reason}")]
    Corrupt {
        /// The row id.
        id: String,
        /// What is wrong.
        reason: String,
    },
}

/// One indexed thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRow {
    /// Thread id.
    pub id: ThreadId,
    /// The rollout file (in `sessions/` or `archived_sessions/`).
    pub rollout_path: PathBuf,
    /// Working directory (as last used).
    pub cwd: String,
    /// Model (as last used).
    pub model: Option<String>,
    /// Provider id (as last used).
    pub model_provider: String,
    /// Reasoning effort (as last used).
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Which kind of client created the thread (the `source` column holds its
    /// [`source_kind`]).
    pub source: SessionSource,
    /// The creating client's name.
    pub originator: Option<String>,
    /// Version of the Weft that created the thread.
    pub cli_version: String,
    /// `thread/start.threadSource`.
    pub thread_source: Option<String>,
    /// First user message (`""` when none yet).
    pub preview: String,
    /// User-facing name.
    pub name: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub updated_at: i64,
    /// Whether the rollout is in `archived_sessions/`.
    pub archived: bool,
    /// Source of a fork.
    pub forked_from_id: Option<ThreadId>,
}

impl ThreadRow {
    /// The row of a thread as its rollout tells it.
    pub fn from_replay(replay: &Replay, path: &Path, archived: bool) -> ThreadRow {
        let thread = replay.thread(Some(path));
        let mut row = ThreadRow::from_thread(&thread, path, archived);
        row.updated_at = replay.updated_at;
        row
    }

    /// The row of a live thread (e.g. right after `thread/start`).
    pub fn from_thread(thread: &Thread, path: &Path, archived: bool) -> ThreadRow {
        ThreadRow {
            id: thread.id.clone(),
            rollout_path: path.to_path_buf(),
            cwd: thread.cwd.clone(),
            model: thread.model.clone(),
            model_provider: thread.model_provider.clone(),
            reasoning_effort: thread.reasoning_effort.clone(),
            source: thread.source.clone(),
            originator: thread.originator.clone(),
            cli_version: thread.cli_version.clone(),
            thread_source: thread.thread_source.clone(),
            preview: thread.preview.clone(),
            name: thread.name.clone(),
            created_at: thread.created_at,
            updated_at: thread.updated_at,
            archived,
            forked_from_id: thread.forked_from_id.clone(),
        }
    }

    /// The wire thread for `thread/list` / `thread/read` (`turns: []`).
    pub fn to_thread(&self, status: ThreadStatus) -> Thread {
        let parent_thread_id = match &self.source {
            SessionSource::SubAgent(SubAgentSource::ThreadSpawn {
                parent_thread_id, ..
            }) => Some(parent_thread_id.clone()),
            _ => None,
        };
        Thread {
            id: self.id.clone(),
            session_id: self.id.to_string(),
            forked_from_id: self.forked_from_id.clone(),
            parent_thread_id,
            preview: self.preview.clone(),
            ephemeral: false,
            section: None,
            section_entered_at: None,
            project_id: None,
            history_mode: ThreadHistoryMode::default(),
            model_provider: self.model_provider.clone(),
            model: self.model.clone(),
            reasoning_effort: self.reasoning_effort.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
            recency_at: None,
            status,
            path: Some(self.rollout_path.display().to_string()),
            cwd: self.cwd.clone(),
            cli_version: self.cli_version.clone(),
            originator: self.originator.clone(),
            source: self.source.clone(),
            thread_source: self.thread_source.clone(),
            agent_nickname: None,
            agent_role: None,
            git_info: None,
            name: self.name.clone(),
            turns: Vec::new(),
        }
    }
}

/// The `thread/list` filter kind of a source: `cli`, `vscode`, `exec`, `appServer`,
/// `subAgentReview`, `subAgentCompact`, `subAgentThreadSpawn`, `subAgentOther` or `unknown`
/// (custom sources count as `unknown`).
pub fn source_kind(source: &SessionSource) -> &'static str {
    match source {
        SessionSource::Cli => "cli",
        SessionSource::Vscode => "vscode",
        SessionSource::Exec => "exec",
        SessionSource::AppServer => "appServer",
        SessionSource::Unknown | SessionSource::Custom(_) => "unknown",
        SessionSource::SubAgent(sub) => match sub {
            SubAgentSource::Review => "subAgentReview",
            SubAgentSource::Compact => "subAgentCompact",
            SubAgentSource::ThreadSpawn { .. } => "subAgentThreadSpawn",
            SubAgentSource::MemoryConsolidation | SubAgentSource::Other(_) => "subAgentOther",
        },
    }
}

/// What `thread/list` orders by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListSortKey {
    /// Creation time (default).
    #[default]
    CreatedAt,
    /// Last update time.
    UpdatedAt,
}

impl ListSortKey {
    fn column(self) -> &'static str {
        match self {
            ListSortKey::CreatedAt => "created_at",
            ListSortKey::UpdatedAt => "updated_at",
        }
    }
}

/// A `thread/list` page request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Page size (0 = [`DEFAULT_LIST_LIMIT`]; at most [`MAX_LIST_LIMIT`]).
    pub limit: u32,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Order (ties broken by id, same direction).
    pub sort_key: ListSortKey,
    /// `desc` (newest first, default) or `asc`.
    pub direction: SortDirection,
    /// Providers to keep; `None` or empty = all.
    pub model_providers: Option<Vec<String>>,
    /// Source kinds to keep ([`source_kind`] spellings; `subAgent` = every sub-agent kind);
    /// `None` or empty = [`INTERACTIVE_SOURCE_KINDS`].
    pub source_kinds: Option<Vec<String>>,
    /// `true` = archived threads only; `false` = non-archived only.
    pub archived: bool,
    /// Working directories to keep (exact match on any); `None` or empty = all.
    pub cwd: Option<Vec<String>>,
    /// Case-sensitive substring of the name or the preview.
    pub search_term: Option<String>,
}

/// What a rebuild did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RebuildReport {
    /// Rollouts indexed.
    pub indexed: usize,
    /// Rollouts that could not be read, with why.
    pub skipped: Vec<(PathBuf, String)>,
    /// Rows dropped because their rollout is gone.
    pub removed: usize,
}

/// The state DB.
#[derive(Debug, Clone)]
pub struct StateDb {
    pool: SqlitePool,
    path: PathBuf,
    /// `state.sqlite` did not exist before `open`.
    fresh: bool,
    /// Newest modification time of `state.sqlite` / `-wal` before `open`.
    modified_before_open: Option<SystemTime>,
}

impl StateDb {
    /// Open (creating it and `home` when missing) `home/state.sqlite` in WAL mode and run the
    /// migrations.
    pub async fn open(home: &Path) -> Result<StateDb, StateError> {
        std::fs::create_dir_all(home).map_err(|source| StateError::Io {
            path: home.to_path_buf(),
            source,
        })?;
        let path = home.join(STATE_DB_FILE);
        let fresh = !path.exists();
        let modified_before_open = [path.clone(), wal_path(&path)]
            .iter()
            .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
            .max();
        let options = SqliteConnectOptions::new()
            .filename(&path)
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
        Ok(StateDb {
            pool,
            path,
            fresh,
            modified_before_open,
        })
    }

    /// [`open`](StateDb::open), then [`rebuild_from_rollouts`](StateDb::rebuild_from_rollouts)
    /// when [`needs_rebuild`](StateDb::needs_rebuild) says so (the report is `Some` then).
    pub async fn open_and_rebuild_if_needed(
        home: &Path,
    ) -> Result<(StateDb, Option<RebuildReport>), StateError> {
        let db = StateDb::open(home).await?;
        if db.needs_rebuild(home)? {
            let report = db.rebuild_from_rollouts(home).await?;
            return Ok((db, Some(report)));
        }
        Ok((db, None))
    }

    /// The DB file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the index may be behind the rollouts (see the module docs for the rule).
    pub fn needs_rebuild(&self, home: &Path) -> Result<bool, StateError> {
        if self.fresh {
            return Ok(true);
        }
        let Some(db_time) = self.modified_before_open else {
            return Ok(true);
        };
        for found in rollout::list_rollouts(home)? {
            let modified = std::fs::metadata(&found.path).and_then(|m| m.modified());
            match modified {
                Ok(time) if time > db_time => return Ok(true),
                Ok(_) => {}
                Err(_) => return Ok(true),
            }
        }
        Ok(false)
    }

    /// Insert or replace a thread's row.
    pub async fn upsert(&self, row: &ThreadRow) -> Result<(), StateError> {
        upsert_with(&self.pool, row).await
    }

    /// A thread's row.
    pub async fn get(&self, id: &ThreadId) -> Result<Option<ThreadRow>, StateError> {
        let sql = format!("SELECT {COLUMNS} FROM threads WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| decode_row(&r)).transpose()
    }

    /// Set (or clear) a thread's name. `false` when there is no such row.
    pub async fn set_name(&self, id: &ThreadId, name: Option<&str>) -> Result<bool, StateError> {
        let done = sqlx::query("UPDATE threads SET name = $1 WHERE id = $2")
            .bind(name)
            .bind(id.as_str())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Record an archive move. `false` when there is no such row.
    pub async fn set_archived(
        &self,
        id: &ThreadId,
        archived: bool,
        new_path: &Path,
    ) -> Result<bool, StateError> {
        let done = sqlx::query("UPDATE threads SET archived = $1, rollout_path = $2 WHERE id = $3")
            .bind(archived)
            .bind(new_path.display().to_string())
            .bind(id.as_str())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Bump `updated_at` (never backwards), and set the preview when given. `false` when there
    /// is no such row.
    pub async fn touch(
        &self,
        id: &ThreadId,
        updated_at: i64,
        preview: Option<&str>,
    ) -> Result<bool, StateError> {
        let done = sqlx::query(
            "UPDATE threads SET \
             updated_at = CASE WHEN updated_at > $1 THEN updated_at ELSE $1 END, \
             preview = COALESCE($2, preview) \
             WHERE id = $3",
        )
        .bind(updated_at)
        .bind(preview)
        .bind(id.as_str())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Remove a thread's row. `false` when there was none.
    pub async fn delete(&self, id: &ThreadId) -> Result<bool, StateError> {
        let done = sqlx::query("DELETE FROM threads WHERE id = $1")
            .bind(id.as_str())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// One page of threads and the cursor of the next page (`None` on the last page). Keyset
    /// pagination on `(sort value, id)`: a page never repeats or skips a row because rows were
    /// inserted meanwhile (rows whose sort value changes may move, as with any live order).
    pub async fn list(
        &self,
        query: &ListQuery,
    ) -> Result<(Vec<ThreadRow>, Option<String>), StateError> {
        let limit = match query.limit {
            0 => DEFAULT_LIST_LIMIT,
            n => n.min(MAX_LIST_LIMIT),
        };
        let column = query.sort_key.column();
        let (cmp, order) = match query.direction {
            SortDirection::Desc => ("<", "DESC"),
            SortDirection::Asc => (">", "ASC"),
        };
        let mut sql =
            QueryBuilder::<Sqlite>::new(format!("SELECT {COLUMNS} FROM threads WHERE archived = "));
        sql.push_bind(query.archived);

        if let Some(providers) = query.model_providers.as_ref().filter(|p| !p.is_empty()) {
            sql.push(" AND model_provider IN (");
            push_list(&mut sql, providers.iter().map(String::as_str));
            sql.push(")");
        }
        let kinds = expand_source_kinds(query.source_kinds.as_deref());
        sql.push(" AND source IN (");
        push_list(&mut sql, kinds.iter().copied());
        sql.push(")");
        if let Some(cwds) = query.cwd.as_ref().filter(|c| !c.is_empty()) {
            sql.push(" AND cwd IN (");
            push_list(&mut sql, cwds.iter().map(String::as_str));
            sql.push(")");
        }
        if let Some(term) = query.search_term.as_deref().filter(|t| !t.is_empty()) {
            let pattern = format!("%{}%", escape_like(term));
            sql.push(" AND (name LIKE ");
            sql.push_bind(pattern.clone());
            sql.push(" ESCAPE '\\' OR preview LIKE ");
            sql.push_bind(pattern);
            sql.push(" ESCAPE '\\')");
        }
        if let Some(cursor) = &query.cursor {
            let (value, id) = parse_cursor(cursor)?;
            sql.push(format!(" AND ({column} {cmp} "));
            sql.push_bind(value);
            sql.push(format!(" OR ({column} = "));
            sql.push_bind(value);
            sql.push(format!(" AND id {cmp} "));
            sql.push_bind(id);
            sql.push("))");
        }
        sql.push(format!(" ORDER BY {column} {order}, id {order} LIMIT "));
        sql.push_bind(i64::from(limit) + 1);

        let rows = sql.build().fetch_all(&self.pool).await?;
        let mut out = rows.iter().map(decode_row).collect::<Result<Vec<_>, _>>()?;
        let next = if out.len() > limit as usize {
            out.truncate(limit as usize);
            out.last().map(|row| {
                let value = match query.sort_key {
                    ListSortKey::CreatedAt => row.created_at,
                    ListSortKey::UpdatedAt => row.updated_at,
                };
                format!("{value}:{}", row.id)
            })
        } else {
            None
        };
        Ok((out, next))
    }

    /// Re-index every rollout under `sessions/` and `archived_sessions/` (the rollouts win over
    /// what the DB holds), and drop rows whose rollout is gone. A rollout that cannot be read is
    /// logged, reported and skipped; it never stops the scan.
    pub async fn rebuild_from_rollouts(&self, home: &Path) -> Result<RebuildReport, StateError> {
        let found = rollout::list_rollouts(home)?;
        let scanned = tokio::task::spawn_blocking(move || {
            found
                .into_iter()
                .map(|found| match rollout::read_rollout(&found.path) {
                    Ok(replay) => Ok(ThreadRow::from_replay(&replay, &found.path, found.archived)),
                    Err(err) => Err((found.path, err.to_string())),
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|err| StateError::Io {
            path: home.to_path_buf(),
            source: std::io::Error::other(err.to_string()),
        })?;

        let mut report = RebuildReport::default();
        let mut seen = std::collections::HashSet::new();
        let mut tx = self.pool.begin().await?;
        for entry in scanned {
            match entry {
                Ok(row) => {
                    upsert_with(&mut *tx, &row).await?;
                    seen.insert(row.id.into_string());
                    report.indexed += 1;
                }
                Err((path, reason)) => {
                    tracing::warn!(path = %path.display(), %reason, "skipping an unreadable rollout while rebuilding the state db");
                    report.skipped.push((path, reason));
                }
            }
        }
        let ids: Vec<String> = sqlx::query("SELECT id FROM threads")
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| r.try_get::<String, _>("id"))
            .collect::<Result<_, _>>()?;
        for id in ids.into_iter().filter(|id| !seen.contains(id)) {
            sqlx::query("DELETE FROM threads WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            report.removed += 1;
        }
        tx.commit().await?;
        Ok(report)
    }

    /// Close the pool (waits for connections to finish).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn wal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

async fn upsert_with<'e, E>(executor: E, row: &ThreadRow) -> Result<(), StateError>
where
    E: sqlx::Executor<'e, Database = Sqlite>,
{
    let source_json = serde_json::to_string(&row.source).map_err(|err| StateError::Corrupt {
        id: row.id.to_string(),
        reason: err.to_string(),
    })?;
    let sql = format!(
        "INSERT INTO threads ({COLUMNS}) VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
         ON CONFLICT (id) DO UPDATE SET \
         rollout_path = excluded.rollout_path, cwd = excluded.cwd, model = excluded.model, \
         model_provider = excluded.model_provider, reasoning_effort = excluded.reasoning_effort, \
         source = excluded.source, source_json = excluded.source_json, \
         originator = excluded.originator, cli_version = excluded.cli_version, \
         thread_source = excluded.thread_source, preview = excluded.preview, \
         name = excluded.name, created_at = excluded.created_at, \
         updated_at = excluded.updated_at, archived = excluded.archived, \
         forked_from_id = excluded.forked_from_id"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(row.id.as_str())
        .bind(row.rollout_path.display().to_string())
        .bind(&row.cwd)
        .bind(&row.model)
        .bind(&row.model_provider)
        .bind(row.reasoning_effort.as_ref().map(|e| e.0.clone()))
        .bind(source_kind(&row.source))
        .bind(source_json)
        .bind(&row.originator)
        .bind(&row.cli_version)
        .bind(&row.thread_source)
        .bind(&row.preview)
        .bind(&row.name)
        .bind(row.created_at)
        .bind(row.updated_at)
        .bind(row.archived)
        .bind(
            row.forked_from_id
                .as_ref()
                .map(|id| id.as_str().to_string()),
        )
        .execute(executor)
        .await?;
    Ok(())
}

fn decode_row(row: &SqliteRow) -> Result<ThreadRow, StateError> {
    let id: String = row.try_get("id")?;
    let source_json: String = row.try_get("source_json")?;
    let source = serde_json::from_str(&source_json).map_err(|err| StateError::Corrupt {
        id: id.clone(),
        reason: format!("source_json: {err}"),
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
    })
}

/// The concrete kinds a `sourceKinds` filter stands for.
fn expand_source_kinds(kinds: Option<&[String]>) -> Vec<&str> {
    let Some(kinds) = kinds.filter(|k| !k.is_empty()) else {
        return INTERACTIVE_SOURCE_KINDS.to_vec();
    };
    let mut out = Vec::new();
    for kind in kinds {
        if kind == "subAgent" {
            out.extend_from_slice(SUB_AGENT_KINDS);
        } else {
            out.push(kind.as_str());
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn push_list<'a>(sql: &mut QueryBuilder<Sqlite>, values: impl Iterator<Item = &'a str>) {
    let mut separated = sql.separated(", ");
    for value in values {
        separated.push_bind(value.to_string());
    }
}

/// Escape `%`, `_` and the escape character itself for `LIKE … ESCAPE '\'`.
fn escape_like(term: &str) -> String {
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `"<sort value>:<id>"`.
fn parse_cursor(cursor: &str) -> Result<(i64, String), StateError> {
    let invalid = || StateError::InvalidCursor(cursor.to_string());
    let (value, id) = cursor.split_once(':').ok_or_else(invalid)?;
    let value = i64::from_str(value).map_err(|_| invalid())?;
    if id.is_empty() {
        return Err(invalid());
    }
    Ok((value, id.to_string()))
}
