//! Paginated history: `thread/turns/list` and `thread/items/list` (experimental; docs/protocol.md
//! §7.24).

use weft_protocol::history_api::{
    ThreadItemsListParams, ThreadItemsListResponse, ThreadTurnsListParams, ThreadTurnsListResponse,
};
use weft_protocol::jsonrpc::JsonRpcError;

use crate::dispatch::{Context, HandlerResult};

/// `thread/turns/list`.
pub async fn turns_list(
    cx: Context<'_>,
    params: ThreadTurnsListParams,
) -> HandlerResult<ThreadTurnsListResponse> {
    cx.state
        .threads
        .list_turns(params)
        .await
        .map(ThreadTurnsListResponse::from)
        .map_err(JsonRpcError::from)
}

/// `thread/items/list`.
pub async fn items_list(
    cx: Context<'_>,
    params: ThreadItemsListParams,
) -> HandlerResult<ThreadItemsListResponse> {
    Ok(cx.state.threads.list_items(params).await?)
}
