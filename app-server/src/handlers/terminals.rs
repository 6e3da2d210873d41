//! `thread/backgroundTerminals/list|terminate|clean` (experimental): the commands a thread's
//! `exec_command` calls left running as sessions (docs/protocol.md §7.26).

use weft_core::thread::ThreadHandle;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{
    ThreadBackgroundTerminal, ThreadBackgroundTerminalsCleanParams,
    ThreadBackgroundTerminalsCleanResponse, ThreadBackgroundTerminalsListParams,
    ThreadBackgroundTerminalsListResponse, ThreadBackgroundTerminalsTerminateParams,
    ThreadBackgroundTerminalsTerminateResponse, ThreadId,
};

use crate::dispatch::{Context, HandlerResult};
use crate::state::AppState;

/// `thread/backgroundTerminals/list`: running sessions in session order, `limit` per page
/// (all by default); the cursor is the last session id of the previous page.
pub async fn list(
    cx: Context<'_>,
    params: ThreadBackgroundTerminalsListParams,
) -> HandlerResult<ThreadBackgroundTerminalsListResponse> {
    let Some(handle) = thread(cx.state, &params.thread_id).await? else {
        return Ok(ThreadBackgroundTerminalsListResponse {
            data: Vec::new(),
            next_cursor: None,
        });
    };
    let after = match params.cursor.as_deref() {
        None => None,
        Some(cursor) => Some(
            cursor
                .parse::<u64>()
                .map_err(|_| JsonRpcError::invalid_request(format!("invalid cursor: {cursor}")))?,
        ),
    };
    let tools = handle.tools().await?;
    let mut terminals: Vec<_> = tools
        .background_terminals()
        .into_iter()
        .filter(|t| after.is_none_or(|after| t.session_id > after))
        .collect();
    let limit = params.limit.map(|l| l.max(1) as usize);
    let next_cursor = match limit {
        Some(limit) if terminals.len() > limit => {
            terminals.truncate(limit);
            terminals.last().map(|t| t.session_id.to_string())
        }
        _ => None,
    };
    let data = terminals
        .into_iter()
        .map(|t| ThreadBackgroundTerminal {
            process_id: t.session_id.to_string(),
            item_id: t.item_id,
            command: t.command,
            cwd: t.cwd,
            os_pid: Some(t.pid),
            cpu_percent: None,
            rss_kb: t.rss_kb,
        })
        .collect();
    Ok(ThreadBackgroundTerminalsListResponse { data, next_cursor })
}

/// `thread/backgroundTerminals/terminate`: `terminated: false` when no such session runs.
pub async fn terminate(
    cx: Context<'_>,
    params: ThreadBackgroundTerminalsTerminateParams,
) -> HandlerResult<ThreadBackgroundTerminalsTerminateResponse> {
    let Some(handle) = thread(cx.state, &params.thread_id).await? else {
        return Ok(ThreadBackgroundTerminalsTerminateResponse { terminated: false });
    };
    let Ok(session_id) = params.process_id.parse::<u64>() else {
        return Ok(ThreadBackgroundTerminalsTerminateResponse { terminated: false });
    };
    let tools = handle.tools().await?;
    let terminated = tools.terminate_terminal(session_id).await;
    Ok(ThreadBackgroundTerminalsTerminateResponse { terminated })
}

/// `thread/backgroundTerminals/clean`: end every background session of the thread.
pub async fn clean(
    cx: Context<'_>,
    params: ThreadBackgroundTerminalsCleanParams,
) -> HandlerResult<ThreadBackgroundTerminalsCleanResponse> {
    if let Some(handle) = thread(cx.state, &params.thread_id).await? {
        let tools = handle.tools().await?;
        tools.clean_terminals().await;
    }
    Ok(ThreadBackgroundTerminalsCleanResponse {})
}

/// The loaded thread; `None` for a stored thread that is not loaded (it runs nothing); the
/// reference's `thread not found` for an unknown one.
async fn thread(state: &AppState, id: &ThreadId) -> Result<Option<ThreadHandle>, JsonRpcError> {
    if let Some(handle) = state.threads.get(id) {
        return Ok(Some(handle));
    }
    let stored = match &state.threads.services().state {
        Some(db) => db
            .get(id)
            .await
            .map_err(|err| JsonRpcError::internal(err.to_string()))?
            .is_some(),
        None => false,
    };
    if stored {
        Ok(None)
    } else {
        Err(JsonRpcError::invalid_request(format!(
            "thread not found: {id}"
        )))
    }
}
