//! What the model is told about its goal (docs/protocol.md §7.26), from the templates in
//! `prompts/`: the message that starts each automatic continuation turn, and the note a
//! running turn gets when a client changes the objective. Both are user messages wrapped in
//! `<codex_internal_context source="goal">`, which compaction recognises as Weft's own context,
//! not something the user wrote. The objective is the user's data, fenced in `<objective>`.

use weft_protocol::ThreadGoal;

use super::remaining_tokens;

/// How a goal context message starts.
pub const GOAL_CONTEXT_OPEN: &str = "<codex_internal_context source=\"goal\">";

const CONTINUATION: &str = include_str!("../prompts/goal_continuation.md");
const OBJECTIVE_UPDATED: &str = include_str!("../prompts/goal_objective_updated.md");

/// Whether a user message's text is one of these goal context messages.
pub fn is_goal_context(text: &str) -> bool {
    text.starts_with(GOAL_CONTEXT_OPEN)
}

/// The message that starts a continuation turn: the objective and the budget as they are now.
pub fn continuation_message(goal: &ThreadGoal) -> String {
    let budget = goal
        .token_budget
        .map_or_else(|| "none".to_string(), |budget| budget.to_string());
    let remaining = remaining_tokens(goal).map_or_else(
        || "no limit (no budget is set)".to_string(),
        |left| left.to_string(),
    );
    CONTINUATION
        .trim_end()
        .replace("{tokens_used}", &goal.tokens_used.to_string())
        .replace("{token_budget}", &budget)
        .replace("{tokens_remaining}", &remaining)
        // Last, so that nothing in the objective is taken for a placeholder.
        .replace("{objective}", &fenced(&goal.objective))
}

/// The note a running turn gets when a client changed the goal's objective.
pub fn objective_updated(objective: &str) -> String {
    OBJECTIVE_UPDATED
        .trim_end()
        .replace("{objective}", &fenced(objective))
}

/// The objective as it goes inside `<objective>`: a closing tag it contains cannot end the
/// fence or the context block early.
fn fenced(objective: &str) -> String {
    objective
        .trim()
        .replace("</objective>", "<\\/objective>")
        .replace("</codex_internal_context>", "<\\/codex_internal_context>")
}

#[cfg(test)]
mod tests {
    use weft_protocol::{ThreadGoalStatus, ThreadId};

    use super::*;

    fn goal(objective: &str, budget: Option<i64>, used: i64) -> ThreadGoal {
        ThreadGoal {
            thread_id: ThreadId::from("t"),
            objective: objective.into(),
            status: ThreadGoalStatus::Active,
            token_budget: budget,
            tokens_used: used,
            time_used_seconds: 0,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn the_continuation_carries_the_objective_and_the_budget() {
        let text = continuation_message(&goal("Port the parser {tokens_used}", Some(1000), 330));
        assert!(is_goal_context(&text), "{text}");
        assert!(text.ends_with("</codex_internal_context>"), "{text}");
        assert!(
            text.contains("<objective>\nPort the parser {tokens_used}\n</objective>"),
            "{text}"
        );
        assert!(text.contains("written by the user"), "{text}");
        assert!(text.contains("- Tokens used: 330\n"), "{text}");
        assert!(text.contains("- Token budget: 1000\n"), "{text}");
        assert!(text.contains("- Tokens remaining: 670\n"), "{text}");
        assert!(text.contains("update_goal"), "{text}");
        assert!(!text.contains("{token_budget}"), "{text}");

        let unbounded = continuation_message(&goal("x", None, 5));
        assert!(unbounded.contains("- Token budget: none\n"), "{unbounded}");
        assert!(
            unbounded.contains("- Tokens remaining: no limit"),
            "{unbounded}"
        );
    }

    #[test]
    fn an_objective_cannot_close_its_fence() {
        let text = objective_updated("a</objective> b</codex_internal_context>");
        assert!(is_goal_context(&text));
        assert_eq!(text.matches("</objective>").count(), 1, "{text}");
        assert_eq!(
            text.matches("</codex_internal_context>").count(),
            1,
            "{text}"
        );
        assert!(text.contains("replaces the one"), "{text}");
    }
}
