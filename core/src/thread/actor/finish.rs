//! Ending a task: `turn/interrupt`, the stop (the grace window, then the hard abort, in
//! `crate::task`), and the one place a task's turn is finished (recorded, flushed, indexed,
//! then announced with `turn/completed`), whatever its kind.

use std::time::Instant;

use weft_protocol::{ThreadItem, ThreadItemDetails, Turn, TurnError, TurnItemsView, TurnStatus};

use super::ThreadActor;
use crate::events::{Reply, ThreadEvent};
use crate::model::{ContentItem, ResponseItem};
use crate::rollout::{RolloutRecord, TURN_ABORTED_MARKER};
use crate::thread::error::CoreError;
use crate::thread::handle::{InputMode, TurnOverrides};
use crate::time::now_secs;
use crate::turn::{PendingInput, TurnEnd};

impl ThreadActor {
    pub(super) async fn interrupt(&mut self, turn_id: String, reply: Reply<Result<(), CoreError>>) {
        let Some(active) = &self.active else {
            reply.send(Err(CoreError::NoActiveTurnToInterrupt)).await;
            return;
        };
        if active.turn_id().as_str() != turn_id {
            let active = active.turn_id().to_string();
            reply
                .send(Err(CoreError::InterruptTurnMismatch {
                    expected: turn_id,
                    active,
                }))
                .await;
            return;
        }
        reply.send(Ok(())).await;
        if let Some(active) = self.active.as_mut() {
            active.user_interrupt = true;
        }
        self.abort_active(TurnEnd::Interrupted).await;
    }

    /// Stop the running task ([`RunningTask::stop`](crate::task::RunningTask::stop): the
    /// grace window, then the hard abort) and finish its turn with `end`.
    pub(super) async fn abort_active(&mut self, end: TurnEnd) {
        let Some(active) = self.active.as_mut() else {
            return;
        };
        active.task.stop().await;
        self.finish_turn(Some(end)).await;
    }

    /// The task is over (returned, or stopped): record its end — the items it left open
    /// completed, the interruption marker, the turn's end — flush the rollout, and only then
    /// tell the clients.
    pub(super) async fn finish_turn(&mut self, forced: Option<TurnEnd>) {
        let Some(mut active) = self.active.take() else {
            return;
        };
        // Ended by Weft itself (unload, shutdown, a compaction replacing it), not the user.
        let quiet = forced.is_some() && !active.user_interrupt;
        let end = match forced {
            Some(end) => end,
            None => active.task.join().await,
        };
        let kind = active.task.kind();
        let turn_id = active.turn_id().clone();
        let (mut status, mut error) = match end {
            TurnEnd::Completed => (TurnStatus::Completed, None),
            TurnEnd::Interrupted => (TurnStatus::Interrupted, None),
            TurnEnd::Failed(error) => (TurnStatus::Failed, Some(error)),
        };
        if status == TurnStatus::Interrupted {
            self.history
                .lock()
                .record(ResponseItem::user_message(vec![ContentItem::InputText {
                    text: TURN_ABORTED_MARKER.to_string(),
                }]));
        }
        // A task aborted after the grace period may leave items started: complete them now,
        // so every item a client saw start also completes.
        for item in active.shared().complete_abandoned(crate::time::now_ms()) {
            self.persistence.append(RolloutRecord::ItemCompleted {
                turn_id: turn_id.clone(),
                item: item.clone(),
            });
            self.emit(ThreadEvent::ItemCompleted {
                turn_id: turn_id.clone(),
                item,
            })
            .await;
        }
        let completed_at = now_secs();
        self.thread.updated_at = completed_at;
        let items = active.shared().completed_items();
        let turn = Turn {
            id: turn_id,
            root_turn_id: Some(active.root_turn_id.clone()),
            items,
            items_view: TurnItemsView::Full,
            status,
            error: error.clone(),
            started_at: Some(active.started_at),
            completed_at: Some(completed_at),
            duration_ms: Some(active.started.elapsed().as_millis() as i64),
        };
        let mut turn = turn;
        self.persistence.append(RolloutRecord::TurnEnded {
            turn_id: turn.id.clone(),
            status,
            error: error.clone(),
            completed_at,
            duration_ms: turn.duration_ms,
        });
        // The end of the turn is on disk before any client hears of it; a turn that could not
        // be written is reported failed, whatever it did (docs/architecture.md §10.1).
        if let Err(err) = self.flush_rollout(true).await {
            let failure = not_persisted(&err);
            status = TurnStatus::Failed;
            error = Some(failure.clone());
            turn.status = status;
            turn.error = Some(failure);
        }
        // Only the last turn stays in memory; the earlier ones are on disk and read back from
        // the rollout when a client asks for every turn (`ThreadManager::full_turns`).
        if self.persistence.is_persistent() && !self.persistence.failed() {
            self.turns.clear();
        }
        self.turns.push(turn.clone());
        self.last_activity = Instant::now();
        self.persistence
            .index(self.services.state.as_ref(), &self.thread)
            .await;
        // Before the turn's end is announced: its usage counts toward the goal it pursued
        // (`thread/goal/updated`), and an interrupt or failure pauses the goal.
        let goal_active = self.settle_goal(&active, status, quiet).await;
        let leftover = active.shared().take_pending();
        self.inbox.keep(active.shared().unread_mail());
        if status == TurnStatus::Completed && kind.is_conversation() {
            self.mark_unread(&turn.id).await;
        }
        self.emit(ThreadEvent::StatusChanged(self.status())).await;
        if let Some(error) = &error {
            self.emit(ThreadEvent::Error {
                turn_id: turn.id.clone(),
                error: error.clone(),
                will_retry: false,
            })
            .await;
        }
        let view = if kind.is_conversation() {
            completed_view(turn)
        } else {
            Turn {
                items: Vec::new(),
                items_view: TurnItemsView::NotLoaded,
                ..turn
            }
        };
        self.emit(ThreadEvent::TurnCompleted(view)).await;
        if !leftover.is_empty() && status != TurnStatus::Interrupted {
            self.start_with_leftover(leftover).await;
        }
        // The goal is still active: the next turn starts by itself (unless user input just
        // started one).
        if goal_active && status == TurnStatus::Completed {
            self.continue_goal().await;
        }
        // Mail that asks for a turn and arrived too late for this one starts the next.
        if self.active.is_none() && status != TurnStatus::Interrupted {
            self.start_mail_turn().await;
        }
    }

    /// A completed turn leaves a read durable thread unread from that turn
    /// (`thread/readState/changed`, before the thread goes idle).
    async fn mark_unread(&self, turn_id: &weft_protocol::TurnId) {
        let (Some(state), true) = (&self.services.state, self.persistence.is_persistent()) else {
            return;
        };
        match state.mark_turn_unread(&self.thread.id, turn_id).await {
            Ok(Some(read_state)) => self.emit(ThreadEvent::ReadStateChanged(read_state)).await,
            Ok(None) => {}
            Err(err) => {
                tracing::warn!(thread = %self.thread.id, %err, "cannot update the read state");
            }
        }
    }

    /// Input steered in after the task had decided to finish starts the next turn.
    async fn start_with_leftover(&mut self, leftover: Vec<PendingInput>) {
        let mut input = Vec::new();
        for pending in leftover {
            input.extend(pending.input);
        }
        let (reply, _rx) = Reply::channel();
        Box::pin(self.submit(
            input,
            InputMode::StartIfIdle,
            TurnOverrides::default(),
            None,
            reply,
        ))
        .await;
    }
}

/// The error of a turn whose records could not be written.
fn not_persisted(err: &crate::rollout::RolloutError) -> TurnError {
    TurnError {
        message: format!(
            "the turn could not be saved: {err}; the thread takes no new turn until its \
             rollout can be written again"
        ),
        codex_error_info: Some(weft_protocol::CodexErrorInfo::Other),
        additional_details: None,
        misalignment: None,
    }
}

/// The view of a finished turn that `turn/completed` carries, as the reference sends it:
/// only the final agent message for a completed turn, nothing for an interrupted or failed one.
fn completed_view(mut turn: Turn) -> Turn {
    if turn.status == TurnStatus::Completed {
        let last = turn
            .items
            .iter()
            .rev()
            .find(|i| matches!(i.details, ThreadItemDetails::AgentMessage(_)))
            .cloned();
        turn.items = last.into_iter().collect::<Vec<ThreadItem>>();
        turn.items_view = TurnItemsView::Summary;
    } else {
        turn.items = Vec::new();
        turn.items_view = TurnItemsView::NotLoaded;
    }
    turn
}
