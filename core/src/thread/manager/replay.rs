//! Stored threads read through their rollout's index (`rollout::lean`): a cold resume parses
//! only what the thread needs to run, and the items of earlier turns are read back from the
//! file when a client asks for every turn in full.

use std::path::{Path, PathBuf};

use weft_protocol::{ThreadId, Turn};

use super::ThreadManager;
use crate::rollout::index::RolloutIndex;
use crate::rollout::lean::{complete_turns, needs_items, replay_from_index, summary_from_index};
use crate::rollout::{Replay, RolloutError, find_rollout};
use crate::thread::error::CoreError;
use crate::thread::handle::Op;

impl ThreadManager {
    /// The thread of a rollout, with its last turn only (blocking work on the
    /// blocking pool; the index stays cached for the history pages that usually follow).
    pub(super) async fn lean_replay(&self, path: &Path) -> Result<Replay, CoreError> {
        self.replay_with(path, replay_from_index).await
    }

    /// The thread of a rollout for a reader: [`ThreadManager::lean_replay`] without the model
    /// history, the last turn a summary (`lean::summary_from_index`).
    pub(super) async fn lean_summary(&self, path: &Path) -> Result<Replay, CoreError> {
        self.replay_with(path, summary_from_index).await
    }

    async fn replay_with(
        &self,
        path: &Path,
        replay: fn(&RolloutIndex) -> Result<Replay, RolloutError>,
    ) -> Result<Replay, CoreError> {
        let cache = self.services.history_index.clone();
        let owned = path.to_path_buf();
        let replay = tokio::task::spawn_blocking(move || {
            let mut out = None;
            // The last turns will do: a big thread resumes from its index's small tail.
            cache.with_recent(&owned, |index| {
                out = Some(replay(index)?);
                Ok(())
            })?;
            out.ok_or_else(|| RolloutError::io(&owned, std::io::Error::other("no index")))
        })
        .await
        .map_err(|err| RolloutError::io(path, std::io::Error::other(err)))??;
        Ok(replay)
    }

    /// Every turn of thread `id`, whole: a loaded thread holds its last turn, the file has the
    /// others and their items (read after the thread's queued lines are written). An ephemeral
    /// thread has no file and keeps every turn whole: its turns come back as they are.
    pub async fn full_turns(
        &self,
        id: &ThreadId,
        turns: Vec<Turn>,
    ) -> Result<Vec<Turn>, CoreError> {
        if let Some(handle) = self.get(id) {
            let (tx, rx) = tokio::sync::oneshot::channel();
            if handle.send(Op::Flush { reply: tx }).await.is_ok() {
                let _ = rx.await;
            }
        }
        let Some(found) = find_rollout(&self.services.config.home, id)? else {
            return if needs_items(&turns) {
                Err(CoreError::NoRollout(id.to_string()))
            } else {
                Ok(turns)
            };
        };
        self.full_turns_at(found.path, turns).await
    }

    /// [`ThreadManager::full_turns`] of a rollout already found and written out.
    pub(super) async fn full_turns_at(
        &self,
        path: PathBuf,
        turns: Vec<Turn>,
    ) -> Result<Vec<Turn>, CoreError> {
        let cache = self.services.history_index.clone();
        let owned = path.clone();
        let turns = tokio::task::spawn_blocking(move || {
            let mut out = None;
            cache.with_index(&owned, |index| {
                out = Some(complete_turns(index, turns)?);
                Ok(())
            })?;
            out.ok_or_else(|| RolloutError::io(&owned, std::io::Error::other("no index")))
        })
        .await
        .map_err(|err| RolloutError::io(&path, std::io::Error::other(err)))??;
        Ok(turns)
    }
}
