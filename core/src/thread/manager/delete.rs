//! `thread/delete` (docs/protocol.md §7.36): a stored thread and its spawned sub-agents go —
//! unloaded first (a running turn is interrupted, as the reference's shutdown does), then their
//! index rows and everything the state DB keeps per thread, then their rollouts, then their
//! ghost snapshots.
//!
//! The order is what makes a delete cut off half way (a killed daemon) safe: the rows go first,
//! in one transaction, so a thread is never listed without a rollout to read; a rollout left
//! behind is still readable by id, is listed again only if start-up re-reads its day directory,
//! and a second `thread/delete` removes it.

use std::path::Path;

use weft_protocol::ThreadId;

use super::{ThreadManager, Unloaded};
use crate::rollout::find_rollout;
use crate::snapshots::Snapshotter;
use crate::thread::error::CoreError;

impl ThreadManager {
    /// Delete a stored thread (archived or not, loaded or not) and its spawned sub-agents at
    /// any depth. Returns the deleted ids in the order they went — the deepest sub-agents
    /// first, the thread itself last — for one `thread/deleted` each. The [`Subscribers`]
    /// hear [`Unloaded::Archived`] for the thread if it was loaded (everyone is told it is
    /// `notLoaded`, before the response) and [`Unloaded::Closed`] for its loaded sub-agents.
    ///
    /// [`Subscribers`]: super::Subscribers
    pub async fn delete_thread(&self, id: &ThreadId) -> Result<Vec<ThreadId>, CoreError> {
        let home = self.services.config.home.clone();
        let state = self.services.state.clone();
        let descendants = match &state {
            Some(state) => state.descendants(id).await?,
            None => Vec::new(),
        };
        let gate = self.threads.gate(id).await;
        if let Some(handle) = self.get(id)
            && let Ok(snapshot) = handle.snapshot().await
            && snapshot.thread.ephemeral
        {
            return Err(CoreError::Refused(format!(
                "thread is not persisted and cannot be deleted: {id}"
            )));
        }
        let indexed = match &state {
            Some(state) => state.get(id).await?.is_some(),
            None => false,
        };
        if find_rollout(&home, id)?.is_none() && descendants.is_empty() && !indexed {
            return Err(CoreError::NoRollout(id.to_string()));
        }
        // Deepest first, the thread itself last.
        let mut order: Vec<ThreadId> = descendants.iter().rev().cloned().collect();
        order.push(id.clone());
        let mut cwds = Vec::with_capacity(order.len());
        for thread in &order {
            let cwd = match &state {
                Some(state) => state.get(thread).await?.map(|row| row.cwd),
                None => None,
            };
            cwds.push(cwd);
        }

        self.unload_gated(&gate, Unloaded::Archived).await;
        self.close_tree(id).await;
        for child in &descendants {
            self.unload(child, Unloaded::Closed).await;
        }

        if let Some(state) = &state {
            state.delete_threads(&order).await?;
            for thread in &order {
                if let Err(err) = crate::state::attachments::delete_for_thread(state, thread).await
                {
                    tracing::warn!(%thread, %err, "cannot drop the deleted thread's attachments");
                }
            }
        }
        for thread in &order {
            // The thread's own gate is held already; a sub-agent's is taken for its file.
            let _child_gate = if thread == id {
                None
            } else {
                Some(self.threads.gate(thread).await)
            };
            let home = home.clone();
            let thread = thread.clone();
            let index = self.services.history_index.clone();
            tokio::task::spawn_blocking(move || remove_rollout(&home, &thread, &index)).await??;
        }
        let limits = self.services.config.snapshots;
        for (thread, cwd) in order.iter().zip(cwds) {
            let Some(cwd) = cwd else { continue };
            forget_snapshots(Path::new(&cwd), &home, limits, thread).await;
        }
        drop(gate);
        Ok(order)
    }
}

/// Remove a thread's rollout (wherever it is) and make the removal durable, and its history
/// index; nothing when it has none.
fn remove_rollout(
    home: &Path,
    thread: &ThreadId,
    index: &crate::rollout::index::IndexCache,
) -> Result<(), CoreError> {
    let Some(found) = find_rollout(home, thread)? else {
        return Ok(());
    };
    let io = |err: std::io::Error| {
        CoreError::from(crate::rollout::RolloutError::Io {
            path: found.path.clone(),
            source: err,
        })
    };
    // No other daemon may be writing it.
    let file = std::fs::File::open(&found.path).map_err(io)?;
    match file.try_lock() {
        Ok(()) | Err(std::fs::TryLockError::Error(_)) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(CoreError::from(crate::rollout::RolloutError::Locked {
                path: found.path.clone(),
            }));
        }
    }
    std::fs::remove_file(&found.path).map_err(io)?;
    drop(file);
    index.forget(&found.path);
    if let Some(dir) = found.path.parent() {
        std::fs::File::open(dir)
            .and_then(|dir| dir.sync_all())
            .map_err(io)?;
    }
    Ok(())
}

/// Drop a deleted thread's ghost snapshots in the repository of its working directory; a
/// failure (the directory is gone, git fails) is logged and leaves only unreachable refs.
async fn forget_snapshots(
    cwd: &Path,
    home: &Path,
    limits: crate::config::SnapshotsConfig,
    thread: &ThreadId,
) {
    if !cwd.is_dir() {
        return;
    }
    let result = match Snapshotter::locate(cwd, home, limits).await {
        Ok(snapshotter) => snapshotter.forget_thread(thread).await,
        Err(err) => Err(err),
    };
    match result {
        Ok(0) => {}
        Ok(n) => tracing::debug!(%thread, refs = n, "dropped the deleted thread's snapshots"),
        Err(err) => tracing::warn!(%thread, %err, "cannot drop the deleted thread's snapshots"),
    }
}
