//! The review task (`review/start`, docs/protocol.md §7.28): a turn input cannot steer
//! (`NonSteerableTurnKind::Review`), run read-only whatever the thread's sandbox
//! ([`ThreadTask::read_only`]), in which a reviewer with its own instructions and history
//! looks at the target (`turn/review.rs`) and the thread's history is told only the outcome.
//! A stop records the review's end as interrupted ([`ThreadTask::abort`]), once.

use std::sync::atomic::AtomicBool;

use futures::future::BoxFuture;
use weft_protocol::ReviewTarget;

use super::{TaskKind, TaskStart, ThreadTask};
use crate::config::ReviewConfig;
use crate::turn::{self, TurnContext, TurnEnd};

/// A review of one target.
pub struct ReviewTask {
    target: ReviewTarget,
    config: ReviewConfig,
    /// The reviewer's model (`review_model`); the thread's when `None`.
    model: Option<String>,
    /// Set once the review's end is recorded (by the run, or by the abort after a stop).
    exited: AtomicBool,
}

impl ReviewTask {
    /// A review of `target` (checked and trimmed by the request's handler), gathering its
    /// diff within `config`'s bounds, asking `model` (the thread's when `None`).
    pub fn new(target: ReviewTarget, config: ReviewConfig, model: Option<String>) -> ReviewTask {
        ReviewTask {
            target,
            config,
            model,
            exited: AtomicBool::new(false),
        }
    }
}

impl ThreadTask for ReviewTask {
    fn kind(&self) -> TaskKind {
        TaskKind::Review
    }

    fn span_name(&self) -> &'static str {
        "review"
    }

    /// The thread's context messages are not recorded: the reviewer has its own, and the
    /// thread's next turn records what changed.
    fn start(&self) -> TaskStart {
        TaskStart {
            records_context: false,
            continuation: false,
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn run<'a>(&'a self, ctx: &'a TurnContext) -> BoxFuture<'a, TurnEnd> {
        Box::pin(turn::run_review(
            ctx,
            &self.target,
            &self.config,
            self.model.as_deref(),
            &self.exited,
        ))
    }

    /// A review stopped before it ended: `exitedReviewMode` without a review, and the thread
    /// told it was interrupted (the reference's order: before the turn completes).
    fn abort<'a>(&'a self, ctx: &'a TurnContext) -> BoxFuture<'a, ()> {
        Box::pin(turn::exit_review(ctx, None, &self.exited))
    }
}
