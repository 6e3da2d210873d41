//! The pursuit of a thread's goal (docs/protocol.md §7.26), for persistent threads while
//! `[features] goals` is on. When a turn ends, its usage counts toward the active goal, and
//! the rules of `crate::goals` may pause it (an interrupt, a failure, an automatic turn that
//! produced nothing, too many automatic turns in a row); the goal's new state is announced
//! with the turn's id before `turn/completed`. While the goal stays active, and whenever a
//! client makes it active on an idle thread, a continuation turn starts: no user message, the
//! continuation text as the model's last input. A continuation never starts while a turn runs,
//! and nothing starts one when a thread is merely loaded (resume, restart).

use std::sync::Arc;

use weft_protocol::{ThreadGoalStatus, Turn, TurnStatus};

use super::start::TaskKind;
use super::{ActiveTurn, ThreadActor};
use crate::events::{Reply, ThreadEvent};
use crate::goals::{
    GoalTurnUsage, PauseReason, TurnEnding, budget_exhausted, continuation_message,
    objective_updated, pause_reason,
};
use crate::state::{GoalSet, StateDb};
use crate::time::{new_turn_id, now_secs};
use crate::tools::goal_tool::GoalTools;

impl ThreadActor {
    /// The state DB, when this thread pursues goals: the feature is on and the thread is
    /// persistent (an ephemeral thread has no stored goal).
    fn goal_db(&self) -> Option<&StateDb> {
        if !self.services.config.features.goals || self.rollout.is_none() {
            return None;
        }
        self.services.state.as_ref()
    }

    /// What the goal tools of a turn may do.
    pub(super) fn goal_tools(&self, usage: &Arc<GoalTurnUsage>) -> GoalTools {
        match (self.services.config.features.goals, &self.services.state) {
            (false, _) | (true, None) => GoalTools::Off,
            (true, Some(_)) if self.rollout.is_none() => GoalTools::Ephemeral,
            (true, Some(db)) => GoalTools::On {
                db: db.clone(),
                usage: usage.clone(),
            },
        }
    }

    /// A turn ended (`quiet`: ended by Weft, not the user): count its usage toward the active
    /// goal, pause it if the rules say so, and announce it. Whether the goal is still active.
    pub(super) async fn settle_goal(
        &mut self,
        active: &ActiveTurn,
        status: TurnStatus,
        quiet: bool,
    ) -> bool {
        let Some(db) = self.goal_db() else {
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
        let reason = pause_reason(TurnEnding {
            status,
            quiet,
            continuation: active.continuation,
            produced: active.shared.produced(),
            consecutive: self.goal_turns,
            max_consecutive: self.services.config.goals.max_continuation_turns,
        });
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
            turn_id: Some(active.turn_id.clone()),
            goal,
        })
        .await;
        match reason {
            Some(reason @ (PauseReason::ContinuationLimit(_) | PauseReason::NothingProduced))
                if paused =>
            {
                let message = reason.message();
                tracing::warn!(turn = %active.turn_id, "{message}");
                self.emit(ThreadEvent::Warning {
                    turn_id: Some(active.turn_id.clone()),
                    message,
                })
                .await;
            }
            Some(reason) => tracing::info!(turn = %active.turn_id, "{}", reason.message()),
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
        let Some(db) = self.goal_db().cloned() else {
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
        self.goal_turns += 1;
        let turn = Turn::in_progress(new_turn_id(), None);
        let task = TaskKind::Goal(continuation_message(&goal));
        self.launch_turn(turn, provider, task, None).await;
    }

    /// A client set the goal (stored; `reply` answers it). On an idle thread an active goal
    /// starts a continuation, after the answer; a running turn counts only what it uses from
    /// now on for a goal that is new or just became active, and is told a changed objective at
    /// its next step.
    pub(super) async fn goal_changed(&mut self, set: GoalSet, reply: Reply<()>) {
        if self.goal_db().is_none() {
            reply.send(()).await;
            return;
        }
        let GoalSet { previous, goal } = set;
        let active_now = goal.status == ThreadGoalStatus::Active;
        let Some(active) = &self.active else {
            reply.send(()).await;
            if active_now {
                // The user's request: the automatic turns start counting again.
                self.goal_turns = 0;
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
            active.goal_usage.restart();
        }
        if active_now
            && previous
                .as_ref()
                .is_some_and(|p| p.objective != goal.objective)
        {
            active.shared.push_note(objective_updated(&goal.objective));
        }
        reply.send(()).await;
    }
}
