//! The model client: one streaming interface over the Responses API and Chat Completions.
//!
//! [`ModelClient::stream`] sends a [`Prompt`] and returns a [`ResponseStream`] of
//! [`ResponseEvent`]s; both wire APIs map onto that one stream (docs/architecture.md §7.1). Deltas are for the
//! UI; [`ResponseEvent::OutputItemDone`] carries the final [`ResponseItem`]s that go into history;
//! [`ResponseEvent::Completed`] ends a sampling request.
//!
//! Retries come in two layers (docs/architecture.md §7.4): the client retries the initial request itself
//! (`request_max_retries`: connection errors, timeouts, 5xx, and 429 honouring `Retry-After`);
//! the turn loop re-runs a whole sampling request whose stream failed when
//! [`ModelError::is_retryable`], waiting [`ModelError::retry_after`] or [`backoff`].
//!
//! Layout: `provider` (config), `item` (history items), `prompt` (request + Responses body),
//! `event`, `error` (classification, backoff), `client` (HTTP and retries), `stream` (body
//! reading, idle timeout), `sse` (framing), `responses` / `chat_stream` (decoders),
//! `chat_request` (Chat body), `limits` (bounds on model-supplied indices and sizes), `turn_error` (a failure as the client sees it when it ends a
//! turn).

pub mod catalog;
mod chat_request;
mod chat_stream;
mod client;
mod error;
mod event;
mod item;
pub mod limits;
mod prompt;
pub mod provider;
mod provider_models;
mod responses;
mod roles;
mod sse;
mod stream;
#[cfg(test)]
pub(crate) mod test_support;
mod turn_error;

pub use client::ModelClient;
pub(crate) use error::error_chain;
pub use error::{MAX_BACKOFF, MAX_RETRY_AFTER, ModelError, backoff};
pub use event::{ResponseEvent, TokenUsage};
pub use item::{
    ContentItem, MessagePhase, ReasoningContent, ResponseItem, Role, SummaryPart, ToolOutput,
};
pub use prompt::Prompt;
pub use provider::{ProviderConfig, WireApi};
pub use provider_models::provider_models;
pub use stream::ResponseStream;
pub use turn_error::turn_error;
