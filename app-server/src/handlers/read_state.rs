//! `thread/readState/update` (experimental): a client marks a loaded durable thread read or
//! unread, guarded by the revision it saw (docs/protocol.md §7.26). The new state goes to
//! the thread's subscribers in `thread/readState/changed` before the response.

use std::sync::Arc;

use weft_core::state::ReadStateError;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{
    ThreadReadStateChangedNotification, ThreadReadStateUpdateParams, ThreadReadStateUpdateResponse,
};

use crate::connection::Connection;
use crate::dispatch::Answer;
use crate::handlers::parse_thread_id;
use crate::state::AppState;

/// `thread/readState/update`.
pub async fn update(
    state: &AppState,
    _connection: &Arc<Connection>,
    params: ThreadReadStateUpdateParams,
) -> Result<Answer<ThreadReadStateUpdateResponse>, JsonRpcError> {
    let thread_id = params.thread_id;
    parse_thread_id(&thread_id)?;
    let not_loaded = || JsonRpcError::invalid_request(format!("thread not loaded: {thread_id}"));
    if state.threads.get(&thread_id).is_none() {
        return Err(not_loaded());
    }
    // Ephemeral threads have no row and no read state.
    let db = state
        .threads
        .services()
        .state
        .as_ref()
        .ok_or_else(not_loaded)?;
    if db
        .get(&thread_id)
        .await
        .map_err(|err| JsonRpcError::internal(err.to_string()))?
        .is_none()
    {
        return Err(not_loaded());
    }
    match db
        .update_read_state(&thread_id, params.operation, &params.expected_revision)
        .await
    {
        Ok(read_state) => {
            let changed = ThreadReadStateChangedNotification {
                thread_id: thread_id.clone(),
                read_state: read_state.clone(),
            };
            Ok(Answer::new(ThreadReadStateUpdateResponse { read_state })
                .before_subscribers(thread_id, changed))
        }
        Err(ReadStateError::Conflict(current)) => Err(conflict(&current)),
        Err(ReadStateError::State(err)) => Err(JsonRpcError::internal(err.to_string())),
    }
}

/// The reference's conflict error: the current state rides along in `data`.
fn conflict(current: &weft_protocol::ThreadReadState) -> JsonRpcError {
    JsonRpcError::invalid_request("read state changed").with_data(serde_json::json!({
        "reason": "readStateConflict",
        "readState": current,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::ThreadReadState;

    #[test]
    fn conflict_carries_the_current_state() {
        let err = conflict(&ThreadReadState::initial(&"t".into()));
        assert_eq!(err.code, -32600);
        assert_eq!(err.message, "read state changed");
        assert_eq!(
            err.data,
            Some(serde_json::json!({
                "reason": "readStateConflict",
                "readState": {"firstUnread": null, "revision": "initial:t"}
            }))
        );
    }
}
