//! What a thread keeps on disk, owned by its actor: the rollout writer (none for an ephemeral
//! thread), whether its last flush failed (new turns are refused until one succeeds), and
//! whether the state DB's row is behind the rollout (docs/architecture.md §10).

use std::sync::Arc;

use parking_lot::Mutex;
use weft_protocol::{Thread, ThreadId};

use crate::history::History;
use crate::rollout::index::IndexCache;
use crate::rollout::{RolloutError, RolloutRecord, RolloutWriter};
use crate::state::StateDb;
use crate::thread::error::CoreError;

/// The thread's rollout and the state of its index row.
pub(super) struct Persistence {
    rollout: Option<RolloutWriter>,
    /// The last flush of the rollout failed.
    failed: bool,
    /// The last update of the state DB's row failed: it may be behind the rollout.
    index_behind: bool,
}

impl Persistence {
    pub(super) fn new(rollout: Option<RolloutWriter>) -> Persistence {
        Persistence {
            rollout,
            failed: false,
            index_behind: false,
        }
    }

    /// The writer, for a persistent thread whose rollout is open.
    pub(super) fn writer(&self) -> Option<&RolloutWriter> {
        self.rollout.as_ref()
    }

    /// Whether the thread is persistent (and its rollout still open).
    pub(super) fn is_persistent(&self) -> bool {
        self.rollout.is_some()
    }

    /// Whether the last flush failed.
    pub(super) fn failed(&self) -> bool {
        self.failed
    }

    /// Queue a record (nothing for an ephemeral thread).
    pub(super) fn append(&self, record: RolloutRecord) {
        if let Some(rollout) = &self.rollout {
            rollout.append(record);
        }
    }

    /// Flush the rollout (fsynced when `fsync`). A failure is remembered until a later flush
    /// succeeds (the writer keeps what it could not write and retries it each time).
    pub(super) async fn flush(
        &mut self,
        thread: &ThreadId,
        fsync: bool,
    ) -> Result<(), RolloutError> {
        let Some(rollout) = &self.rollout else {
            return Ok(());
        };
        let result = rollout.flush(fsync).await;
        if let Err(err) = &result {
            tracing::error!(%thread, %err, "cannot write the rollout");
        }
        self.failed = result.is_err();
        result
    }

    /// Before a new turn: a rollout that failed to write must take everything it holds first.
    pub(super) async fn check_writable(&mut self, thread: &ThreadId) -> Result<(), CoreError> {
        if !self.failed {
            return Ok(());
        }
        self.flush(thread, true)
            .await
            .map_err(|source| CoreError::RolloutNotWritable {
                thread: thread.to_string(),
                source,
            })
    }

    /// Keep the state DB's row (updated time, preview) in step with the thread; `true` when
    /// the row is up to date (or there is none to keep).
    pub(super) async fn index(&mut self, state: Option<&StateDb>, thread: &Thread) -> bool {
        let (Some(state), Some(_)) = (state, &self.rollout) else {
            return true;
        };
        let mut indexed = true;
        if let Err(err) = state
            .touch(&thread.id, thread.updated_at, Some(thread.preview.as_str()))
            .await
        {
            tracing::warn!(thread = %thread.id, %err, "cannot update the thread index");
            indexed = false;
        }
        if let Some(recency_at) = thread.recency_at
            && let Err(err) = state.touch_recency(&thread.id, recency_at).await
        {
            tracing::warn!(thread = %thread.id, %err, "cannot update the thread index");
            indexed = false;
        }
        self.index_behind = !indexed;
        indexed
    }

    /// Close the rollout (the history stops journaling to it); once it is all on disk and the
    /// index row is updated, the row is marked level with the file again (a failure leaves
    /// it `dirty`, for the next start to re-index). A long rollout's on-disk history index is
    /// brought level with it, so the next daemon pages it without reading the whole file.
    pub(super) async fn close(
        &mut self,
        state: Option<&StateDb>,
        thread: &Thread,
        history: &Mutex<History>,
        history_index: &Arc<IndexCache>,
    ) {
        if self.rollout.is_none() {
            return;
        }
        // Every turn's end updates the row; only a failed update is left to redo.
        let indexed = !self.index_behind || self.index(state, thread).await;
        let Some(rollout) = self.rollout.take() else {
            return;
        };
        history.lock().detach_journal();
        let path = rollout.path().to_path_buf();
        // A writer that never changed the file never marked the row (`resume_then`); asked
        // once the lines queued before the close are written.
        let probe = rollout.clone();
        let closed = rollout.close().await;
        let changed = probe.changed();
        drop(probe);
        match closed {
            Ok(()) if indexed && changed => {
                if let Some(state) = state
                    && let Err(err) = state.set_dirty(&thread.id, false).await
                {
                    tracing::warn!(thread = %thread.id, %err, "cannot mark the thread's index row");
                }
            }
            Ok(()) => {}
            Err(err) => {
                tracing::error!(thread = %thread.id, %err, "cannot close the rollout");
                return;
            }
        }
        let cache = history_index.clone();
        let remembered = tokio::task::spawn_blocking(move || cache.remember(&path)).await;
        if let Ok(Err(err)) = remembered {
            tracing::warn!(thread = %thread.id, %err, "cannot index the closed rollout");
        }
    }
}
