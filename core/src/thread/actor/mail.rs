//! Mail from the thread's agent tree (docs/agents.md §5): a running turn reads it at its next
//! step boundary; an idle thread keeps it for its next turn, or starts one at once when a mail
//! asks for it (`trigger_turn`).

use weft_protocol::Turn;

use super::ThreadActor;
use super::start::TaskKind;
use crate::time::{new_item_id, new_turn_id};
use crate::turn::PendingInput;

impl ThreadActor {
    /// The inbox has mail: hand it to the running turn, or keep it, or start a turn.
    pub(super) async fn deliver_mail(&mut self) {
        if !self.inbox.has_pending() {
            return;
        }
        for mail in self.inbox.take_all() {
            self.mail_queue.push((mail.body, mail.trigger_turn));
        }
        if let Some(active) = &self.active {
            for (item, trigger) in self.mail_queue.drain(..) {
                active.shared.push_mail(item, trigger);
            }
            return;
        }
        self.start_mail_turn().await;
    }

    /// On an idle thread, start a turn for queued mail that asks for one (it has no
    /// userMessage item: the mail is its input).
    pub(super) async fn start_mail_turn(&mut self) {
        if self.active.is_some() || !self.mail_queue.iter().any(|(_, trigger)| *trigger) {
            return;
        }
        let provider = match self.ready_for_turn().await {
            Ok(provider) => provider,
            Err(err) => {
                tracing::warn!(thread = %self.thread.id, %err, "mail cannot start a turn");
                return;
            }
        };
        let task = TaskKind::Regular(PendingInput {
            item_id: new_item_id(),
            input: Vec::new(),
            client_id: None,
        });
        self.launch_turn(Turn::in_progress(new_turn_id(), None), provider, task, None)
            .await;
    }
}
