//! Where a turn's events go on their way to the client: every one is first noted by the turn's
//! [`OpenItems`](super::open_items::OpenItems), and a completed item is also appended to the
//! rollout. The turn loop's own events take this path through [`record`]; a tool's take it
//! through [`ToolItemSink`], the sink its calls are given.

use std::sync::Arc;

use futures::future::BoxFuture;
use weft_protocol::{ThreadId, TurnId};

use super::TurnContext;
use super::shared::TurnShared;
use crate::events::{
    EventSink, ServerRequestOutcome, ServerRequestParams, SharedSink, ThreadEvent,
};
use crate::rollout::{RolloutRecord, RolloutWriter};
use crate::tools::context::ToolTurn;

/// Note `event` among the turn's items, and append a completed item to the rollout. Returns
/// false when the event must not be sent (the turn's items were sealed by a hard abort).
pub(super) fn record(
    shared: &TurnShared,
    turn_id: &TurnId,
    rollout: Option<&RolloutWriter>,
    event: &ThreadEvent,
) -> bool {
    if !shared.items().observe(event) {
        return false;
    }
    if let ThreadEvent::ItemCompleted { item, .. } = event
        && let Some(rollout) = rollout
    {
        rollout.append(RolloutRecord::ItemCompleted {
            turn_id: turn_id.clone(),
            item: item.clone(),
        });
    }
    true
}

/// The tool context for one call: the turn's, with a sink that records the items the tool
/// starts and completes among the turn's items (so they are part of the finished turn, and
/// completed if the task is aborted).
pub(super) fn tool_turn(ctx: &TurnContext) -> ToolTurn {
    let mut turn = ctx.tool_turn.clone();
    turn.sink = Arc::new(ToolItemSink {
        inner: ctx.sink.clone(),
        shared: ctx.shared.clone(),
        turn_id: ctx.turn_id.clone(),
        rollout: ctx.rollout.clone(),
    });
    turn
}

impl TurnContext {
    /// What a command run in this turn from outside the model's tool calls (the user's shell
    /// command, `task/user_shell.rs`) runs with: the tools' context, its items recorded among
    /// the turn's.
    pub(crate) fn item_tool_turn(&self) -> ToolTurn {
        tool_turn(self)
    }
}

/// Forwards a tool's events, recording its items as the turn loop's own are (see [`record`]).
struct ToolItemSink {
    inner: SharedSink,
    shared: Arc<TurnShared>,
    turn_id: TurnId,
    rollout: Option<RolloutWriter>,
}

impl EventSink for ToolItemSink {
    fn emit<'a>(&'a self, thread: &'a ThreadId, event: ThreadEvent) -> BoxFuture<'a, ()> {
        // The guardian's decisions are part of the thread's record (docs/protocol.md §9.8).
        if let (ThreadEvent::GuardianReviewCompleted(review), Some(rollout)) =
            (&event, self.rollout.as_ref())
        {
            rollout.append(RolloutRecord::GuardianReview(review.clone()));
        }
        if !record(&self.shared, &self.turn_id, self.rollout.as_ref(), &event) {
            return Box::pin(std::future::ready(()));
        }
        self.inner.emit(thread, event)
    }

    fn request<'a>(
        &'a self,
        thread: &'a ThreadId,
        params: ServerRequestParams,
    ) -> BoxFuture<'a, ServerRequestOutcome> {
        self.inner.request(thread, params)
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;
    use weft_protocol::{ItemId, PlanItem, ThreadItem, ThreadItemDetails};

    use super::*;

    #[tokio::test]
    async fn a_tool_item_completes_once_even_after_a_hard_abort() {
        // Keeps what reaches the client.
        let (client, mut seen) = mpsc::unbounded_channel();
        let shared = Arc::new(TurnShared::default());
        let turn_id = TurnId::from("t".to_string());
        let sink = ToolItemSink {
            inner: Arc::new(crate::events::ChannelSink(client)),
            shared: shared.clone(),
            turn_id: turn_id.clone(),
            rollout: None,
        };
        let thread = ThreadId::from("th".to_string());
        let item = ThreadItem::from(PlanItem {
            id: ItemId::from("p1".to_string()),
            text: String::new(),
        });
        sink.emit(
            &thread,
            ThreadEvent::ItemStarted {
                turn_id: turn_id.clone(),
                item: item.clone(),
            },
        )
        .await;
        // The actor aborted the task: the item completes from there...
        let abandoned = shared.complete_abandoned(1);
        assert_eq!(abandoned.len(), 1);
        // ...and the aborted tool's own late completion does not reach the client.
        sink.emit(
            &thread,
            ThreadEvent::ItemCompleted {
                turn_id,
                item: item.clone(),
            },
        )
        .await;
        assert!(matches!(
            seen.try_recv(),
            Ok(ThreadEvent::ItemStarted { .. })
        ));
        assert!(seen.try_recv().is_err());
        let items = shared.completed_items();
        assert_eq!(items.len(), 1);
        assert!(matches!(&items[0].details, ThreadItemDetails::Plan(_)));
    }
}
