//! `hooks/list`: the configured stop hooks, the same for every cwd (Weft reads hooks only
//! from its own config), with the entries that were skipped (docs/protocol.md §7.22).

use weft_core::hooks::listing::list_stop_hooks;
use weft_protocol::ThreadId;
use weft_protocol::hooks_api::{HookErrorInfo, HooksListEntry, HooksListParams, HooksListResponse};
use weft_protocol::jsonrpc::JsonRpcError;

use crate::dispatch::{Context, HandlerResult};
use crate::handlers::{daemon_cwd, loaded_thread};

/// `hooks/list`: one entry per cwd (or for the thread's cwd).
pub async fn list(cx: Context<'_>, params: HooksListParams) -> HandlerResult<HooksListResponse> {
    let cwds = match params.thread_id {
        Some(_) if !params.cwds.is_empty() => {
            return Err(JsonRpcError::invalid_request(
                "specify either threadId or cwds",
            ));
        }
        Some(thread_id) => {
            let handle = loaded_thread(cx.state, &ThreadId::from(thread_id.as_str()))?;
            let snapshot = handle.snapshot().await?;
            vec![snapshot.thread.cwd]
        }
        None if params.cwds.is_empty() => vec![daemon_cwd().display().to_string()],
        None => params.cwds,
    };
    let hooks = &cx.state.config.hooks;
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
