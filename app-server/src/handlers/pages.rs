//! Paginated history: `thread/turns/list` and `thread/items/list` (experimental; docs/protocol.md
//! §7.24).

use std::sync::Arc;

use weft_protocol::history_api::{
    ThreadItemsListParams, ThreadItemsListResponse, ThreadTurnsListParams, ThreadTurnsListResponse,
};
use weft_protocol::jsonrpc::JsonRpcError;

use crate::connection::Connection;
use crate::handlers::parse_thread_id;
use crate::state::AppState;

/// `thread/turns/list`.
pub async fn turns_list(
    state: &AppState,
    _connection: &Arc<Connection>,
    params: ThreadTurnsListParams,
) -> Result<ThreadTurnsListResponse, JsonRpcError> {
    parse_thread_id(&params.thread_id)?;
    state
        .threads
        .list_turns(params)
        .await
        .map(ThreadTurnsListResponse::from)
        .map_err(JsonRpcError::from)
}

/// `thread/items/list`.
pub async fn items_list(
    state: &AppState,
    _connection: &Arc<Connection>,
    params: ThreadItemsListParams,
) -> Result<ThreadItemsListResponse, JsonRpcError> {
    parse_thread_id(&params.thread_id)?;
    Ok(state.threads.list_items(params).await?)
}
