//! Per-thread state kept beside the index (docs/protocol.md §7.26): read receipts with their
//! revisions (`thread_read_states`; goals, `thread_goals`, are in `goals.rs`). Unlike the
//! `threads` rows these are not derived from the rollouts; a rebuild keeps them (and drops
//! those of threads whose rollout is gone).

use std::collections::BTreeMap;

use sqlx::Row;
use weft_protocol::{
    ThreadId, ThreadReadState, ThreadReadStateOperation, ThreadUnreadPosition, TurnId,
};

use super::{StateDb, StateError};

#[cfg(test)]
mod tests;

/// Why a read state update was refused.
#[derive(Debug, thiserror::Error)]
pub enum ReadStateError {
    /// `expectedRevision` is not the current revision (the current state is attached).
    #[error("read state changed")]
    Conflict(ThreadReadState),
    /// The DB failed.
    #[error(transparent)]
    State(#[from] StateError),
}

fn new_revision() -> String {
    uuid::Uuid::now_v7().to_string()
}

fn decode_read_state(
    thread_id: &ThreadId,
    row: Option<sqlx::sqlite::SqliteRow>,
) -> Result<ThreadReadState, StateError> {
    let Some(row) = row else {
        return Ok(ThreadReadState::initial(thread_id));
    };
    let kind: Option<String> = row.try_get("first_unread")?;
    let turn: Option<String> = row.try_get("first_unread_turn_id")?;
    let first_unread = match (kind.as_deref(), turn) {
        (Some("threadStart"), _) => Some(ThreadUnreadPosition::ThreadStart),
        (Some("turn"), Some(turn_id)) => Some(ThreadUnreadPosition::Turn {
            turn_id: TurnId::from(turn_id),
        }),
        _ => None,
    };
    Ok(ThreadReadState {
        first_unread,
        revision: row.try_get("revision")?,
    })
}

fn encode_position(
    position: Option<&ThreadUnreadPosition>,
) -> (Option<&'static str>, Option<String>) {
    match position {
        None => (None, None),
        Some(ThreadUnreadPosition::ThreadStart) => (Some("threadStart"), None),
        Some(ThreadUnreadPosition::Turn { turn_id }) => (Some("turn"), Some(turn_id.to_string())),
    }
}

impl StateDb {
    /// A thread's read state (`initial:<id>`, read, when nobody marked it yet).
    pub async fn read_state(&self, thread_id: &ThreadId) -> Result<ThreadReadState, StateError> {
        let row = sqlx::query(
            "SELECT first_unread, first_unread_turn_id, revision FROM thread_read_states \
             WHERE thread_id = $1",
        )
        .bind(thread_id.as_str())
        .fetch_optional(self.pool().await?)
        .await?;
        decode_read_state(thread_id, row)
    }

    /// The read states of several threads, by id.
    pub async fn read_states(
        &self,
        ids: &[ThreadId],
    ) -> Result<BTreeMap<String, ThreadReadState>, StateError> {
        if ids.is_empty() {
            return Ok(BTreeMap::new());
        }
        // One statement for the page (one round trip to SQLite's thread, not one per thread).
        let mut sql = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "SELECT thread_id, first_unread, first_unread_turn_id, revision \
             FROM thread_read_states WHERE thread_id IN (",
        );
        let mut list = sql.separated(", ");
        for id in ids {
            list.push_bind(id.as_str().to_string());
        }
        sql.push(")");
        let mut stored = BTreeMap::new();
        for row in sql.build().fetch_all(self.pool().await?).await? {
            stored.insert(row.try_get::<String, _>("thread_id")?, row);
        }
        ids.iter()
            .map(|id| {
                let state = decode_read_state(id, stored.remove(id.as_str()))?;
                Ok((id.to_string(), state))
            })
            .collect()
    }

    /// Apply a client's read/unread mark if `expected_revision` is the current revision; the
    /// new state has a new revision.
    pub async fn update_read_state(
        &self,
        thread_id: &ThreadId,
        operation: ThreadReadStateOperation,
        expected_revision: &str,
    ) -> Result<ThreadReadState, ReadStateError> {
        let position = match operation {
            ThreadReadStateOperation::Read => None,
            ThreadReadStateOperation::Unread => Some(ThreadUnreadPosition::ThreadStart),
        };
        let state = ThreadReadState {
            first_unread: position,
            revision: new_revision(),
        };
        if self
            .replace_read_state(thread_id, &state, expected_revision)
            .await?
        {
            Ok(state)
        } else {
            Err(ReadStateError::Conflict(self.read_state(thread_id).await?))
        }
    }

    /// A turn completed: a read thread becomes unread from that turn (new revision). `None`
    /// when the thread already was unread (its first unread position stays).
    pub async fn mark_turn_unread(
        &self,
        thread_id: &ThreadId,
        turn_id: &TurnId,
    ) -> Result<Option<ThreadReadState>, StateError> {
        let current = self.read_state(thread_id).await?;
        if current.first_unread.is_some() {
            return Ok(None);
        }
        let state = ThreadReadState {
            first_unread: Some(ThreadUnreadPosition::Turn {
                turn_id: turn_id.clone(),
            }),
            revision: new_revision(),
        };
        let done = self
            .replace_read_state(thread_id, &state, &current.revision)
            .await?;
        Ok(done.then_some(state))
    }

    /// Write `state` when the current revision is `expected`; `false` when it is not.
    async fn replace_read_state(
        &self,
        thread_id: &ThreadId,
        state: &ThreadReadState,
        expected: &str,
    ) -> Result<bool, StateError> {
        let (kind, turn) = encode_position(state.first_unread.as_ref());
        let initial = ThreadReadState::initial(thread_id).revision;
        let mut tx = self.pool().await?.begin().await?;
        // The row of a never-marked thread holds its initial revision.
        sqlx::query(
            "INSERT INTO thread_read_states (thread_id, first_unread, first_unread_turn_id, \
             revision) VALUES ($1, NULL, NULL, $2) ON CONFLICT (thread_id) DO NOTHING",
        )
        .bind(thread_id.as_str())
        .bind(&initial)
        .execute(&mut *tx)
        .await?;
        let done = sqlx::query(
            "UPDATE thread_read_states SET first_unread = $1, first_unread_turn_id = $2, \
             revision = $3 WHERE thread_id = $4 AND revision = $5",
        )
        .bind(kind)
        .bind(turn)
        .bind(&state.revision)
        .bind(thread_id.as_str())
        .bind(expected)
        .execute(&mut *tx)
        .await?;
        let matched = done.rows_affected() > 0;
        if matched {
            tx.commit().await?;
        } else {
            tx.rollback().await?;
        }
        Ok(matched)
    }
}
