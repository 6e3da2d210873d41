//! Paginated history: `thread/turns/list` and `thread/items/list` (experimental; docs/protocol.md
//! §7.24).

use weft_core::thread::PageError;
use weft_protocol::history_api::{
    ThreadItemsListParams, ThreadItemsListResponse, ThreadTurnsListParams, ThreadTurnsListResponse,
};
use weft_protocol::jsonrpc::JsonRpcError;

use crate::handlers::{core_error, parse_thread_id};
use crate::state::AppState;

/// A page error as the reference answers it.
pub fn page_error(err: PageError) -> JsonRpcError {
    match err {
        PageError::Core(err) => core_error(err),
        other => JsonRpcError::new(other.code(), other.to_string()),
    }
}

/// `thread/turns/list`.
pub async fn turns_list(
    state: &AppState,
    params: ThreadTurnsListParams,
) -> Result<ThreadTurnsListResponse, JsonRpcError> {
    parse_thread_id(&params.thread_id)?;
    state
        .threads
        .list_turns(params)
        .await
        .map(ThreadTurnsListResponse::from)
        .map_err(page_error)
}

/// `thread/items/list`.
pub async fn items_list(
    state: &AppState,
    params: ThreadItemsListParams,
) -> Result<ThreadItemsListResponse, JsonRpcError> {
    parse_thread_id(&params.thread_id)?;
    state.threads.list_items(params).await.map_err(page_error)
}
