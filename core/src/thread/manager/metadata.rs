//! What the state DB adds to a thread (docs/protocol.md §7.36): its section and when it
//! entered it, and the Git metadata `thread/metadata/update` stored — laid over every thread
//! the manager answers with (`thread/read`, `thread/list`, `thread/unarchive`,
//! `thread/resume`) — and the two requests that change them.

use weft_protocol::{GitInfo, Thread, ThreadId, ThreadMetadataGitInfoUpdateParams};

use super::ThreadManager;
use crate::rollout::find_rollout;
use crate::thread::error::CoreError;

impl ThreadManager {
    /// Lay the stored sections and Git metadata over `threads`. A DB failure is logged and
    /// leaves them as they are: the rest of the answer stands.
    pub(crate) async fn decorate(&self, threads: &mut [Thread]) {
        let Some(state) = &self.services.state else {
            return;
        };
        let ids: Vec<ThreadId> = threads.iter().map(|t| t.id.clone()).collect();
        let (sections, git) = match state.decorations(&ids).await {
            Ok(found) => found,
            Err(err) => {
                tracing::warn!(%err, "cannot read the threads' sections and metadata");
                return;
            }
        };
        for thread in threads {
            if let Some((section, entered_at)) = sections.get(thread.id.as_str()) {
                thread.section = Some(section.clone());
                thread.section_entered_at = Some(*entered_at);
            }
            if let Some(git) = git.get(thread.id.as_str()) {
                thread.git_info = Some(git.clone());
            }
        }
    }

    /// `thread/metadata/update`: patch a stored thread's Git metadata (loaded or not, archived
    /// or not) and answer the thread as `thread/read` would. The patch was checked by the
    /// caller (no empty strings).
    pub async fn update_git_info(
        &self,
        id: &ThreadId,
        patch: &ThreadMetadataGitInfoUpdateParams,
    ) -> Result<Thread, CoreError> {
        if let Some(handle) = self.get(id)
            && let Ok(snapshot) = handle.snapshot().await
            && snapshot.thread.ephemeral
        {
            return Err(CoreError::EphemeralMetadata(id.to_string()));
        }
        let _gate = self.threads.gate(id).await;
        if find_rollout(&self.services.config.home, id)?.is_none() {
            return Err(CoreError::NoRollout(id.to_string()));
        }
        let Some(state) = &self.services.state else {
            return Err(CoreError::Refused(
                "thread metadata cannot be stored without the state DB".into(),
            ));
        };
        let current = self.read_thread(id, false).await?;
        let mut git: GitInfo = current.git_info.unwrap_or_default();
        if let Some(sha) = &patch.sha {
            git.sha = sha.clone();
        }
        if let Some(branch) = &patch.branch {
            git.branch = branch.clone();
        }
        if let Some(origin_url) = &patch.origin_url {
            git.origin_url = origin_url.clone();
        }
        state.set_git_info(id, &git).await?;
        let mut thread = self.read_thread(id, false).await?;
        thread.git_info = Some(git);
        Ok(thread)
    }

    /// `thread/section/move` on a thread: an ephemeral loaded thread has no place in a
    /// section (the reference's text); the rest is the state DB's (`StateDb::move_to_section`).
    pub async fn check_section_move(&self, id: &ThreadId) -> Result<(), CoreError> {
        if let Some(handle) = self.get(id)
            && let Ok(snapshot) = handle.snapshot().await
            && snapshot.thread.ephemeral
        {
            return Err(CoreError::Refused(format!(
                "ephemeral thread does not support section moves: {id}"
            )));
        }
        Ok(())
    }
}
