//! Token usage (`thread/tokenUsage/updated`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Token counts of one model request, or a running sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageBreakdown {
    /// Total tokens.
    pub total_tokens: i64,
    /// Input tokens.
    pub input_tokens: i64,
    /// Input tokens served from the cache.
    pub cached_input_tokens: i64,
    /// Input tokens written to the cache.
    #[serde(default)]
    pub cache_write_input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Reasoning output tokens.
    pub reasoning_output_tokens: i64,
}

impl TokenUsageBreakdown {
    /// Adds another breakdown field by field.
    pub fn add(&mut self, other: &TokenUsageBreakdown) {
        self.total_tokens += other.total_tokens;
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cache_write_input_tokens += other.cache_write_input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_output_tokens += other.reasoning_output_tokens;
    }
}

/// Token usage of a thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTokenUsage {
    /// Running sum over the thread.
    pub total: TokenUsageBreakdown,
    /// The latest model request.
    pub last: TokenUsageBreakdown,
    /// Context window of the model, when known.
    #[serde(default)]
    pub model_context_window: Option<i64>,
}
