//! `feedback/save` (docs/protocol.md §7.37): a local feedback bundle, written by
//! `weft_core::feedback` on the blocking pool. (`feedback/upload` sends the report to OpenAI
//! and is not served.)

use weft_core::feedback::{FeedbackRequest, save as save_bundle};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{FeedbackSaveParams, FeedbackSaveResponse};

use crate::dispatch::{Context, HandlerResult};

/// `feedback/save`.
pub async fn save(
    cx: Context<'_>,
    params: FeedbackSaveParams,
) -> HandlerResult<FeedbackSaveResponse> {
    let config = &cx.state.threads.services().config;
    let (home, max_bytes) = (config.home.clone(), config.limits.feedback_bundle_bytes);
    let request = FeedbackRequest {
        classification: params.classification,
        reason: params.reason,
        tags: params.tags.unwrap_or_default(),
        thread_id: params.thread_id,
        include_logs: params.include_logs,
        extra_log_files: params.extra_log_files.unwrap_or_default(),
        save_path: params.save_path,
    };
    let saved = tokio::task::spawn_blocking(move || save_bundle(&home, &request, max_bytes))
        .await
        .map_err(|err| JsonRpcError::internal(format!("failed to save feedback: {err}")))??;
    Ok(FeedbackSaveResponse {
        prompt_hash: saved.prompt_hash,
        saved_path: saved.saved_path,
        thread_id: saved.thread_id,
    })
}
