//! Thread sections and stored Git metadata (docs/protocol.md §7.36): the sections clients group
//! threads in (`threadSection/*`), each thread's place in one (`thread/section/move`), and the
//! Git metadata `thread/metadata/update` sets. Migration `0006_thread_sections.sql`; unlike the
//! rest of the index the DB is their only home.

use std::collections::HashMap;

use sqlx::{Row, Sqlite};
use weft_protocol::{GitInfo, ThreadId, ThreadSection, ThreadSectionAppearance};

use super::{StateDb, StateError};

/// The id of the built-in section every store has (the reference's).
pub const PINNED_SECTION_ID: &str = "01984de2-8f74-7c91-a3b2-5c5e937cf318";

/// A refusal of a section request, with the reference's text.
#[derive(Debug, thiserror::Error)]
pub enum SectionError {
    /// The DB failed.
    #[error(transparent)]
    State(#[from] StateError),
    /// No such section (`threadSection/update`, `/delete`).
    #[error("thread section not found: {0}")]
    NotFound(String),
    /// `thread/section/move` into a section that does not exist.
    #[error("section {0} does not exist")]
    MoveTargetMissing(String),
    /// `thread/section/move` of a thread the index does not hold.
    #[error("thread not found: {0}")]
    ThreadNotFound(String),
    /// `beforeThreadId` names a thread outside the destination section.
    #[error("before thread {before} is not in section {section}")]
    BeforeNotInSection {
        /// The `beforeThreadId`.
        before: String,
        /// The destination.
        section: String,
    },
    /// The store holds as many sections as `[limits] max_thread_sections` allows.
    #[error("at most {0} thread sections may exist")]
    TooMany(usize),
}

impl sqlx::FromRow<'_, sqlx::sqlite::SqliteRow> for SectionRow {
    fn from_row(row: &sqlx::sqlite::SqliteRow) -> Result<Self, sqlx::Error> {
        let has_appearance: bool = row.try_get("has_appearance")?;
        Ok(SectionRow {
            section: ThreadSection {
                id: row.try_get("id")?,
                name: row.try_get("name")?,
                appearance: has_appearance
                    .then(|| -> Result<_, sqlx::Error> {
                        Ok(ThreadSectionAppearance {
                            icon: row.try_get("icon")?,
                            color: row.try_get("color")?,
                        })
                    })
                    .transpose()?,
            },
        })
    }
}

/// A section as a row decodes.
struct SectionRow {
    section: ThreadSection,
}

/// Every transaction here writes: it takes the write lock at once, so two of them wait for each
/// other (`busy_timeout`) instead of one failing when it turns from reading to writing.
const WRITE_TRANSACTION: &str = "BEGIN IMMEDIATE";

const SECTION_COLUMNS: &str = "id, name, has_appearance, icon, color, ordinal";

impl StateDb {
    /// One page of sections in their order, after the section `cursor` names (its id); the
    /// next page's cursor is the last id when more follow. A cursor naming no section gives an
    /// empty page, as the reference's does.
    pub async fn list_sections(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<ThreadSection>, Option<String>), StateError> {
        let pool = self.pool().await?;
        let after = match cursor {
            None => None,
            Some(id) => {
                let ordinal: Option<i64> =
                    sqlx::query_scalar("SELECT ordinal FROM thread_sections WHERE id = $1")
                        .bind(id)
                        .fetch_optional(pool)
                        .await?;
                match ordinal {
                    None => return Ok((Vec::new(), None)),
                    Some(ordinal) => Some((ordinal, id.to_string())),
                }
            }
        };
        let (ordinal, id) = after.unwrap_or((i64::MIN, String::new()));
        let mut rows: Vec<SectionRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SECTION_COLUMNS} FROM thread_sections \
             WHERE ordinal > $1 OR (ordinal = $1 AND id > $2) \
             ORDER BY ordinal, id LIMIT $3"
        )))
        .bind(ordinal)
        .bind(id)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX).saturating_add(1))
        .fetch_all(pool)
        .await?;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = more
            .then(|| rows.last().map(|row| row.section.id.clone()))
            .flatten();
        Ok((rows.into_iter().map(|row| row.section).collect(), next))
    }

    /// Create a section (a new UUIDv7 id, last in the order), unless `max` exist already.
    pub async fn create_section(
        &self,
        name: &str,
        appearance: Option<&ThreadSectionAppearance>,
        max: usize,
    ) -> Result<ThreadSection, SectionError> {
        let mut tx = self
            .pool()
            .await?
            .begin_with(WRITE_TRANSACTION)
            .await
            .map_err(StateError::from)?;
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM thread_sections")
            .fetch_one(&mut *tx)
            .await
            .map_err(StateError::from)?;
        if usize::try_from(count).unwrap_or(usize::MAX) >= max {
            return Err(SectionError::TooMany(max));
        }
        let section = ThreadSection {
            id: uuid::Uuid::now_v7().to_string(),
            name: name.to_string(),
            appearance: appearance.cloned(),
        };
        sqlx::query(
            "INSERT INTO thread_sections (id, name, has_appearance, icon, color, ordinal) \
             SELECT $1, $2, $3, $4, $5, COALESCE(MAX(ordinal), 0) + 1 FROM thread_sections",
        )
        .bind(&section.id)
        .bind(&section.name)
        .bind(appearance.is_some())
        .bind(appearance.and_then(|a| a.icon.clone()))
        .bind(appearance.and_then(|a| a.color.clone()))
        .execute(&mut *tx)
        .await
        .map_err(StateError::from)?;
        tx.commit().await.map_err(StateError::from)?;
        Ok(section)
    }

    /// Rename a section and replace (`Some(Some)`), clear (`Some(None)`) or keep (`None`) its
    /// appearance; `NotFound` when there is none.
    pub async fn update_section(
        &self,
        id: &str,
        name: &str,
        appearance: Option<Option<&ThreadSectionAppearance>>,
    ) -> Result<ThreadSection, SectionError> {
        let pool = self.pool().await?;
        let changed = match appearance {
            None => {
                self.changed(
                    sqlx::query("UPDATE thread_sections SET name = $1 WHERE id = $2")
                        .bind(name.to_string())
                        .bind(id.to_string()),
                )
                .await?
            }
            Some(appearance) => {
                self.changed(
                    sqlx::query(
                        "UPDATE thread_sections SET name = $1, has_appearance = $2, icon = $3, \
                         color = $4 WHERE id = $5",
                    )
                    .bind(name.to_string())
                    .bind(appearance.is_some())
                    .bind(appearance.and_then(|a| a.icon.clone()))
                    .bind(appearance.and_then(|a| a.color.clone()))
                    .bind(id.to_string()),
                )
                .await?
            }
        };
        if !changed {
            return Err(SectionError::NotFound(id.to_string()));
        }
        let row: SectionRow = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SECTION_COLUMNS} FROM thread_sections WHERE id = $1"
        )))
        .bind(id)
        .fetch_one(pool)
        .await
        .map_err(StateError::from)?;
        Ok(row.section)
    }

    /// Delete a section; its threads become unsectioned in the same transaction. `NotFound`
    /// when there is none.
    pub async fn delete_section(&self, id: &str) -> Result<(), SectionError> {
        let mut tx = self
            .pool()
            .await?
            .begin_with(WRITE_TRANSACTION)
            .await
            .map_err(StateError::from)?;
        sqlx::query("DELETE FROM thread_section_members WHERE section_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(StateError::from)?;
        let done = sqlx::query("DELETE FROM thread_sections WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(StateError::from)?;
        if done.rows_affected() == 0 {
            return Err(SectionError::NotFound(id.to_string()));
        }
        tx.commit().await.map_err(StateError::from)?;
        Ok(())
    }

    /// Move a thread into `section` before `before` (appended without it), or out of its
    /// section (`None`); positions stay `0..n` in both sections. The time it entered is kept
    /// when it stays in its section, else `now`.
    pub async fn move_to_section(
        &self,
        thread: &ThreadId,
        section: Option<&str>,
        before: Option<&ThreadId>,
        now: i64,
    ) -> Result<(), SectionError> {
        let mut tx = self
            .pool()
            .await?
            .begin_with(WRITE_TRANSACTION)
            .await
            .map_err(StateError::from)?;
        let indexed: bool =
            sqlx::query_scalar("SELECT EXISTS(SELECT 1 FROM threads WHERE id = $1)")
                .bind(thread.as_str())
                .fetch_one(&mut *tx)
                .await
                .map_err(StateError::from)?;
        if !indexed {
            return Err(SectionError::ThreadNotFound(thread.to_string()));
        }
        if let Some(section) = section {
            let exists: bool =
                sqlx::query_scalar("SELECT EXISTS(SELECT 1 FROM thread_sections WHERE id = $1)")
                    .bind(section)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(StateError::from)?;
            if !exists {
                return Err(SectionError::MoveTargetMissing(section.to_string()));
            }
            if let Some(before) = before {
                let of: Option<String> = sqlx::query_scalar(
                    "SELECT section_id FROM thread_section_members WHERE thread_id = $1",
                )
                .bind(before.as_str())
                .fetch_optional(&mut *tx)
                .await
                .map_err(StateError::from)?;
                if of.as_deref() != Some(section) {
                    return Err(SectionError::BeforeNotInSection {
                        before: before.to_string(),
                        section: section.to_string(),
                    });
                }
            }
        }
        let current: Option<(String, i64)> = sqlx::query_as(
            "SELECT section_id, entered_at FROM thread_section_members WHERE thread_id = $1",
        )
        .bind(thread.as_str())
        .fetch_optional(&mut *tx)
        .await
        .map_err(StateError::from)?;
        sqlx::query("DELETE FROM thread_section_members WHERE thread_id = $1")
            .bind(thread.as_str())
            .execute(&mut *tx)
            .await
            .map_err(StateError::from)?;
        if let Some((left, _)) = &current
            && Some(left.as_str()) != section
        {
            renumber(&mut tx, left, None).await?;
        }
        if let Some(section) = section {
            let entered_at = current
                .as_ref()
                .filter(|(left, _)| left == section)
                .map_or(now, |(_, at)| *at);
            sqlx::query(
                "INSERT INTO thread_section_members (thread_id, section_id, position, entered_at) \
                 VALUES ($1, $2, 0, $3)",
            )
            .bind(thread.as_str())
            .bind(section)
            .bind(entered_at)
            .execute(&mut *tx)
            .await
            .map_err(StateError::from)?;
            renumber(
                &mut tx,
                section,
                Some((thread.as_str(), before.map(ThreadId::as_str))),
            )
            .await?;
        }
        tx.commit().await.map_err(StateError::from)?;
        Ok(())
    }

    /// What decorates these threads, by id: the section each is in and when it entered it
    /// (Unix seconds), and its Git metadata. One read transaction on one connection: a
    /// connection's page cache is reset whenever another one wrote, so a second connection
    /// would read the same pages again.
    pub async fn decorations(
        &self,
        ids: &[ThreadId],
    ) -> Result<
        (
            HashMap<String, (ThreadSection, i64)>,
            HashMap<String, GitInfo>,
        ),
        StateError,
    > {
        let (mut sections, mut git) = (HashMap::new(), HashMap::new());
        if ids.is_empty() {
            return Ok((sections, git));
        }
        let in_list = |head: &str| {
            let mut sql = sqlx::QueryBuilder::<Sqlite>::new(head);
            let mut list = sql.separated(", ");
            for id in ids {
                list.push_bind(id.as_str().to_string());
            }
            sql.push(")");
            sql
        };
        let mut tx = self.pool().await?.begin().await?;
        let mut sql = in_list(
            "SELECT m.thread_id, m.entered_at, s.id, s.name, s.has_appearance, s.icon, s.color, \
             s.ordinal FROM thread_section_members m JOIN thread_sections s \
             ON s.id = m.section_id WHERE m.thread_id IN (",
        );
        for row in sql.build().fetch_all(&mut *tx).await? {
            let section = <SectionRow as sqlx::FromRow<_>>::from_row(&row)?;
            sections.insert(
                row.try_get::<String, _>("thread_id")?,
                (section.section, row.try_get("entered_at")?),
            );
        }
        let mut sql = in_list(
            "SELECT thread_id, sha, branch, origin_url FROM thread_git_info WHERE thread_id IN (",
        );
        for row in sql.build().fetch_all(&mut *tx).await? {
            git.insert(
                row.try_get::<String, _>("thread_id")?,
                GitInfo {
                    sha: row.try_get("sha")?,
                    branch: row.try_get("branch")?,
                    origin_url: row.try_get("origin_url")?,
                },
            );
        }
        tx.commit().await?;
        Ok((sections, git))
    }

    /// Store a thread's Git metadata (it replaces what the rollout's header says).
    pub async fn set_git_info(&self, id: &ThreadId, git: &GitInfo) -> Result<(), StateError> {
        sqlx::query(
            "INSERT INTO thread_git_info (thread_id, sha, branch, origin_url) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (thread_id) DO UPDATE SET \
             sha = excluded.sha, branch = excluded.branch, origin_url = excluded.origin_url",
        )
        .bind(id.as_str())
        .bind(&git.sha)
        .bind(&git.branch)
        .bind(&git.origin_url)
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    /// Remove these threads' rows and everything kept per thread (read states, goals, section
    /// places, Git metadata) in one transaction; the ids that had a row.
    pub async fn delete_threads(&self, ids: &[ThreadId]) -> Result<Vec<ThreadId>, StateError> {
        let mut tx = self.pool().await?.begin_with(WRITE_TRANSACTION).await?;
        let mut had = Vec::new();
        for id in ids {
            if super::delete_with(&mut tx, id.as_str()).await? {
                had.push(id.clone());
            }
        }
        tx.commit().await?;
        Ok(had)
    }

    /// The spawned sub-agents of `root` at any depth, parents before their children.
    pub async fn descendants(&self, root: &ThreadId) -> Result<Vec<ThreadId>, StateError> {
        let mut out: Vec<ThreadId> = Vec::new();
        let mut frontier = vec![root.clone()];
        while let Some(parent) = frontier.pop() {
            let children: Vec<String> = sqlx::query_scalar(
                "SELECT id FROM threads WHERE parent_thread_id = $1 ORDER BY created_at, id",
            )
            .bind(parent.as_str())
            .fetch_all(self.pool().await?)
            .await?;
            for child in children {
                let child = ThreadId::from(child);
                if child != *root && !out.contains(&child) {
                    out.push(child.clone());
                    frontier.push(child);
                }
            }
        }
        Ok(out)
    }
}

/// Give a section's members positions `0..n` in their order; `insert` places one thread (at
/// position 0 now) before another, or last.
async fn renumber(
    tx: &mut sqlx::Transaction<'_, Sqlite>,
    section: &str,
    insert: Option<(&str, Option<&str>)>,
) -> Result<(), StateError> {
    let mut ids: Vec<String> = sqlx::query_scalar(
        "SELECT thread_id FROM thread_section_members WHERE section_id = $1 \
         ORDER BY position, thread_id",
    )
    .bind(section)
    .fetch_all(&mut **tx)
    .await?;
    if let Some((moved, before)) = insert {
        ids.retain(|id| id != moved);
        let at = before
            .and_then(|before| ids.iter().position(|id| id == before))
            .unwrap_or(ids.len());
        ids.insert(at, moved.to_string());
    }
    for (position, id) in ids.iter().enumerate() {
        sqlx::query("UPDATE thread_section_members SET position = $1 WHERE thread_id = $2")
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
