//! The compaction task (`thread/compact/start`, docs/architecture.md §9.2): a turn of its own
//! that input cannot steer, in which the compaction driver (`turn/compaction.rs`) rebuilds the
//! history around a summary. It adds no context messages: the rebuilt history carries them.

use futures::future::BoxFuture;

use super::{TaskKind, TaskStart, ThreadTask};
use crate::turn::{self, TurnContext, TurnEnd};

/// A manual compaction.
pub struct CompactTask;

impl ThreadTask for CompactTask {
    fn kind(&self) -> TaskKind {
        TaskKind::Compact
    }

    fn span_name(&self) -> &'static str {
        "compact"
    }

    fn start(&self) -> TaskStart {
        TaskStart {
            records_context: false,
            continuation: false,
        }
    }

    fn run<'a>(&'a self, ctx: &'a TurnContext) -> BoxFuture<'a, TurnEnd> {
        Box::pin(turn::run_compact_task(ctx))
    }
}
