//! Starting a review (`review/start`, docs/protocol.md §7.28): answered with the review's turn
//! (carrying the review's label as its user message, as the reference's answer does); a
//! running turn completes as interrupted, then the [`ReviewTask`] runs as a turn of its own.
//! Also the read-only tools such a task runs with ([`read_only_tools`]).

use std::sync::Arc;

use weft_protocol::{
    AskForApproval, ItemId, ReviewTarget, SandboxPolicy, ThreadItem, ThreadItemDetails, Turn,
    UserInput, UserMessageItem,
};

use super::ThreadActor;
use crate::events::Reply;
use crate::review::{review_prompt, user_facing_hint};
use crate::task::ReviewTask;
use crate::thread::error::CoreError;
use crate::time::new_turn_id;
use crate::tools::context::ToolTurn;
use crate::tools::offer::ToolOffer;
use crate::turn::TurnEnd;

impl ThreadActor {
    /// `Op::Review`: answer with the turn, stop what runs, launch the review.
    pub(super) async fn start_review(
        &mut self,
        target: ReviewTarget,
        reply: Reply<Result<Turn, CoreError>>,
    ) {
        let provider = match self.ready_for_turn().await {
            Ok(provider) => provider,
            Err(err) => {
                reply.send(Err(err)).await;
                return;
            }
        };
        let turn = Turn::in_progress(new_turn_id(), None);
        let mut answer = turn.clone();
        // As the reference answers a review: no root turn in the answer.
        answer.root_turn_id = None;
        answer.items = vec![ThreadItem::new(ThreadItemDetails::UserMessage(
            UserMessageItem {
                id: ItemId::from(turn.id.to_string()),
                client_id: None,
                content: vec![UserInput::text(user_facing_hint(&target))],
            },
        ))];
        reply.send(Ok(answer)).await;
        // A thread whose first turn is a review is previewed by the review's request, as by
        // the reference.
        if self.thread.preview.is_empty() {
            self.thread.preview = review_prompt(&target);
        }
        self.abort_active(TurnEnd::Interrupted).await;
        let config = &self.services.config;
        let task = ReviewTask::new(target, config.review, config.review_model.clone());
        self.launch_turn(turn, provider, Arc::new(task), None).await;
    }
}

/// What a read-only task's tools run with (docs/architecture.md §5.5): the turn's, with a
/// read-only sandbox without network and no approval asked, offering what Plan mode offers
/// (no `apply_patch`, no escalation) and none of the families (MCP servers, client-defined,
/// goal and multi-agent tools, `request_user_input`).
pub(super) fn read_only_tools(turn: ToolTurn) -> (ToolTurn, ToolOffer) {
    let turn = ToolTurn {
        approval_policy: AskForApproval::Never,
        sandbox: SandboxPolicy::ReadOnly {
            network_access: false,
        },
        ..turn
    };
    let offer = ToolOffer {
        plan_mode: true,
        ..ToolOffer::default()
    };
    (turn, offer)
}
