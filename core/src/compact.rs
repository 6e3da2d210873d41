//! Compaction (docs/architecture.md §9, §9.3): when the context window fills up, ask the model
//! for a hand-off summary and rebuild the history from that summary and the most recent user
//! messages. Used mid-turn, before a turn, and by `thread/compact/start`.

use weft_protocol::{ContextCompactionItem, ThreadItem, TurnError};

use crate::env_context::{ENVIRONMENT_CONTEXT_OPEN_TAG, EnvironmentContext};
use crate::goals::is_goal_context;
use crate::history::approx_tokens;
use crate::instructions::USER_INSTRUCTIONS_PREFIX;
use crate::model::{ContentItem, ModelError, Prompt, ResponseEvent, ResponseItem, Role};
use crate::rollout::TURN_ABORTED_MARKER;

/// Weft's summarization request (sent as the last user message of the compaction request).
pub const COMPACT_PROMPT: &str = include_str!("prompts/compact.md");

/// Starts the summary message in the rebuilt history, so the model knows what it is (and so
/// a later compaction does not keep it as a user message).
pub const SUMMARY_PREFIX: &str = "[Context checkpoint] The conversation so far was compacted. Earlier work is summarized below; build on it rather than redoing it.";

/// Budget of recent user messages kept verbatim (approximate tokens).
pub const KEPT_USER_TOKENS: u64 = 20_000;

/// Text standing in for an image of an old turn after compaction.
pub const IMAGE_PLACEHOLDER: &str = "[image omitted when the conversation was compacted]";

/// The context window assumed for a model the config says nothing about (so the automatic
/// limit is 244,800 tokens); set `model_context_window` for smaller local models.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 272_000;

/// The history sent in a summary request after dropping its `dropped` oldest items (other
/// than the instruction and environment messages), for a request that did not fit the
/// model's window. Calls and outputs stay paired.
pub fn trimmed_for_summary(items: &[ResponseItem], dropped: usize) -> Vec<ResponseItem> {
    let mut left = dropped;
    let kept: Vec<ResponseItem> = items
        .iter()
        .filter(|item| {
            if left == 0 || is_instruction_message(item) || is_environment_message(item) {
                return true;
            }
            left -= 1;
            false
        })
        .cloned()
        .collect();
    crate::history::History::restored(kept, None).for_prompt()
}

fn is_environment_message(item: &ResponseItem) -> bool {
    user_text_of(item).is_some_and(|text| text.starts_with(ENVIRONMENT_CONTEXT_OPEN_TAG))
}

/// When to compact: the model's context window and the auto-compaction limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
    /// Compact when the window in use reaches this many tokens; `None` = never automatically.
    pub limit: Option<u64>,
}

impl Window {
    /// From config: `model_auto_compact_token_limit`, clamped to 90% of
    /// `model_context_window`; the window defaults to [`DEFAULT_CONTEXT_WINDOW`] when the
    /// config does not give it.
    pub fn new(context_window: Option<u64>, configured_limit: Option<u64>) -> Window {
        let context_window = context_window.or(Some(DEFAULT_CONTEXT_WINDOW));
        let ninety = context_window.map(|w| w * 9 / 10);
        let limit = match (configured_limit, ninety) {
            (Some(limit), Some(ninety)) => Some(limit.min(ninety)),
            (limit, ninety) => limit.or(ninety),
        };
        Window {
            context_window,
            limit,
        }
    }

    /// Whether `tokens` in use call for a compaction.
    pub fn reached(&self, tokens: u64) -> bool {
        self.limit.is_some_and(|limit| tokens >= limit)
    }
}

/// Where the compaction happens, which decides where the summary goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In the middle of a turn: the summary goes just before the last user message, so the
    /// model keeps working on it.
    MidTurn,
    /// Before a turn or on request: the summary goes last.
    End,
}

/// The request that asks the model for the summary: the step's instructions, the history as
/// it would be sent, then [`COMPACT_PROMPT`]; no tools.
pub fn summary_prompt(step: &Prompt, history: Vec<ResponseItem>) -> Prompt {
    let mut prompt = step.clone();
    prompt.input = history;
    prompt.input.push(ResponseItem::user_text(COMPACT_PROMPT));
    prompt.tools = Default::default();
    prompt.parallel_tool_calls = false;
    // The summary is prose, whatever the turn's answer must look like.
    prompt.output_schema = None;
    prompt
}

/// Read a summary response: the text of its last assistant message, and the usage the model
/// reported for the request.
pub async fn collect_summary(
    mut stream: crate::model::ResponseStream,
) -> Result<(String, Option<crate::model::TokenUsage>), ModelError> {
    let mut summary = None;
    while let Some(event) = futures::StreamExt::next(&mut stream).await {
        match event? {
            ResponseEvent::OutputItemDone(item) => {
                if let ResponseItem::Message { role, .. } = &item
                    && *role == Role::Assistant
                {
                    summary = item.message_text();
                }
            }
            ResponseEvent::Completed { token_usage, .. } => {
                return Ok((summary.unwrap_or_default(), token_usage));
            }
            _ => {}
        }
    }
    Err(ModelError::stream_closed())
}

/// The text of the summary message in the rebuilt history.
pub fn summary_text(summary: &str) -> String {
    let summary = summary.trim();
    let summary = if summary.is_empty() {
        "(no summary available)"
    } else {
        summary
    };
    format!("{SUMMARY_PREFIX}\n\n{summary}")
}

/// The rebuilt history: the instruction messages (developer, AGENTS.md) as they were, the
/// current environment context in full, the most recent real user messages up to
/// [`KEPT_USER_TOKENS`] (images of all but the last replaced by a placeholder) — among them the
/// latest goal context message, so a turn that pursues a goal keeps its objective — and the
/// summary placed as `placement` says.
pub fn rebuild(
    old: &[ResponseItem],
    summary: &str,
    environment: &EnvironmentContext,
    placement: Placement,
) -> Vec<ResponseItem> {
    let mut rebuilt: Vec<ResponseItem> = old
        .iter()
        .filter(|item| is_instruction_message(item))
        .cloned()
        .collect();
    rebuilt.push(ResponseItem::user_text(environment.render()));

    let mut kept = Vec::new();
    let mut budget = KEPT_USER_TOKENS;
    let latest_goal = old
        .iter()
        .rposition(|item| user_text_of(item).is_some_and(|text| is_goal_context(&text)));
    let kept_items = old
        .iter()
        .enumerate()
        .rev()
        .filter(|(index, item)| is_real_user_message(item) || Some(*index) == latest_goal)
        .map(|(_, item)| item);
    for item in kept_items {
        if budget == 0 {
            break;
        }
        let cost = approx_tokens(item);
        if cost <= budget {
            budget -= cost;
            kept.push(item.clone());
        } else {
            kept.push(truncated_message(item, budget));
            budget = 0;
        }
    }
    kept.reverse();
    let last = kept.len().saturating_sub(1);
    for (index, item) in kept.iter_mut().enumerate() {
        if index != last {
            strip_images(item);
        }
    }
    let summary = ResponseItem::user_text(summary_text(summary));
    match placement {
        Placement::MidTurn if !kept.is_empty() => {
            let last = kept.pop();
            rebuilt.extend(kept);
            rebuilt.push(summary);
            rebuilt.extend(last);
        }
        _ => {
            rebuilt.extend(kept);
            rebuilt.push(summary);
        }
    }
    rebuilt
}

/// The `contextCompaction` item.
pub fn compaction_item() -> ThreadItem {
    ThreadItem::from(ContextCompactionItem {
        id: crate::time::new_item_id(),
    })
}

/// The error of a turn whose compaction failed.
pub fn compaction_error(err: &ModelError) -> TurnError {
    let mut error = crate::model::turn_error(err);
    error.message = format!(
        "compaction failed, the history was left as it was: {}",
        error.message
    );
    error
}

fn user_text_of(item: &ResponseItem) -> Option<String> {
    match item {
        ResponseItem::Message { role, .. } if *role == Role::User => item.message_text(),
        _ => None,
    }
}

fn is_instruction_message(item: &ResponseItem) -> bool {
    match item {
        ResponseItem::Message { role, .. } if *role == Role::Developer => true,
        _ => user_text_of(item).is_some_and(|text| text.starts_with(USER_INSTRUCTIONS_PREFIX)),
    }
}

/// A user message the user actually wrote (not context Weft adds: environment, AGENTS.md,
/// interrupt markers, hook prompts, goal context, earlier summaries).
fn is_real_user_message(item: &ResponseItem) -> bool {
    let Some(text) = user_text_of(item) else {
        return false;
    };
    !(text.starts_with(ENVIRONMENT_CONTEXT_OPEN_TAG)
        || text.starts_with(USER_INSTRUCTIONS_PREFIX)
        || text.starts_with(TURN_ABORTED_MARKER)
        || text.starts_with("<hook_prompt")
        || is_goal_context(&text)
        || text.starts_with(SUMMARY_PREFIX))
}

fn strip_images(item: &mut ResponseItem) {
    if let ResponseItem::Message { content, .. } = item {
        for part in content.iter_mut() {
            if matches!(part, ContentItem::InputImage { .. }) {
                *part = ContentItem::InputText {
                    text: IMAGE_PLACEHOLDER.to_string(),
                };
            }
        }
    }
}

/// A user message cut to about `budget` tokens.
fn truncated_message(item: &ResponseItem, budget: u64) -> ResponseItem {
    let text = user_text_of(item).unwrap_or_default();
    let keep = usize::try_from(budget.saturating_mul(4)).unwrap_or(usize::MAX);
    let end = text.floor_char_boundary(keep);
    ResponseItem::user_text(format!("{}… [truncated when compacting]", &text[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> EnvironmentContext {
        EnvironmentContext::capture("/w", "never", "read-only")
    }

    fn assistant(text: &str) -> ResponseItem {
        ResponseItem::text_message(Role::Assistant, text)
    }

    #[test]
    fn window_limit_is_ninety_percent_or_the_configured_one() {
        assert_eq!(Window::new(Some(1000), None).limit, Some(900));
        assert_eq!(Window::new(Some(1000), Some(500)).limit, Some(500));
        assert_eq!(Window::new(Some(1000), Some(5000)).limit, Some(900));
        assert_eq!(Window::new(None, Some(700)).limit, Some(700));
        assert_eq!(Window::new(None, None).limit, Some(244_800));
        assert!(Window::new(Some(1000), None).reached(900));
        assert!(!Window::new(None, None).reached(244_799));
    }

    #[test]
    fn rebuild_keeps_only_the_latest_goal_context() {
        let goal = |objective: &str| {
            let text = crate::goals::objective_updated(objective);
            ResponseItem::user_text(text)
        };
        let old = vec![
            ResponseItem::user_text(env().render()),
            goal("old objective"),
            ResponseItem::user_text("a question"),
            assistant("an answer"),
            goal("new objective"),
            assistant("working"),
        ];
        let mid = rebuild(&old, "S", &env(), Placement::MidTurn);
        let texts: Vec<String> = mid.iter().filter_map(ResponseItem::message_text).collect();
        assert_eq!(texts.len(), 4, "{texts:?}");
        assert_eq!(texts[1], "a question");
        assert!(texts[2].starts_with(SUMMARY_PREFIX));
        // The goal message is the turn's latest input: the summary goes before it.
        assert!(is_goal_context(&texts[3]) && texts[3].contains("new objective"));
    }

    #[test]
    fn rebuild_keeps_instructions_recent_user_messages_and_the_summary() {
        let old = vec![
            ResponseItem::text_message(Role::Developer, "dev rules"),
            ResponseItem::user_text(format!("{USER_INSTRUCTIONS_PREFIX}/w\n\nagents")),
            ResponseItem::user_text(env().render()),
            ResponseItem::user_text("first question"),
            assistant("first answer"),
            ResponseItem::user_text(TURN_ABORTED_MARKER),
            ResponseItem::user_text("second question"),
            assistant("second answer"),
        ];
        let end = rebuild(&old, "S", &env(), Placement::End);
        let texts: Vec<String> = end.iter().filter_map(ResponseItem::message_text).collect();
        assert_eq!(texts[0], "dev rules");
        assert!(texts[1].starts_with(USER_INSTRUCTIONS_PREFIX));
        assert!(texts[2].starts_with(ENVIRONMENT_CONTEXT_OPEN_TAG));
        assert_eq!(texts[3], "first question");
        assert_eq!(texts[4], "second question");
        assert!(texts[5].starts_with(SUMMARY_PREFIX) && texts[5].ends_with('S'));
        assert_eq!(texts.len(), 6);

        let mid = rebuild(&old, "S", &env(), Placement::MidTurn);
        let texts: Vec<String> = mid.iter().filter_map(ResponseItem::message_text).collect();
        assert!(texts[4].starts_with(SUMMARY_PREFIX));
        assert_eq!(texts[5], "second question");

        // A second compaction does not keep the first summary as a user message.
        let again = rebuild(&end, "T", &env(), Placement::End);
        let summaries = again
            .iter()
            .filter_map(ResponseItem::message_text)
            .filter(|t| t.starts_with(SUMMARY_PREFIX))
            .count();
        assert_eq!(summaries, 1);
    }

    #[test]
    fn rebuild_respects_the_budget_and_replaces_old_images() {
        let big = "x".repeat((KEPT_USER_TOKENS as usize) * 4);
        let old = vec![
            ResponseItem::user_message(vec![ContentItem::InputImage {
                image_url: "data:image/png;base64,AA".into(),
                detail: None,
            }]),
            ResponseItem::user_text("old"),
            ResponseItem::user_text(big),
            ResponseItem::user_text("newest"),
        ];
        let rebuilt = rebuild(&old, "S", &env(), Placement::End);
        let texts: Vec<String> = rebuilt
            .iter()
            .filter_map(ResponseItem::message_text)
            .collect();
        // The big message is cut to what is left of the budget; older ones are dropped.
        assert!(
            texts
                .iter()
                .any(|t| t.ends_with("[truncated when compacting]"))
        );
        assert!(!texts.iter().any(|t| t == "old"));
        assert!(texts.iter().any(|t| t == "newest"));
        let total: u64 = rebuilt
            .iter()
            .filter(|i| is_real_user_message(i))
            .map(approx_tokens)
            .sum();
        assert!(total <= KEPT_USER_TOKENS + 64, "{total}");

        let with_image = vec![
            ResponseItem::user_message(vec![ContentItem::InputImage {
                image_url: "data:image/png;base64,AA".into(),
                detail: None,
            }]),
            ResponseItem::user_text("latest"),
        ];
        let rebuilt = rebuild(&with_image, "S", &env(), Placement::End);
        let json = serde_json::to_string(&rebuilt).unwrap();
        assert!(json.contains(IMAGE_PLACEHOLDER));
        assert!(!json.contains("data:image"));
    }

    #[test]
    fn trimming_drops_the_oldest_items_and_keeps_pairs() {
        let items = vec![
            ResponseItem::text_message(Role::Developer, "dev"),
            ResponseItem::user_text(env().render()),
            ResponseItem::user_text("q1"),
            ResponseItem::FunctionCall {
                id: None,
                name: "exec_command".into(),
                namespace: None,
                arguments: "{}".into(),
                call_id: "c1".into(),
            },
            ResponseItem::function_call_output("c1", "out"),
            ResponseItem::user_text("q2"),
        ];
        let trimmed = trimmed_for_summary(&items, 2);
        let json = serde_json::to_string(&trimmed).unwrap();
        assert!(json.contains("dev") && json.contains(ENVIRONMENT_CONTEXT_OPEN_TAG));
        assert!(!json.contains("q1") && !json.contains("\"c1\""));
        assert!(json.contains("q2"));
    }

    #[test]
    fn empty_summary_is_named() {
        assert!(summary_text("  ").ends_with("(no summary available)"));
    }
}
