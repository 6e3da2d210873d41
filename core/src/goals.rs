//! Goal pursuit (docs/protocol.md §7.26): what a turn that works toward a thread's goal
//! counts, when its end pauses the goal, and the texts that tell the model about the goal
//! (`prompts.rs`). The goal itself lives in the state DB (`state/goals.rs`); the model changes
//! it with the goal tools (`tools/goal_tool.rs`); the thread's actor applies the rules here
//! when a turn ends and starts the continuation turns (`thread/actor/goal.rs`).

mod prompts;

use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use weft_protocol::{ThreadGoal, ThreadTokenUsage, TurnStatus};

pub use prompts::{GOAL_CONTEXT_OPEN, continuation_message, is_goal_context, objective_updated};

/// The usage of the running turn that has not been counted toward the goal yet: the thread's
/// token total and the time since the turn started, or since the goal last took its share (a
/// goal tool, a new goal). Shared by the turn's sampling, its goal tools and the thread's
/// actor. A goal tool acts once the response that called it is complete
/// ([`GoalTurnUsage::response_done`]), so what that response used is known by then: it counts
/// toward a goal the call completes, not toward one it creates.
#[derive(Debug)]
pub struct GoalTurnUsage {
    totals: Arc<Mutex<ThreadTokenUsage>>,
    since: Mutex<(i64, Instant)>,
    /// True while a model response is streaming.
    streaming: tokio::sync::watch::Sender<bool>,
}

impl GoalTurnUsage {
    /// Counting starts now, from the thread's current total.
    pub fn new(totals: Arc<Mutex<ThreadTokenUsage>>) -> Arc<GoalTurnUsage> {
        let tokens = totals.lock().total.total_tokens;
        Arc::new(GoalTurnUsage {
            totals,
            since: Mutex::new((tokens, Instant::now())),
            streaming: tokio::sync::watch::Sender::new(false),
        })
    }

    /// A model response starts streaming.
    pub fn response_started(&self) {
        self.streaming.send_replace(true);
    }

    /// The response ended (completed, failed or abandoned); its usage, if any, is reported.
    pub fn response_ended(&self) {
        self.streaming.send_replace(false);
    }

    /// Wait until no response is streaming.
    pub async fn response_done(&self) {
        let mut rx = self.streaming.subscribe();
        let _ = rx.wait_for(|streaming| !*streaming).await;
    }

    /// The tokens and whole seconds (rounded) not counted yet; counting goes on from now.
    pub fn take(&self) -> (i64, i64) {
        let now_tokens = self.totals.lock().total.total_tokens;
        let mut since = self.since.lock();
        let (tokens, at) = *since;
        *since = (now_tokens, Instant::now());
        let millis = at.elapsed().as_millis();
        let seconds = i64::try_from((millis + 500) / 1000).unwrap_or(i64::MAX);
        ((now_tokens - tokens).max(0), seconds)
    }

    /// Forget what was not counted (a new goal starts from nothing).
    pub fn restart(&self) {
        let _ = self.take();
    }

    /// [`GoalTurnUsage::restart`] from the thread's token total as the running turn last
    /// reported it (the thread's actor reads no totals a running turn holds,
    /// docs/architecture.md §5.1).
    pub fn restart_at(&self, total_tokens: i64) {
        *self.since.lock() = (total_tokens, Instant::now());
    }
}

/// `token_budget − tokens_used` (never below zero), or `None` without a budget.
pub fn remaining_tokens(goal: &ThreadGoal) -> Option<i64> {
    goal.token_budget
        .map(|budget| (budget - goal.tokens_used).max(0))
}

/// Whether the goal has used its whole budget.
pub fn budget_exhausted(goal: &ThreadGoal) -> bool {
    goal.token_budget
        .is_some_and(|budget| goal.tokens_used >= budget)
}

/// Why the end of a turn pauses the goal it pursued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseReason {
    /// The user interrupted the turn (or cancelled an approval).
    Interrupted,
    /// The turn failed.
    Failed,
    /// An automatic continuation turn in which the model produced neither a message nor a
    /// tool call.
    NothingProduced,
    /// This many automatic continuation turns ran in a row (`[goals] max_continuation_turns`).
    ContinuationLimit(u32),
}

impl PauseReason {
    /// What the user is told (a `warning`) and the log says when the goal is paused for this.
    pub fn message(self) -> String {
        match self {
            PauseReason::Interrupted => {
                "the goal was paused because its turn was interrupted".into()
            }
            PauseReason::Failed => "the goal was paused because its turn failed".into(),
            PauseReason::NothingProduced => {
                "the goal was paused because an automatic turn produced nothing".into()
            }
            PauseReason::ContinuationLimit(n) => format!(
                "the goal was paused after {n} automatic continuation turns in a row \
                 ([goals] max_continuation_turns); set it active again to go on"
            ),
        }
    }
}

/// How a turn that pursued an active goal ended, as the pause rule needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnEnding {
    /// Its terminal status.
    pub status: TurnStatus,
    /// Interrupted by Weft itself (the thread unloading or shutting down, a manual compaction
    /// replacing it), not by the user: the pursuit is not stopped.
    pub quiet: bool,
    /// An automatic continuation turn.
    pub continuation: bool,
    /// The model produced a message or a tool call in it.
    pub produced: bool,
    /// Continuation turns in a row so far, this one included.
    pub consecutive: u32,
    /// `[goals] max_continuation_turns`.
    pub max_consecutive: u32,
}

/// Whether (and why) the end of a turn pauses the active goal it pursued.
pub fn pause_reason(turn: TurnEnding) -> Option<PauseReason> {
    match turn.status {
        TurnStatus::Interrupted if !turn.quiet => Some(PauseReason::Interrupted),
        TurnStatus::Failed => Some(PauseReason::Failed),
        TurnStatus::Completed if turn.continuation && !turn.produced => {
            Some(PauseReason::NothingProduced)
        }
        TurnStatus::Completed if turn.continuation && turn.consecutive >= turn.max_consecutive => {
            Some(PauseReason::ContinuationLimit(turn.consecutive))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use weft_protocol::{ThreadGoalStatus, ThreadId, TokenUsageBreakdown};

    use super::*;

    fn ending(status: TurnStatus) -> TurnEnding {
        TurnEnding {
            status,
            quiet: false,
            continuation: false,
            produced: true,
            consecutive: 0,
            max_consecutive: 3,
        }
    }

    #[test]
    fn what_pauses_a_goal() {
        let silent = TurnEnding {
            produced: false,
            ..ending(TurnStatus::Completed)
        };
        let continuation = |consecutive| TurnEnding {
            continuation: true,
            consecutive,
            ..ending(TurnStatus::Completed)
        };
        let cases = [
            ("a completed turn", ending(TurnStatus::Completed), None),
            (
                "an interrupted turn",
                ending(TurnStatus::Interrupted),
                Some(PauseReason::Interrupted),
            ),
            (
                "a quiet interrupt",
                TurnEnding {
                    quiet: true,
                    ..ending(TurnStatus::Interrupted)
                },
                None,
            ),
            (
                "a failed turn",
                ending(TurnStatus::Failed),
                Some(PauseReason::Failed),
            ),
            // A user turn that says nothing does not pause; a continuation that says nothing does.
            ("a user turn that says nothing", silent, None),
            (
                "a continuation that says nothing",
                TurnEnding {
                    continuation: true,
                    consecutive: 1,
                    ..silent
                },
                Some(PauseReason::NothingProduced),
            ),
            ("a continuation below the limit", continuation(2), None),
            (
                "a continuation at the limit",
                continuation(3),
                Some(PauseReason::ContinuationLimit(3)),
            ),
        ];
        for (what, turn, expected) in cases {
            assert_eq!(pause_reason(turn), expected, "{what}");
        }
        assert!(
            PauseReason::ContinuationLimit(3)
                .message()
                .contains("3 automatic continuation turns")
        );
    }

    #[test]
    fn usage_is_taken_once_and_restarts() {
        let totals = Arc::new(Mutex::new(ThreadTokenUsage::default()));
        let add = |n| {
            totals.lock().total.add(&TokenUsageBreakdown {
                total_tokens: n,
                ..TokenUsageBreakdown::default()
            })
        };
        add(40);
        let usage = GoalTurnUsage::new(totals.clone());
        add(110);
        add(5);
        assert_eq!(usage.take().0, 115);
        assert_eq!(usage.take().0, 0);
        add(7);
        usage.restart();
        add(3);
        assert_eq!(usage.take().0, 3);
    }

    #[tokio::test]
    async fn a_tool_waits_for_the_response_that_called_it() {
        let usage = GoalTurnUsage::new(Arc::new(Mutex::new(ThreadTokenUsage::default())));
        usage.response_done().await;
        usage.response_started();
        let waiting = tokio::spawn({
            let usage = usage.clone();
            async move { usage.response_done().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiting.is_finished());
        usage.response_ended();
        waiting.await.unwrap();
    }

    #[test]
    fn remaining_tokens_and_exhaustion() {
        let mut goal = ThreadGoal {
            thread_id: ThreadId::from("t"),
            objective: "o".into(),
            status: ThreadGoalStatus::Active,
            token_budget: None,
            tokens_used: 1100,
            time_used_seconds: 0,
            created_at: 0,
            updated_at: 0,
        };
        assert_eq!(remaining_tokens(&goal), None);
        assert!(!budget_exhausted(&goal));
        goal.token_budget = Some(1000);
        assert_eq!(remaining_tokens(&goal), Some(0));
        assert!(budget_exhausted(&goal));
        goal.token_budget = Some(1500);
        assert_eq!(remaining_tokens(&goal), Some(400));
        assert!(!budget_exhausted(&goal));
    }
}
