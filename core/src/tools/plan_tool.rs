//! `update_plan` (docs/architecture.md §8.4): the model keeps a step list; clients get
//! `turn/plan/updated` and a `plan` item (id = the call id) whose text is the plan as a
//! checklist. The model gets `Plan updated`; in Plan mode the call is refused, as the
//! reference refuses it.

use serde::Deserialize;
use serde_json::{Value, json};
use weft_protocol::{ItemId, PlanItem, ThreadItem, TurnPlanStep, TurnPlanStepStatus};

use super::context::ToolTurn;
use super::tool::{Concurrency, Effects, FunctionTool};
use crate::events::ThreadEvent;
use crate::time::now_ms;

/// The name of the plan tool.
pub const UPDATE_PLAN_TOOL: &str = "update_plan";

/// What the model gets for `update_plan` in Plan mode, the reference's words: the tool is
/// still offered there, but a call is refused before its arguments are read.
pub const REFUSED_IN_PLAN_MODE: &str =
    "update_plan is a TODO/checklist tool and is not allowed in Plan mode";

/// `update_plan`: exclusive; changes nothing but the plan. In Plan collaboration mode
/// (`plan_mode`) every call is refused with [`REFUSED_IN_PLAN_MODE`].
pub(crate) fn update_plan_tool(plan_mode: bool) -> FunctionTool {
    FunctionTool {
        name: UPDATE_PLAN_TOOL,
        spec: update_plan_tool_spec,
        effects: Effects {
            mutates: false,
            concurrency: Concurrency::Exclusive,
        },
        run: if plan_mode {
            |_, _, _| Box::pin(async { REFUSED_IN_PLAN_MODE.to_string() })
        } else {
            |call_id, arguments, turn| Box::pin(update_plan(call_id, arguments, turn))
        },
    }
}

const DESCRIPTION: &str = "Updates the task plan. Provide an optional explanation and a list of \
plan items, each with a step and status. At most one step can be in_progress at a time.";

/// The `update_plan` function tool.
pub fn update_plan_tool_spec() -> Value {
    json!({
        "type": "function",
        "name": UPDATE_PLAN_TOOL,
        "description": DESCRIPTION,
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "explanation": {"type": "string"},
                "plan": {
                    "type": "array",
                    "description": "The list of steps",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string"},
                            "status": {
                                "type": "string",
                                "description": "One of: pending, in_progress, completed"
                            }
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["plan"],
            "additionalProperties": false
        }
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdatePlanArgs {
    #[serde(default)]
    explanation: Option<String>,
    plan: Vec<PlanStep>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanStep {
    step: String,
    status: StepStatus,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum StepStatus {
    Pending,
    InProgress,
    Completed,
}

impl From<StepStatus> for TurnPlanStepStatus {
    fn from(status: StepStatus) -> Self {
        match status {
            StepStatus::Pending => TurnPlanStepStatus::Pending,
            StepStatus::InProgress => TurnPlanStepStatus::InProgress,
            StepStatus::Completed => TurnPlanStepStatus::Completed,
        }
    }
}

/// The plan as the `plan` item's text: the explanation, then one checklist line per step
/// (`- [x]` completed, `- [~]` in progress, `- [ ]` pending).
fn render(explanation: Option<&str>, plan: &[TurnPlanStep]) -> String {
    let mut text = String::new();
    if let Some(explanation) = explanation.map(str::trim).filter(|e| !e.is_empty()) {
        text.push_str(explanation);
        text.push_str("\n\n");
    }
    for step in plan {
        let mark = match step.status {
            TurnPlanStepStatus::Completed => "[x]",
            TurnPlanStepStatus::InProgress => "[~]",
            TurnPlanStepStatus::Pending => "[ ]",
        };
        text.push_str(&format!("- {mark} {}\n", step.step));
    }
    text
}

/// `update_plan`.
async fn update_plan(call_id: &str, arguments: &str, turn: &ToolTurn) -> String {
    let args: UpdatePlanArgs = match serde_json::from_str(arguments) {
        Ok(args) => args,
        Err(err) => return format!("failed to parse function arguments: {err}"),
    };
    let plan: Vec<TurnPlanStep> = args
        .plan
        .into_iter()
        .map(|s| TurnPlanStep {
            step: s.step,
            status: s.status.into(),
        })
        .collect();
    let started = now_ms();
    let mut item = ThreadItem::from(PlanItem {
        id: ItemId::from(call_id.to_string()),
        text: render(args.explanation.as_deref(), &plan),
    });
    item.started_at_ms = Some(started);
    let emit = |event| turn.sink.emit(&turn.thread_id, event);
    emit(ThreadEvent::ItemStarted {
        turn_id: turn.turn_id.clone(),
        item: item.clone(),
    })
    .await;
    emit(ThreadEvent::PlanUpdated {
        turn_id: turn.turn_id.clone(),
        explanation: args.explanation,
        plan,
    })
    .await;
    item.completed_at_ms = Some(now_ms());
    emit(ThreadEvent::ItemCompleted {
        turn_id: turn.turn_id.clone(),
        item,
    })
    .await;
    "Plan updated".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_strict() {
        assert!(
            serde_json::from_str::<UpdatePlanArgs>(
                r#"{"plan":[{"step":"a","status":"in_progress"}]}"#
            )
            .is_ok()
        );
        assert!(
            serde_json::from_str::<UpdatePlanArgs>(r#"{"plan":[{"step":"a","status":"done"}]}"#)
                .is_err()
        );
        assert!(serde_json::from_str::<UpdatePlanArgs>(r#"{"plan":[],"extra":1}"#).is_err());
    }

    #[test]
    fn the_plan_renders_as_a_checklist() {
        let plan = vec![
            TurnPlanStep {
                step: "Read".into(),
                status: TurnPlanStepStatus::Completed,
            },
            TurnPlanStep {
                step: "Write".into(),
                status: TurnPlanStepStatus::InProgress,
            },
            TurnPlanStep {
                step: "Test".into(),
                status: TurnPlanStepStatus::Pending,
            },
        ];
        assert_eq!(
            render(Some("Because."), &plan),
            "Because.\n\n- [x] Read\n- [~] Write\n- [ ] Test\n"
        );
    }
}
