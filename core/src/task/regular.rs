//! The regular task: a turn of the conversation (`turn/start`, input left over from the last
//! turn, mail that asks for a turn, a goal's continuation), run by the three-layer loop of
//! `turn.rs` (docs/architecture.md §6.1).

use futures::future::BoxFuture;

use super::{TaskKind, TaskStart, ThreadTask};
use crate::turn::{self, TurnContext, TurnEnd, TurnInput};

/// A turn with its first input.
pub struct RegularTask {
    input: TurnInput,
    continuation: bool,
}

impl RegularTask {
    /// A turn that starts with `input`; `TurnInput::Goal` makes it a goal's continuation.
    pub fn new(input: TurnInput) -> RegularTask {
        RegularTask {
            continuation: matches!(input, TurnInput::Goal(_)),
            input,
        }
    }
}

impl ThreadTask for RegularTask {
    fn kind(&self) -> TaskKind {
        TaskKind::Regular
    }

    fn span_name(&self) -> &'static str {
        if self.continuation { "goal" } else { "regular" }
    }

    fn start(&self) -> TaskStart {
        TaskStart {
            records_context: true,
            continuation: self.continuation,
        }
    }

    fn run<'a>(&'a self, ctx: &'a TurnContext) -> BoxFuture<'a, TurnEnd> {
        Box::pin(async move {
            let end = turn::run_task(ctx, self.input.clone()).await;
            // The workspace as the turn left it, when it changed it (docs/architecture.md
            // §5.5).
            if let Some(ghost) = &ctx.tool_turn.ghost {
                ghost.finish().await;
            }
            end
        })
    }

    /// A stopped turn that took a ghost snapshot before its first change takes the one of
    /// its end too (docs/architecture.md §5.5).
    fn abort<'a>(&'a self, ctx: &'a TurnContext) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(ghost) = &ctx.tool_turn.ghost {
                ghost.finish().await;
            }
        })
    }
}
