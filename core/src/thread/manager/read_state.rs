//! The clients' read marks, `thread/readState/update` (docs/protocol.md §7.26): a loaded
//! durable thread is marked read or unread in the state DB, guarded by the revision the client
//! saw.

use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{ThreadId, ThreadReadState, ThreadReadStateUpdateParams};

use super::ThreadManager;
use crate::state::{ReadStateError, StateError};

/// Why a read mark was refused. `Display` is the client-facing message.
#[derive(Debug, thiserror::Error)]
pub enum ReadMarkError {
    /// Not loaded, or loaded but ephemeral (no row, so no read state).
    #[error("thread not loaded: {0}")]
    NotLoaded(ThreadId),
    /// The expected revision is not the current one; the current state rides along.
    #[error("read state changed")]
    Conflict(ThreadReadState),
    /// The state DB failed.
    #[error(transparent)]
    State(#[from] StateError),
}

impl From<ReadMarkError> for JsonRpcError {
    /// `-32600` for a thread that is not loaded and for a conflict (the reference's, with the
    /// current state in `data`), `-32603` for a failing DB.
    fn from(err: ReadMarkError) -> JsonRpcError {
        match err {
            ReadMarkError::Conflict(current) => JsonRpcError::invalid_request("read state changed")
                .with_data(serde_json::json!({
                    "reason": "readStateConflict",
                    "readState": current,
                })),
            ReadMarkError::State(err) => JsonRpcError::internal(err.to_string()),
            not_loaded => JsonRpcError::invalid_request(not_loaded.to_string()),
        }
    }
}

impl ThreadManager {
    /// `thread/readState/update`: the thread's new read state.
    pub async fn mark_read_state(
        &self,
        params: &ThreadReadStateUpdateParams,
    ) -> Result<ThreadReadState, ReadMarkError> {
        let id = &params.thread_id;
        let not_loaded = || ReadMarkError::NotLoaded(id.clone());
        if self.get(id).is_none() {
            return Err(not_loaded());
        }
        let db = self.services.state.as_ref().ok_or_else(not_loaded)?;
        if db.get(id).await?.is_none() {
            return Err(not_loaded());
        }
        db.update_read_state(id, params.operation, &params.expected_revision)
            .await
            .map_err(|err| match err {
                ReadStateError::Conflict(current) => ReadMarkError::Conflict(current),
                ReadStateError::State(err) => ReadMarkError::State(err),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_carries_the_current_state() {
        let current = ThreadReadState::initial(&"t".into());
        let err = JsonRpcError::from(ReadMarkError::Conflict(current));
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

    #[test]
    fn a_thread_not_loaded_is_named() {
        let err = JsonRpcError::from(ReadMarkError::NotLoaded("t".into()));
        assert_eq!(err.code, -32600);
        assert_eq!(err.message, "thread not loaded: t");
    }
}
