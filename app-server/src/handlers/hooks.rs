//! `hooks/list`: the configured stop hooks, the same for every cwd (Weft reads hooks only
//! from its own config), with the entries that were skipped (docs/protocol.md §7.22).

use std::sync::Arc;

use weft_core::hooks::listing::list_stop_hooks;
use weft_protocol::ThreadId;
use weft_protocol::hooks_api::{HookErrorInfo, HooksListEntry, HooksListParams, HooksListResponse};
use weft_protocol::jsonrpc::JsonRpcError;

use crate::connection::Connection;
use crate::handlers::{daemon_cwd, loaded_thread};
use crate::state::AppState;

/// `hooks/list`: one entry per cwd (or for the thread's cwd).
pub async fn list(
    state: &AppState,
    _connection: &Arc<Connection>,
    params: HooksListParams,
) -> Result<HooksListResponse, JsonRpcError> {
    let cwds = match params.thread_id {
        Some(_) if !params.cwds.is_empty() => {
            return Err(JsonRpcError::invalid_request(
                "specify either threadId or cwds",
            ));
        }
        Some(thread_id) => {
            let handle = loaded_thread(state, &ThreadId::from(thread_id.as_str()))?;
            let snapshot = handle.snapshot().await?;
            vec![snapshot.thread.cwd]
        }
        None if params.cwds.is_empty() => vec![daemon_cwd().display().to_string()],
        None => params.cwds,
    };
    let hooks = &state.config.hooks;
    let listed = list_stop_hooks(hooks);
    let errors: Vec<HookErrorInfo> = hooks
        .errors
        .iter()
        .map(|err| HookErrorInfo {
            path: err.path.clone(),
            message: err.message.clone(),
        })
        .collect();
    Ok(HooksListResponse {
        data: cwds
            .into_iter()
            .map(|cwd| HooksListEntry {
                cwd,
                hooks: listed.clone(),
                warnings: hooks.warnings.clone(),
                errors: errors.clone(),
            })
            .collect(),
    })
}
