//! The goal tools (docs/protocol.md §7.26): `get_goal`, `create_goal` and `update_goal`, offered
//! on every request of a persistent thread while `[features] goals` is on, after the other
//! built-in tools. They read and write the thread's goal in the state DB; each change is
//! followed by `thread/goal/updated` with the running turn's id. The model gets JSON: the goal
//! (the protocol's `ThreadGoal`) and `remainingTokens`, plus `completionBudgetReport` when it
//! marks the goal complete.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use weft_protocol::{ThreadGoal, ThreadGoalStatus};

use super::context::{ToolCall, ToolTurn};
use super::tool::{Concurrency, Effects, Tool};
use crate::events::ThreadEvent;
use crate::goals::{GoalTurnUsage, remaining_tokens};
use crate::model::ToolOutput;
use crate::state::StateDb;
use crate::time::now_secs;

/// `get_goal`.
pub const GET_GOAL_TOOL: &str = "get_goal";
/// `create_goal`.
pub const CREATE_GOAL_TOOL: &str = "create_goal";
/// `update_goal`.
pub const UPDATE_GOAL_TOOL: &str = "update_goal";

/// The goal tools' names, in the order they are offered.
pub const GOAL_TOOLS: [&str; 3] = [GET_GOAL_TOOL, CREATE_GOAL_TOOL, UPDATE_GOAL_TOOL];

/// What a model calling a goal tool on an ephemeral thread is told.
pub const EPHEMERAL: &str = "Goal tools require a persistent thread.";
/// `create_goal` while the thread's goal is not complete.
pub const UNFINISHED: &str = "cannot create a new goal because this thread has an unfinished goal; complete the existing goal first";
/// `create_goal` with a budget below 1.
pub const BAD_BUDGET: &str = "goal budgets must be positive when provided";
/// `create_goal` with a blank objective.
pub const EMPTY_OBJECTIVE: &str = "goal objective must not be empty";
/// `update_goal` without a goal.
pub const NO_GOAL: &str = "cannot update goal because this thread has no goal";
/// `update_goal` with a status the model may not set.
pub const BAD_STATUS: &str = "update_goal can only mark the existing goal complete, blocked, or paused at the user's explicit request; resume, budget-limited, and usage-limited status changes are controlled by the user or system";

/// What the goal tools of a turn may do.
#[derive(Clone, Debug, Default)]
pub enum GoalTools {
    /// Not offered: `[features] goals = false`, or no state DB.
    #[default]
    Off,
    /// Not offered: the thread is ephemeral (a call is answered [`EPHEMERAL`]).
    Ephemeral,
    /// Offered: the state DB, and the running turn's usage not yet counted toward the goal.
    On {
        /// Where goals live.
        db: StateDb,
        /// The running turn's uncounted usage.
        usage: Arc<GoalTurnUsage>,
    },
}

impl GoalTools {
    /// Whether the turn has the goal tools at all (offered, or answered [`EPHEMERAL`]).
    pub fn served(&self) -> bool {
        !matches!(self, GoalTools::Off)
    }
}

/// One goal tool: offered while the goals are on, answered [`EPHEMERAL`] on an ephemeral
/// thread. Exclusive.
pub(crate) struct GoalTool {
    /// Which one ([`GOAL_TOOLS`]).
    pub name: &'static str,
    /// What it may do.
    pub goals: GoalTools,
}

#[async_trait]
impl Tool for GoalTool {
    fn name(&self) -> &str {
        self.name
    }

    fn specs(&self) -> Vec<Value> {
        if !matches!(self.goals, GoalTools::On { .. }) {
            return Vec::new();
        }
        goal_tool_specs()
            .into_iter()
            .filter(|spec| spec["name"] == self.name)
            .collect()
    }

    fn effects(&self) -> Effects {
        Effects {
            mutates: false,
            concurrency: Concurrency::Exclusive,
        }
    }

    async fn call(&self, call: &ToolCall, turn: &ToolTurn) -> ToolOutput {
        ToolOutput::Text(run(self.name, &self.goals, call.arguments(), turn).await)
    }
}

const GET_DESCRIPTION: &str = "Read this thread's goal: its objective, status, token budget, the \
tokens and time spent on it so far, and the tokens left in its budget. Returns null when the \
thread has no goal.";

const CREATE_DESCRIPTION: &str = "Start pursuing a goal on this thread. Only do this when the \
user (or the system or developer instructions) explicitly asks for a goal; an ordinary request \
is not a goal. While the goal is active, the thread keeps taking turns on its own until the goal \
is complete. Give token_budget only when a budget was explicitly asked for. Fails when the \
thread already has a goal that is not complete; change a goal's status with update_goal.";

const OBJECTIVE_DESCRIPTION: &str = "Required. What the goal is to achieve, stated concretely. \
Creates the thread's goal when it has none, or replaces its goal when that one is complete.";

const BUDGET_DESCRIPTION: &str = "Optional positive number of tokens the goal may use. Leave it \
out unless a budget was explicitly requested.";

const UPDATE_DESCRIPTION: &str = "Change the status of this thread's goal.\n\
- `complete`: only once the objective is fully achieved and no required work is left. Running \
low on budget, or stopping, is not completion. When the goal has a token budget, tell the user \
the final token usage from the result.\n\
- `blocked`: only when the same obstacle has stopped progress for at least three goal turns in a \
row (the turn that started the goal and the automatic ones after it count) and nothing more can \
be done without the user or an outside change. Hard, slow or uncertain work is not blocked. A \
goal the user resumes after being blocked starts counting again; once the threshold is met, set \
`blocked` rather than going on reporting it.\n\
- `paused`: only when the user explicitly asks to pause the goal, never on your own. Report the \
returned status and stop working on the goal.\n\
Resuming a goal, and the budget and usage limits, are not yours to set: the user and the system \
control them.";

const STATUS_DESCRIPTION: &str = "Required. `complete` when the objective is achieved with \
nothing left to do; `blocked` when the same blocker has held for three goal turns in a row; \
`paused` only at the user's explicit request.";

/// The three goal tools, in the order they are offered.
pub fn goal_tool_specs() -> Vec<Value> {
    vec![
        json!({
            "type": "function",
            "name": GET_GOAL_TOOL,
            "description": GET_DESCRIPTION,
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {},
                "required": [],
                "additionalProperties": false
            }
        }),
        json!({
            "type": "function",
            "name": CREATE_GOAL_TOOL,
            "description": CREATE_DESCRIPTION,
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "objective": {"type": "string", "description": OBJECTIVE_DESCRIPTION},
                    "token_budget": {"type": "integer", "description": BUDGET_DESCRIPTION}
                },
                "required": ["objective"],
                "additionalProperties": false
            }
        }),
        json!({
            "type": "function",
            "name": UPDATE_GOAL_TOOL,
            "description": UPDATE_DESCRIPTION,
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "status": {
                        "type": "string",
                        "description": STATUS_DESCRIPTION,
                        "enum": ["complete", "blocked", "paused"]
                    }
                },
                "required": ["status"],
                "additionalProperties": false
            }
        }),
    ]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    objective: String,
    #[serde(default)]
    token_budget: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    status: String,
}

/// Run goal tool `name`; the text is what the model gets.
async fn run(name: &str, goals: &GoalTools, arguments: &str, turn: &ToolTurn) -> String {
    let (db, usage) = match goals {
        GoalTools::On { db, usage } => (db, usage),
        GoalTools::Ephemeral => return EPHEMERAL.to_string(),
        GoalTools::Off => return format!("unsupported call: {name}"),
    };
    // Act once the response that made this call is complete, so its usage is counted.
    tokio::select! {
        biased;
        () = turn.cancel.cancelled() => return "aborted by user".to_string(),
        () = usage.response_done() => {}
    }
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let outcome = match name {
        CREATE_GOAL_TOOL => match serde_json::from_str::<CreateArgs>(arguments) {
            Ok(args) => create(db, usage, args, turn).await,
            Err(err) => Err(parse_error(err)),
        },
        UPDATE_GOAL_TOOL => match serde_json::from_str::<UpdateArgs>(arguments) {
            Ok(args) => update(db, usage, args, turn).await,
            Err(err) => Err(parse_error(err)),
        },
        _ => match serde_json::from_str::<NoArgs>(arguments) {
            Ok(NoArgs {}) => db
                .goal(&turn.thread_id)
                .await
                .map(|goal| output(goal.as_ref(), false))
                .map_err(|err| format!("cannot read the goal: {err}")),
            Err(err) => Err(parse_error(err)),
        },
    };
    outcome.unwrap_or_else(|message| message)
}

fn parse_error(err: serde_json::Error) -> String {
    format!("failed to parse function arguments: {err}")
}

async fn create(
    db: &StateDb,
    usage: &GoalTurnUsage,
    args: CreateArgs,
    turn: &ToolTurn,
) -> Result<String, String> {
    let objective = args.objective.trim();
    if objective.is_empty() {
        return Err(EMPTY_OBJECTIVE.to_string());
    }
    if args.token_budget.is_some_and(|budget| budget <= 0) {
        return Err(BAD_BUDGET.to_string());
    }
    let goal = db
        .create_goal_unless_unfinished(&turn.thread_id, objective, args.token_budget, now_secs())
        .await
        .map_err(|err| format!("cannot create the goal: {err}"))?
        .ok_or_else(|| UNFINISHED.to_string())?;
    // The new goal counts only what the turn uses from now on.
    usage.restart();
    announce(turn, &goal).await;
    Ok(output(Some(&goal), false))
}

async fn update(
    db: &StateDb,
    usage: &GoalTurnUsage,
    args: UpdateArgs,
    turn: &ToolTurn,
) -> Result<String, String> {
    let status = match args.status.as_str() {
        "complete" => ThreadGoalStatus::Complete,
        "blocked" => ThreadGoalStatus::Blocked,
        "paused" => ThreadGoalStatus::Paused,
        _ => return Err(BAD_STATUS.to_string()),
    };
    // The turn's usage so far belongs to the goal it pursued: counted before the status
    // changes, so the final numbers include this turn.
    let (tokens, seconds) = usage.take();
    let goal = db
        .mark_goal(&turn.thread_id, status, tokens, seconds, now_secs())
        .await
        .map_err(|err| format!("cannot update the goal: {err}"))?
        .ok_or_else(|| NO_GOAL.to_string())?;
    announce(turn, &goal).await;
    Ok(output(
        Some(&goal),
        goal.status == ThreadGoalStatus::Complete,
    ))
}

/// `thread/goal/updated` for the running turn.
async fn announce(turn: &ToolTurn, goal: &ThreadGoal) {
    turn.sink
        .emit(
            &turn.thread_id,
            ThreadEvent::GoalUpdated {
                turn_id: Some(turn.turn_id.clone()),
                goal: goal.clone(),
            },
        )
        .await;
}

/// The JSON the model gets: the goal, the tokens left, and for a goal just completed, what to
/// report to the user.
fn output(goal: Option<&ThreadGoal>, completed: bool) -> String {
    let mut value = json!({
        "goal": goal,
        "remainingTokens": goal.and_then(remaining_tokens),
    });
    if let (Some(goal), true) = (goal, completed) {
        value["completionBudgetReport"] = Value::String(completion_report(goal));
    }
    value.to_string()
}

fn completion_report(goal: &ThreadGoal) -> String {
    let time = goal.time_used_seconds;
    match goal.token_budget {
        Some(budget) => format!(
            "The goal is complete. In your reply, tell the user what it used: {} of its \
             {budget}-token budget, over {time} seconds of turns.",
            goal.tokens_used
        ),
        None => format!(
            "The goal is complete. In your reply, tell the user what it used: {} tokens over \
             {time} seconds of turns (it had no token budget).",
            goal.tokens_used
        ),
    }
}

#[cfg(test)]
#[path = "goal_tool_tests.rs"]
mod tests;
