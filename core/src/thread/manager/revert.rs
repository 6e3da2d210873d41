//! `thread/revert` (docs/protocol.md §7.27): the loaded thread's actor cuts its history (and
//! restores its workspace when asked, docs/architecture.md §5.5).

use tokio::sync::oneshot;
use weft_protocol::{ThreadId, TurnId};

use super::ThreadManager;
use crate::thread::error::CoreError;
use crate::thread::handle::{Op, ThreadSnapshot};

impl ThreadManager {
    /// Replace loaded thread `id`'s history with the prefix before turn `before` (and put its
    /// workspace back as it was then when `restore_workspace`); the thread as it is then
    /// (`turns` empty).
    pub async fn revert_thread(
        &self,
        id: &ThreadId,
        before: TurnId,
        restore_workspace: bool,
    ) -> Result<ThreadSnapshot, CoreError> {
        let handle = self
            .get(id)
            .ok_or_else(|| CoreError::ThreadNotFound(id.to_string()))?;
        let (reply, answer) = oneshot::channel();
        handle
            .send(Op::Revert {
                before_turn_id: before,
                restore_workspace,
                reply,
            })
            .await?;
        answer
            .await
            .map_err(|_| CoreError::ThreadNotFound(id.to_string()))?
    }
}
