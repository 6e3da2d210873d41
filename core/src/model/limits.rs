//! Bounds on what a model's stream may make the daemon allocate (docs/architecture.md §7.6).
//!
//! Everything a provider sends is untrusted input: an index is never used to size a vector
//! and a fragment is never buffered without a cap. A stream that goes past one of these limits
//! ends with [`ModelError::Malformed`](super::ModelError::Malformed), which fails that turn
//! (not retried: the same request would be answered the same way) and nothing else.

/// Parts of one reasoning item's summary or content: `summary_index` / `content_index` must be
/// below this. Real responses use a handful.
pub const MAX_REASONING_PARTS: i64 = 256;

/// Tool calls assembled from one Chat Completions response (distinct call slots).
pub const MAX_CHAT_TOOL_CALLS: usize = 256;

/// Bytes of one SSE event (its unfinished line plus the `data` gathered so far).
pub const MAX_SSE_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Whether a model-supplied part index is usable: `0..MAX_REASONING_PARTS`.
pub fn part_index_ok(index: i64) -> bool {
    (0..MAX_REASONING_PARTS).contains(&index)
}
