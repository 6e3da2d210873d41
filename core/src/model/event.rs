//! [`ResponseEvent`]: the one internal stream both wire APIs are mapped onto.

use serde::{Deserialize, Serialize};

use super::item::ResponseItem;

/// One event of a model response stream.
///
/// Deltas are for the UI only; [`ResponseEvent::OutputItemDone`] is the source of truth for
/// history and tool dispatch; [`ResponseEvent::Completed`] ends the sampling request.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseEvent {
    /// The server accepted the request (`response.created`).
    Created,
    /// An output item started; it may be partial (empty text, empty arguments).
    OutputItemAdded(ResponseItem),
    /// Text appended to the assistant message `item_id`. `item_id` may be empty when the
    /// server did not name the item: attribute the delta to the active item then.
    OutputTextDelta {
        /// The message being written.
        item_id: String,
        /// The new text.
        delta: String,
    },
    /// A new reasoning summary part started.
    ReasoningSummaryPartAdded {
        /// The reasoning item.
        item_id: String,
        /// Index of the new part.
        summary_index: i64,
    },
    /// Text appended to a reasoning summary part.
    ReasoningSummaryDelta {
        /// The reasoning item.
        item_id: String,
        /// Which summary part.
        summary_index: i64,
        /// The new text.
        delta: String,
    },
    /// Raw reasoning text appended (gpt-oss style servers, Chat `reasoning_content`).
    ReasoningContentDelta {
        /// The reasoning item.
        item_id: String,
        /// Which content part.
        content_index: i64,
        /// The new text.
        delta: String,
    },
    /// An output item is final: record it in history (and dispatch it if it is a tool call).
    OutputItemDone(ResponseItem),
    /// The response ended normally. Nothing follows.
    Completed {
        /// `response.id` (Chat: the chunk id, or empty).
        response_id: String,
        /// Usage, when the server reported it.
        token_usage: Option<TokenUsage>,
        /// `end_turn` of the response (or of its last assistant message that carried one);
        /// `None` when the server said nothing (always on Chat).
        end_turn: Option<bool>,
    },
}

/// Token counts of one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: i64,
    /// Prompt tokens served from the cache.
    pub cached_input_tokens: i64,
    /// Generated tokens, reasoning included.
    pub output_tokens: i64,
    /// Generated reasoning tokens.
    pub reasoning_output_tokens: i64,
    /// Input plus output.
    pub total_tokens: i64,
}
