//! The pursuit of a thread's goal (docs/protocol.md §7.26), for persistent threads while
//! `[features] goals` is on. When a turn ends, its usage counts toward the active goal, and
//! the rules of `crate::goals` may pause it (an interrupt, a failure, an automatic turn that
//! produced nothing, too many automatic turns in a row); the goal's new state is announced
//! with the turn's id before `turn/completed`. While the goal stays active, and whenever a
//! client makes it active on an idle thread, a continuation turn starts: no user message, the
//! continuation text as the model's last input. A continuation never starts while a turn runs,
//! and nothing starts one when a thread is merely loaded (resume, restart). [`GoalPursuit`]
//! owns what the pursuit keeps between turns.

use std::sync::Arc;

use weft_protocol::{ThreadGoalStatus, Turn, TurnStatus};

use super::{ActiveTurn, ThreadActor};
use crate::events::{Reply, ThreadEvent};
use crate::goals::{
    GoalTurnUsage, PauseReason, TurnEnding, budget_exhausted, continuation_message,
    objective_updated, pause_reason,
};
use crate::state::{GoalSet, StateDb};
use crate::task::RegularTask;
use crate::time::{new_turn_id, now_secs};
use crate::tools::goal_tool::GoalTools;
use crate::turn::TurnInput;

/// Whether and how the thread pursues goals, and its automatic turns so far.
pub(super) struct GoalPursuit {
    mode: GoalMode,
    /// Automatic continuation turns since the last user input (docs/protocol.md §7.26).
    turns: u32,
    /// `[goals] max_continuation_turns`.
    max_turns: u32,
}

/// What the thread can do with goals, fixed when it is loaded.
enum GoalMode {
    /// `[features] goals = false`, or no state DB.
    Off,
    /// An ephemeral thread has no stored goal.
    Ephemeral,
    /// A persistent thread pursues its goal in the state DB.
    On(StateDb),
}

impl GoalPursuit {
    pub(super) fn new(
        feature: bool,
        state: Option<&StateDb>,
        persistent: bool,
        max_turns: u32,
    ) -> GoalPursuit {
        let mode = match (feature, state) {
            (false, _) | (true, None) => GoalMode::Off,
            (true, Some(_)) if !persistent => GoalMode::Ephemeral,
            (true, Some(db)) => GoalMode::On(db.clone()),
        };
        GoalPursuit {
            mode,
            turns: 0,
            max_turns,
        }
    }

    /// The state DB, when this thread pursues goals.
    fn db(&self) -> Option<&StateDb> {
        match &self.mode {
            GoalMode::On(db) => Some(db),
            GoalMode::Off | GoalMode::Ephemeral => None,
        }
    }

    /// What the goal tools of a turn counting `usage` may do.
    pub(super) fn tools(&self, usage: &Arc<GoalTurnUsage>) -> GoalTools {
        match &self.mode {
            GoalMode::Off => GoalTools::Off,
            GoalMode::Ephemeral => GoalTools::Ephemeral,
            GoalMode::On(db) => GoalTools::On {
                db: db.clone(),
                usage: usage.clone(),
            },
        }
    }

    /// User input: the automatic turns start counting again.
    pub(super) fn user_input(&mut self) {
        self.turns = 0;
    }

    /// How a turn of the pursuit ended, for the rules of `crate::goals`.
    fn ending(&self, active: &ActiveTurn, status: TurnStatus, quiet: bool) -> TurnEnding {
        TurnEnding {
            status,
            quiet,
            continuation: active.continuation(),
            produced: active.shared().produced(),
            consecutive: self.turns,
            max_consecutive: self.max_turns,
        }
    }
}

impl ThreadActor {
    /// A turn ended (`quiet`: ended by Weft, not the user): count its usage toward the active
    /// goal, pause it if the rules say so, and announce it. Whether the goal is still active.
    pub(super) async fn settle_goal(
        &mut self,
        active: &ActiveTurn,
        status: TurnStatus,
        quiet: bool,
    ) -> bool {
        let Some(db) = self.goal.db() else {
            return false;
        };
        let thread_id = self.thread.id.clone();
        match db.goal(&thread_id).await {
            Ok(Some(goal)) if goal.status == ThreadGoalStatus::Active => {}
            Ok(_) => return false,
            Err(err) => {
                tracing::warn!(%err, "cannot read the thread's goal");
                return false;
            }
        }
        let reason = pause_reason(self.goal.ending(active, status, quiet));
        let (tokens, seconds) = active.goal_usage.take();
        let accounted = db
            .account_goal(&thread_id, tokens, seconds, reason.is_some(), now_secs())
            .await;
        let goal = match accounted {
            Ok(Some(goal)) => goal,
            // A client changed the goal meanwhile: it is not this turn's to account.
            Ok(None) => return false,
            Err(err) => {
                tracing::warn!(%err, "cannot account the turn to the thread's goal");
                return false;
            }
        };
        let still_active = goal.status == ThreadGoalStatus::Active;
        let paused = goal.status == ThreadGoalStatus::Paused;
        self.emit(ThreadEvent::GoalUpdated {
            turn_id: Some(active.turn_id().clone()),
            goal,
        })
        .await;
        match reason {
            Some(reason @ (PauseReason::ContinuationLimit(_) | PauseReason::NothingProduced))
                if paused =>
            {
                let message = reason.message();
                tracing::warn!(turn = %active.turn_id(), "{message}");
                self.emit(ThreadEvent::Warning {
                    turn_id: Some(active.turn_id().clone()),
                    message,
                })
                .await;
            }
            Some(reason) => tracing::info!(turn = %active.turn_id(), "{}", reason.message()),
            None => {}
        }
        still_active
    }

    /// Start a continuation turn when the thread is idle and its goal active. A goal whose
    /// budget is spent becomes `budgetLimited` instead (announced without a turn id).
    pub(super) async fn continue_goal(&mut self) {
        if self.active.is_some() {
            return;
        }
        let Some(db) = self.goal.db().cloned() else {
            return;
        };
        let thread_id = self.thread.id.clone();
        let goal = match db.goal(&thread_id).await {
            Ok(Some(goal)) if goal.status == ThreadGoalStatus::Active => goal,
            Ok(_) => return,
            Err(err) => {
                tracing::warn!(%err, "cannot read the thread's goal");
                return;
            }
        };
        if budget_exhausted(&goal) {
            match db.account_goal(&thread_id, 0, 0, false, now_secs()).await {
                Ok(Some(goal)) => {
                    self.emit(ThreadEvent::GoalUpdated {
                        turn_id: None,
                        goal,
                    })
                    .await;
                }
                Ok(None) => {}
                Err(err) => tracing::warn!(%err, "cannot update the thread's goal"),
            }
            return;
        }
        let provider = match self.ready_for_turn().await {
            Ok(provider) => provider,
            Err(err) => {
                tracing::warn!(%err, "the goal's continuation turn cannot start");
                return;
            }
        };
        self.goal.turns += 1;
        let turn = Turn::in_progress(new_turn_id(), None);
        let task = RegularTask::new(TurnInput::Goal(continuation_message(&goal)));
        self.launch_turn(turn, provider, Arc::new(task), None).await;
    }

    /// A client set the goal (stored; `reply` answers it). On an idle thread an active goal
    /// starts a continuation, after the answer; a running turn counts only what it uses from
    /// now on for a goal that is new or just became active, and is told a changed objective at
    /// its next step.
    pub(super) async fn goal_changed(&mut self, set: GoalSet, reply: Reply<()>) {
        if self.goal.db().is_none() {
            reply.send(()).await;
            return;
        }
        let GoalSet { previous, goal } = set;
        let active_now = goal.status == ThreadGoalStatus::Active;
        let Some(active) = &self.active else {
            reply.send(()).await;
            if active_now {
                // The user's request: the automatic turns start counting again.
                self.goal.user_input();
                self.continue_goal().await;
            }
            return;
        };
        let renewed = previous
            .as_ref()
            .is_none_or(|p| p.created_at != goal.created_at || p.objective != goal.objective);
        let activated = previous
            .as_ref()
            .is_none_or(|p| p.status != ThreadGoalStatus::Active);
        if renewed || (active_now && activated) {
            // From the total the turn last reported: the turn holds the totals.
            let total = active.shared().token_usage().total.total_tokens;
            active.goal_usage.restart_at(total);
        }
        if active_now
            && previous
                .as_ref()
                .is_some_and(|p| p.objective != goal.objective)
        {
            active
                .shared()
                .push_note(objective_updated(&goal.objective));
        }
        reply.send(()).await;
    }
}
