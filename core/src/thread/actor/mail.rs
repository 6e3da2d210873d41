//! Mail from the thread's agent tree (docs/agents.md §5): a running turn reads it at its next
//! step boundary; an idle thread keeps it for its next turn, or starts one at once when a mail
//! asks for it (`trigger_turn`).

use weft_protocol::{ThreadItem, Turn};

use super::ThreadActor;
use super::start::TaskKind;
use crate::events::ThreadEvent;
use crate::time::{new_item_id, new_turn_id};
use crate::turn::PendingInput;

impl ThreadActor {
    /// The inbox has mail: hand it to the running turn, or keep it, or start a turn.
    pub(super) async fn deliver_mail(&mut self) {
        if !self.inbox.has_pending() {
            return;
        }
        let mut activities = Vec::new();
        for mail in self.inbox.take_all() {
            activities.extend(mail.body.activity);
            if mail.trigger_turn && mail.body.root_turn.is_some() {
                self.mail_root_turn = mail.body.root_turn;
            }
            self.mail_queue.push((mail.body.item, mail.trigger_turn));
        }
        if let Some(active) = &self.active {
            for (item, trigger) in self.mail_queue.drain(..) {
                active.shared.push_mail(item, trigger);
            }
            // The clients see what the mail says in the running turn (v2's
            // `subAgentActivity`); with no turn running there is none to show it in.
            let turn_id = active.turn_id.clone();
            for activity in activities {
                let now = crate::time::now_ms();
                let mut item = ThreadItem::new(activity);
                item.started_at_ms = Some(now);
                self.emit(ThreadEvent::ItemStarted {
                    turn_id: turn_id.clone(),
                    item: item.clone(),
                })
                .await;
                item.completed_at_ms = Some(now);
                self.emit(ThreadEvent::ItemCompleted {
                    turn_id: turn_id.clone(),
                    item,
                })
                .await;
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
        let mut turn = Turn::in_progress(new_turn_id(), None);
        if let Some(root) = self.mail_root_turn.take() {
            turn.root_turn_id = Some(root);
        }
        self.launch_turn(turn, provider, task, None).await;
    }
}
