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
    /// Adds another breakdown field by field, saturating: the counts come from the model
    /// provider, and a sum past `i64::MAX` stays at `i64::MAX` (never wraps negative).
    pub fn add(&mut self, other: &TokenUsageBreakdown) {
        let sum = |a: &mut i64, b: i64| *a = a.saturating_add(b);
        sum(&mut self.total_tokens, other.total_tokens);
        sum(&mut self.input_tokens, other.input_tokens);
        sum(&mut self.cached_input_tokens, other.cached_input_tokens);
        sum(
            &mut self.cache_write_input_tokens,
            other.cache_write_input_tokens,
        );
        sum(&mut self.output_tokens, other.output_tokens);
        sum(
            &mut self.reasoning_output_tokens,
            other.reasoning_output_tokens,
        );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn all(n: i64) -> TokenUsageBreakdown {
        TokenUsageBreakdown {
            total_tokens: n,
            input_tokens: n,
            cached_input_tokens: n,
            cache_write_input_tokens: n,
            output_tokens: n,
            reasoning_output_tokens: n,
        }
    }

    #[test]
    fn sums_saturate_instead_of_wrapping() {
        let mut total = all(i64::MAX);
        total.add(&all(i64::MAX));
        assert_eq!(total, all(i64::MAX));
        let mut total = all(i64::MIN);
        total.add(&all(-1));
        assert_eq!(total, all(i64::MIN));
        let mut total = all(2);
        total.add(&all(3));
        assert_eq!(total, all(5));
    }
}
