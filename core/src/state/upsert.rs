//! Writing threads' rows: one row (a thread's writer, [`StateDb::upsert`]) or a few hundred in
//! one statement (a rebuild or a catch-up), through the same SQL.
//!
//! A rebuild of 100,000 rollouts wrote one statement per row before, and most of its time went
//! to the round trip between the runtime and sqlx's SQLite thread for each one (bench/README.md,
//! "Scale (issue 15): results"). One statement for [`ROWS_PER_STATEMENT`] rows pays that once.
//!
//! [`StateDb::upsert`]: super::StateDb::upsert

use sqlx::{QueryBuilder, Sqlite};

use super::{COLUMNS, StateError, ThreadRow, source_kind};

/// Rows per multi-row statement. Each row binds 20 values, so a statement stays far below
/// SQLite's limit of 32,766 bound variables; past a few hundred rows a longer statement saves
/// nothing more.
pub(super) const ROWS_PER_STATEMENT: usize = 256;

/// What a row that is already there gets: every column from the new row. `dirty` is left as
/// it was unless the write is by a writer that holds the rollout open.
const ON_CONFLICT: &str = " ON CONFLICT (id) DO UPDATE SET \
     rollout_path = excluded.rollout_path, cwd = excluded.cwd, model = excluded.model, \
     model_provider = excluded.model_provider, reasoning_effort = excluded.reasoning_effort, \
     source = excluded.source, source_json = excluded.source_json, \
     originator = excluded.originator, cli_version = excluded.cli_version, \
     thread_source = excluded.thread_source, preview = excluded.preview, \
     name = excluded.name, created_at = excluded.created_at, \
     updated_at = excluded.updated_at, archived = excluded.archived, \
     forked_from_id = excluded.forked_from_id, recency_at = excluded.recency_at, \
     parent_thread_id = excluded.parent_thread_id, agent_closed = excluded.agent_closed";

/// Insert or replace `rows` (at most [`ROWS_PER_STATEMENT`]) in one statement. `open`: the rows
/// are also marked `dirty` (a writer holds their rollouts); otherwise their marks are left as
/// they were (`FALSE` for a new row). One statement, so a single row never needs a transaction
/// that could lose a race to another writer. When two rows share an id, the later one wins, as
/// it would in two statements.
pub(super) async fn upsert_rows<'e, E>(
    executor: E,
    rows: &[ThreadRow],
    open: bool,
) -> Result<(), StateError>
where
    E: sqlx::Executor<'e, Database = Sqlite>,
{
    if rows.is_empty() {
        return Ok(());
    }
    debug_assert!(rows.len() <= ROWS_PER_STATEMENT, "{} rows", rows.len());
    let sources = rows
        .iter()
        .map(|row| {
            serde_json::to_string(&row.source).map_err(|source| StateError::Encode {
                id: row.id.to_string(),
                source,
            })
        })
        .collect::<Result<Vec<String>, StateError>>()?;
    let mut sql = QueryBuilder::<Sqlite>::new(format!("INSERT INTO threads ({COLUMNS}, dirty) "));
    sql.push_values(
        rows.iter().zip(sources),
        |mut values, (row, source_json)| {
            values
                .push_bind(row.id.as_str().to_string())
                .push_bind(row.rollout_path.display().to_string())
                .push_bind(row.cwd.clone())
                .push_bind(row.model.clone())
                .push_bind(row.model_provider.clone())
                .push_bind(row.reasoning_effort.as_ref().map(|e| e.0.clone()))
                .push_bind(source_kind(&row.source))
                .push_bind(source_json)
                .push_bind(row.originator.clone())
                .push_bind(row.cli_version.clone())
                .push_bind(row.thread_source.clone())
                .push_bind(row.preview.clone())
                .push_bind(row.name.clone())
                .push_bind(row.created_at)
                .push_bind(row.updated_at)
                .push_bind(row.archived)
                .push_bind(
                    row.forked_from_id
                        .as_ref()
                        .map(|id| id.as_str().to_string()),
                )
                .push_bind(row.recency_at)
                .push_bind(row.parent_thread_id().map(|id| id.as_str().to_string()))
                .push_bind(row.agent_closed)
                .push(if open { "TRUE" } else { "FALSE" });
        },
    );
    sql.push(ON_CONFLICT);
    if open {
        sql.push(", dirty = TRUE");
    }
    sql.build().execute(executor).await?;
    Ok(())
}
