//! Mail from the thread's agent tree (docs/agents.md §5): a running turn reads it at its next
//! step boundary; an idle thread keeps it for its next turn, or starts one at once when a mail
//! asks for it (`trigger_turn`). [`Inbox`] owns the mailbox and what it holds back.

use std::sync::Arc;

use weft_protocol::{SubAgentActivityItem, ThreadItem, Turn, TurnId};

use super::ThreadActor;
use crate::agents::{AgentMail, MailboxReceiver};
use crate::events::ThreadEvent;
use crate::model::ResponseItem;
use crate::task::RegularTask;
use crate::time::{new_item_id, new_turn_id};
use crate::turn::{PendingInput, TurnInput, TurnShared};

/// The thread's mailbox and the mail no turn has read yet.
pub(super) struct Inbox {
    receiver: MailboxReceiver<AgentMail>,
    /// Mail received while idle that no turn has read yet, with whether it asks for one.
    queue: Vec<(ResponseItem, bool)>,
    /// The sender's turn of the latest mail that asks for a turn (the turn it starts gets it
    /// as `rootTurnId`).
    root_turn: Option<TurnId>,
    /// The last sequence number received (the mailbox's read marks, docs/agents.md §6.2).
    received: u64,
}

impl Inbox {
    pub(super) fn new(receiver: MailboxReceiver<AgentMail>) -> Inbox {
        Inbox {
            receiver,
            queue: Vec::new(),
            root_turn: None,
            received: 0,
        }
    }

    /// Mail arrived.
    pub(super) async fn changed(&mut self) {
        self.receiver.changed().await;
    }

    /// Queue what the mailbox holds; what it shows the clients, or `None` when it was empty.
    fn receive(&mut self) -> Option<Vec<SubAgentActivityItem>> {
        if !self.receiver.has_pending() {
            return None;
        }
        let mut activities = Vec::new();
        for mail in self.receiver.take_all() {
            self.received = self.received.max(mail.seq);
            activities.extend(mail.body.activity);
            if mail.trigger_turn && mail.body.root_turn.is_some() {
                self.root_turn = mail.body.root_turn;
            }
            self.queue.push((mail.body.item, mail.trigger_turn));
        }
        Some(activities)
    }

    /// Hand the queued mail to a running turn (read at its next step).
    pub(super) fn hand_to(&mut self, shared: &TurnShared) {
        for (item, trigger) in self.queue.drain(..) {
            shared.push_mail(item, trigger);
        }
        self.receiver.mark_handed(self.received);
    }

    /// Keep mail a turn did not read for the next one.
    pub(super) fn keep(&mut self, unread: Vec<(ResponseItem, bool)>) {
        self.queue.extend(unread);
    }

    /// Whether queued mail asks for a turn.
    fn wants_turn(&self) -> bool {
        self.queue.iter().any(|(_, trigger)| *trigger)
    }
}

impl ThreadActor {
    /// The inbox has mail: hand it to the running turn, or keep it, or start a turn.
    pub(super) async fn deliver_mail(&mut self) {
        let Some(activities) = self.inbox.receive() else {
            return;
        };
        if let Some(active) = &self.active {
            self.inbox.hand_to(active.shared());
            // The clients see what the mail says in the running turn (v2's
            // `subAgentActivity`); with no turn running there is none to show it in.
            let turn_id = active.turn_id().clone();
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
        if self.active.is_some() || !self.inbox.wants_turn() {
            return;
        }
        let provider = match self.ready_for_turn().await {
            Ok(provider) => provider,
            Err(err) => {
                tracing::warn!(thread = %self.thread.id, %err, "mail cannot start a turn");
                return;
            }
        };
        let task = RegularTask::new(TurnInput::User(PendingInput {
            item_id: new_item_id(),
            input: Vec::new(),
            client_id: None,
        }));
        let mut turn = Turn::in_progress(new_turn_id(), None);
        if let Some(root) = self.inbox.root_turn.take() {
            turn.root_turn_id = Some(root);
        }
        self.launch_turn(turn, provider, Arc::new(task), None).await;
    }
}
