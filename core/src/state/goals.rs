//! Goals (`thread_goals`, at most one per thread; docs/protocol.md §7.26): what the clients set
//! with `thread/goal/set|clear`, what the model changes with its goal tools, and the accounting
//! of the turns that pursue a goal. Every change is one SQL statement, so a client's `set` and a
//! turn's accounting never lose each other's write.

use sqlx::Row;
use weft_protocol::{ThreadGoal, ThreadGoalStatus, ThreadId, wire_name};

use super::{SqliteQuery, StateDb, StateError};

#[cfg(test)]
mod tests;

/// What `thread/goal/set` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoalUpdate {
    /// A new objective (replaces the goal unless it is the current objective).
    pub objective: Option<String>,
    /// A new status.
    pub status: Option<ThreadGoalStatus>,
    /// A new token budget.
    pub token_budget: Option<i64>,
}

/// Why a goal update was refused.
#[derive(Debug, thiserror::Error)]
pub enum GoalError {
    /// An objective that is empty once trimmed.
    #[error("goal objective must not be empty")]
    EmptyObjective,
    /// A status or budget change for a thread without a goal.
    #[error("cannot update goal for thread {0}: no goal exists")]
    NoGoal(ThreadId),
    /// The DB failed.
    #[error(transparent)]
    State(#[from] StateError),
}

/// A goal as `thread/goal/set` left it, and the one it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoalSet {
    /// The goal before (`None` when the thread had none).
    pub previous: Option<ThreadGoal>,
    /// The goal as stored now.
    pub goal: ThreadGoal,
}

/// The columns a goal is read from, in [`decode_goal`]'s order.
const GOAL_COLUMNS: &str =
    "objective, status, token_budget, tokens_used, time_used_seconds, created_at, updated_at";

fn decode_goal(
    thread_id: &ThreadId,
    row: &sqlx::sqlite::SqliteRow,
) -> Result<ThreadGoal, StateError> {
    let status: String = row.try_get("status")?;
    let status = serde_json::from_value(serde_json::Value::String(status)).map_err(|source| {
        StateError::Corrupt {
            id: thread_id.to_string(),
            source,
        }
    })?;
    Ok(ThreadGoal {
        thread_id: thread_id.clone(),
        objective: row.try_get("objective")?,
        status,
        token_budget: row.try_get("token_budget")?,
        tokens_used: row.try_get("tokens_used")?,
        time_used_seconds: row.try_get("time_used_seconds")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn status_name(status: ThreadGoalStatus) -> String {
    wire_name(&status).unwrap_or_default()
}

/// A new goal: `status`, no usage yet, created `now`.
fn new_goal(
    thread_id: &ThreadId,
    objective: String,
    status: ThreadGoalStatus,
    token_budget: Option<i64>,
    now: i64,
) -> ThreadGoal {
    ThreadGoal {
        thread_id: thread_id.clone(),
        objective,
        status,
        token_budget,
        tokens_used: 0,
        time_used_seconds: 0,
        created_at: now,
        updated_at: now,
    }
}

impl StateDb {
    /// The goal row `query` reads or returns, if any.
    async fn fetch_goal(
        &self,
        thread_id: &ThreadId,
        query: SqliteQuery<'_>,
    ) -> Result<Option<ThreadGoal>, StateError> {
        let row = query.fetch_optional(self.pool().await?).await?;
        row.map(|row| decode_goal(thread_id, &row)).transpose()
    }

    /// A thread's goal.
    pub async fn goal(&self, thread_id: &ThreadId) -> Result<Option<ThreadGoal>, StateError> {
        let query = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {GOAL_COLUMNS} FROM thread_goals WHERE thread_id = $1"
        )))
        .bind(thread_id.as_str());
        self.fetch_goal(thread_id, query).await
    }

    /// A thread's goal, `None` when the index has no such thread: both read in one
    /// transaction on one connection (a connection whose pages another one's write made stale
    /// reads them again, so two connections would read twice).
    pub async fn indexed_goal(
        &self,
        thread_id: &ThreadId,
    ) -> Result<Option<Option<ThreadGoal>>, StateError> {
        let mut tx = self.pool().await?.begin().await?;
        let known: Option<i64> = sqlx::query_scalar("SELECT 1 FROM threads WHERE id = $1")
            .bind(thread_id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        if known.is_none() {
            return Ok(None);
        }
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {GOAL_COLUMNS} FROM thread_goals WHERE thread_id = $1"
        )))
        .bind(thread_id.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(
            row.map(|row| decode_goal(thread_id, &row)).transpose()?,
        ))
    }

    /// Create, replace or update a thread's goal (`now` in Unix seconds): a new objective makes
    /// a new goal (`active` unless a status is given, counters at zero); the current objective
    /// or none updates the goal's status and budget.
    pub async fn set_goal(
        &self,
        thread_id: &ThreadId,
        update: GoalUpdate,
        now: i64,
    ) -> Result<GoalSet, GoalError> {
        if update
            .objective
            .as_deref()
            .is_some_and(|o| o.trim().is_empty())
        {
            return Err(GoalError::EmptyObjective);
        }
        let previous = self.goal(thread_id).await?;
        let status = update.status.unwrap_or(ThreadGoalStatus::Active);
        let goal = match (previous.clone(), update.objective) {
            (Some(goal), Some(objective)) if objective != goal.objective => {
                new_goal(thread_id, objective, status, update.token_budget, now)
            }
            (Some(mut goal), _) => {
                goal.status = update.status.unwrap_or(goal.status);
                goal.token_budget = update.token_budget.or(goal.token_budget);
                goal.updated_at = now;
                goal
            }
            (None, Some(objective)) => {
                new_goal(thread_id, objective, status, update.token_budget, now)
            }
            (None, None) => return Err(GoalError::NoGoal(thread_id.clone())),
        };
        self.write_goal(&goal).await?;
        Ok(GoalSet { previous, goal })
    }

    async fn write_goal(&self, goal: &ThreadGoal) -> Result<(), StateError> {
        sqlx::query(
            "INSERT INTO thread_goals (thread_id, objective, status, token_budget, tokens_used, \
             time_used_seconds, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (thread_id) DO UPDATE SET objective = excluded.objective, \
             status = excluded.status, token_budget = excluded.token_budget, \
             tokens_used = excluded.tokens_used, time_used_seconds = excluded.time_used_seconds, \
             created_at = excluded.created_at, updated_at = excluded.updated_at",
        )
        .bind(goal.thread_id.as_str())
        .bind(&goal.objective)
        .bind(status_name(goal.status))
        .bind(goal.token_budget)
        .bind(goal.tokens_used)
        .bind(goal.time_used_seconds)
        .bind(goal.created_at)
        .bind(goal.updated_at)
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    /// Remove a thread's goal. `false` when it had none.
    pub async fn clear_goal(&self, thread_id: &ThreadId) -> Result<bool, StateError> {
        self.changed(
            sqlx::query("DELETE FROM thread_goals WHERE thread_id = $1").bind(thread_id.as_str()),
        )
        .await
    }

    /// The model's `create_goal`: a new active goal when the thread has none or its goal is
    /// `complete` (then replaced, counters at zero). `None` when the thread has an unfinished
    /// goal, which is left as it is.
    pub async fn create_goal_unless_unfinished(
        &self,
        thread_id: &ThreadId,
        objective: &str,
        token_budget: Option<i64>,
        now: i64,
    ) -> Result<Option<ThreadGoal>, StateError> {
        let goal = new_goal(
            thread_id,
            objective.to_string(),
            ThreadGoalStatus::Active,
            token_budget,
            now,
        );
        let done = sqlx::query(
            "INSERT INTO thread_goals (thread_id, objective, status, token_budget, tokens_used, \
             time_used_seconds, created_at, updated_at) VALUES ($1, $2, $3, $4, 0, 0, $5, $5) \
             ON CONFLICT (thread_id) DO UPDATE SET objective = excluded.objective, \
             status = excluded.status, token_budget = excluded.token_budget, tokens_used = 0, \
             time_used_seconds = 0, created_at = excluded.created_at, \
             updated_at = excluded.updated_at WHERE thread_goals.status = $6",
        )
        .bind(thread_id.as_str())
        .bind(&goal.objective)
        .bind(status_name(goal.status))
        .bind(goal.token_budget)
        .bind(now)
        .bind(status_name(ThreadGoalStatus::Complete))
        .execute(self.pool().await?)
        .await?;
        Ok((done.rows_affected() > 0).then_some(goal))
    }

    /// The model's `update_goal`: set the goal's status, first adding `tokens` and `seconds`
    /// (the running turn's usage since it was last counted) when the goal is active. Marking
    /// anything but `complete` while that usage reaches the budget makes it `budgetLimited`
    /// instead: the budget takes precedence. `None` when the thread has no goal.
    pub async fn mark_goal(
        &self,
        thread_id: &ThreadId,
        status: ThreadGoalStatus,
        tokens: i64,
        seconds: i64,
        now: i64,
    ) -> Result<Option<ThreadGoal>, StateError> {
        let query = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE thread_goals SET \
             tokens_used = tokens_used + CASE WHEN status = $2 THEN $3 ELSE 0 END, \
             time_used_seconds = time_used_seconds + CASE WHEN status = $2 THEN $4 ELSE 0 END, \
             status = CASE WHEN $5 <> $6 AND status = $2 AND token_budget IS NOT NULL \
                 AND tokens_used + $3 >= token_budget THEN $7 ELSE $5 END, \
             updated_at = $8 WHERE thread_id = $1 RETURNING {GOAL_COLUMNS}"
        )))
        .bind(thread_id.as_str())
        .bind(status_name(ThreadGoalStatus::Active))
        .bind(tokens)
        .bind(seconds)
        .bind(status_name(status))
        .bind(status_name(ThreadGoalStatus::Complete))
        .bind(status_name(ThreadGoalStatus::BudgetLimited))
        .bind(now);
        self.fetch_goal(thread_id, query).await
    }

    /// A turn that pursued the active goal ended: add its `tokens` and `seconds`. The goal
    /// becomes `budgetLimited` when its usage reaches the budget, else `paused` when `pause`.
    /// `None` (nothing written) when the thread has no active goal.
    pub async fn account_goal(
        &self,
        thread_id: &ThreadId,
        tokens: i64,
        seconds: i64,
        pause: bool,
        now: i64,
    ) -> Result<Option<ThreadGoal>, StateError> {
        let query = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE thread_goals SET tokens_used = tokens_used + $2, \
             time_used_seconds = time_used_seconds + $3, \
             status = CASE WHEN token_budget IS NOT NULL AND tokens_used + $2 >= token_budget \
                 THEN $4 WHEN $5 THEN $6 ELSE status END, \
             updated_at = $7 WHERE thread_id = $1 AND status = $8 RETURNING {GOAL_COLUMNS}"
        )))
        .bind(thread_id.as_str())
        .bind(tokens)
        .bind(seconds)
        .bind(status_name(ThreadGoalStatus::BudgetLimited))
        .bind(pause)
        .bind(status_name(ThreadGoalStatus::Paused))
        .bind(now)
        .bind(status_name(ThreadGoalStatus::Active));
        self.fetch_goal(thread_id, query).await
    }
}
