//! The thread index rows the manager writes as rollouts are opened and closed
//! (docs/architecture.md §10): a new thread's row, and the `dirty` mark of a row whose rollout
//! a writer holds.

use weft_protocol::ThreadId;

use super::ThreadManager;
use crate::rollout::BeforeFirstChange;
use crate::state::{StateDb, ThreadRow};

impl ThreadManager {
    /// Index a thread whose rollout a writer now holds (the row stays `dirty` until the actor
    /// closes it).
    pub(super) async fn index(&self, row: &ThreadRow) {
        if let Some(state) = &self.services.state
            && let Err(err) = state.upsert_open(row).await
        {
            tracing::warn!(thread = %row.id, %err, "cannot index the thread");
        }
    }

    /// Mark a thread's row as behind its rollout or level with it (`StateDb::set_dirty`). A
    /// failure is logged: the worst it leaves is a re-index at the next start.
    pub(crate) async fn mark_dirty(&self, id: &ThreadId, dirty: bool) {
        mark(self.services.state.as_ref(), id, dirty).await;
    }

    /// What a writer of thread `id` runs before it first changes the file: mark the row
    /// `dirty` ([`ThreadManager::mark_dirty`]).
    pub(super) fn dirty_before_writing(&self, id: &ThreadId) -> BeforeFirstChange {
        let (state, id) = (self.services.state.clone(), id.clone());
        Box::pin(async move { mark(state.as_ref(), &id, true).await })
    }
}

/// [`ThreadManager::mark_dirty`] with the state DB at hand.
async fn mark(state: Option<&StateDb>, id: &ThreadId, dirty: bool) {
    if let Some(state) = state
        && let Err(err) = state.set_dirty(id, dirty).await
    {
        tracing::warn!(thread = %id, %err, "cannot mark the thread's index row");
    }
}
