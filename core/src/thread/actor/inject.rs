//! `thread/inject_items` on the actor (docs/protocol.md §7.36): raw Responses API items join
//! the model-facing history without a turn of their own, as the reference records them.

use super::ThreadActor;
use crate::model::ResponseItem;
use crate::task::TaskKind;
use crate::thread::error::CoreError;

impl ThreadActor {
    /// Append `items` (checked and bounded by the manager) to the history. Idle: the context
    /// messages the model needs first are recorded if they are not yet (developer
    /// instructions, `AGENTS.md`, the environment), then the items, and the rollout is flushed
    /// before the answer. A regular turn running: the items reach its next model request (the
    /// turn records them at its next step, like the mail of its agents; a turn that ends first
    /// leaves them to the next turn's first step). Another task running (a compaction, a
    /// review): refused.
    pub(super) async fn inject_items(&mut self, items: Vec<ResponseItem>) -> Result<(), CoreError> {
        if let Some(active) = &self.active {
            let kind = active.task.kind();
            if kind != TaskKind::Regular {
                let what = match kind {
                    TaskKind::Compact => "compact",
                    TaskKind::Review => "review",
                    TaskKind::Regular => "regular",
                };
                return Err(CoreError::Refused(format!(
                    "cannot inject items while a {what} turn is running"
                )));
            }
            for item in items {
                active.shared().push_mail(item, false);
            }
            return Ok(());
        }
        if !self.instructions_recorded {
            self.record_context();
        }
        {
            let mut history = self.history.lock();
            for item in items {
                history.record(item);
            }
        }
        self.flush_rollout(true).await?;
        Ok(())
    }
}
