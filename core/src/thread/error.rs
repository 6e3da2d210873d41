//! Why a request to a thread, or to the thread manager, failed. Each `Display` is the exact
//! text a client (or the daemon's stderr) sees.

use std::path::PathBuf;

use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{CodexErrorInfo, NonSteerableTurnKind, TurnError};

use crate::rollout::RolloutError;
use crate::state::StateError;

/// Why a request to a thread was refused. `Display` is the exact client-facing message.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// `turn/steer` on an idle thread.
    #[error("no active turn to steer")]
    NoActiveTurnToSteer,
    /// `turn/steer` with the wrong expected turn id.
    #[error("expected active turn id `{expected}` but found `{active}`")]
    SteerTurnMismatch {
        /// What the client expected.
        expected: String,
        /// What is running.
        active: String,
    },
    /// Empty input.
    #[error("input must not be empty")]
    EmptyInput,
    /// `expectedTurnId: ""`.
    #[error("expectedTurnId must not be empty")]
    EmptyExpectedTurnId,
    /// Steering into a review or compaction turn.
    #[error("cannot steer a {} turn", match .0 { NonSteerableTurnKind::Review => "review", NonSteerableTurnKind::Compact => "compact" })]
    NotSteerable(NonSteerableTurnKind),
    /// StartIfIdle on a busy thread.
    #[error("thread is busy with turn {0}")]
    Busy(String),
    /// `turn/interrupt` on an idle thread.
    #[error("no active turn to interrupt")]
    NoActiveTurnToInterrupt,
    /// `turn/interrupt` with the wrong turn id.
    #[error("expected active turn id {expected} but found {active}")]
    InterruptTurnMismatch {
        /// What the client gave.
        expected: String,
        /// What is running.
        active: String,
    },
    /// The thread is not loaded (or its actor has stopped).
    #[error("thread not found: {0}")]
    ThreadNotFound(String),
    /// The settings name a provider that is not in `model_providers`.
    #[error("unknown model provider `{0}`")]
    UnknownProvider(String),
    /// The thread's cwd is not an existing directory.
    #[error("cwd is not a directory: {}", .0.display())]
    CwdNotADirectory(PathBuf),
    /// No cwd was given and the daemon's own cannot be read.
    #[error("cannot read the daemon's cwd: {0}")]
    DaemonCwd(#[source] std::io::Error),
    /// `thread/fork` through a turn the source thread does not have.
    #[error("turn not found: {0}")]
    ForkTurnNotFound(String),
    /// `thread/fork` through a turn that has not ended.
    #[error("turn is still in progress: {0}")]
    ForkTurnInProgress(String),
    /// The thread's request queue is full.
    #[error("Server overloaded; retry later.")]
    Overloaded,
    /// `thread/name/set` on an ephemeral thread.
    #[error("ephemeral thread does not support metadata updates: {0}")]
    EphemeralMetadata(String),
    /// A stored thread that cannot be found (or is ephemeral, or archived).
    #[error("no rollout found for thread id {0}")]
    NoRollout(String),
    /// `thread/unarchive` of a thread that is not archived.
    #[error("no archived rollout found for thread id {0}")]
    NoArchivedRollout(String),
    /// `thread/read` of an unknown thread.
    #[error("thread not loaded: {0}")]
    NotLoaded(String),
    /// `thread/name/set` with an empty name.
    #[error("thread name must not be empty")]
    EmptyName,
    /// A new turn on a thread whose rollout could not be written (the disk is full, …) and
    /// still cannot: nothing more is accepted until what it holds is on disk.
    #[error("thread {thread} cannot start a turn until its rollout can be written again: {source}")]
    RolloutNotWritable {
        /// The thread.
        thread: String,
        /// The last write error.
        #[source]
        source: RolloutError,
    },
    /// Storage failed (rollout or state DB); the text is the underlying error's.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// `runtimeWorkspaceRoots` other than the thread's cwd.
    #[error("runtimeWorkspaceRoots other than the thread's cwd are not supported by Weft")]
    WorkspaceRoots,
    /// `thread/revert {restoreWorkspace: true}` refused or failed (docs/protocol.md §7.27);
    /// the text says why.
    #[error("{0}")]
    RestoreWorkspace(String),
    /// `permissions` names a profile Weft does not have.
    #[error(transparent)]
    PermissionProfile(#[from] crate::permissions::PermissionProfileError),
    /// A thread-management request refused (docs/protocol.md §7.36); the text says why.
    #[error("{0}")]
    Refused(String),
}

impl From<CoreError> for JsonRpcError {
    /// `-32600` with the error's message (and, for non-steerable turns, the `TurnError`
    /// data); `-32001` for a full request queue.
    fn from(err: CoreError) -> JsonRpcError {
        let message = err.to_string();
        match err {
            CoreError::NotSteerable(kind) => {
                let data = TurnError {
                    message: message.clone(),
                    codex_error_info: Some(CodexErrorInfo::ActiveTurnNotSteerable {
                        turn_kind: kind,
                    }),
                    additional_details: None,
                    misalignment: None,
                };
                JsonRpcError::invalid_request(message)
                    .with_data(serde_json::to_value(data).unwrap_or(serde_json::Value::Null))
            }
            CoreError::Overloaded => JsonRpcError::overloaded(),
            _ => JsonRpcError::invalid_request(message),
        }
    }
}

/// A rollout, state DB or blocking file task failure behind a [`CoreError::Storage`].
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// Reading, writing or moving a rollout failed.
    #[error(transparent)]
    Rollout(#[from] RolloutError),
    /// The state DB failed.
    #[error(transparent)]
    State(#[from] StateError),
    /// The blocking task that did the file work panicked or was cancelled.
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
}

impl From<RolloutError> for CoreError {
    fn from(err: RolloutError) -> CoreError {
        CoreError::Storage(StorageError::Rollout(err))
    }
}

impl From<StateError> for CoreError {
    fn from(err: StateError) -> CoreError {
        CoreError::Storage(StorageError::State(err))
    }
}

impl From<tokio::task::JoinError> for CoreError {
    fn from(err: tokio::task::JoinError) -> CoreError {
        CoreError::Storage(StorageError::Task(err))
    }
}

/// Why [`ThreadManager::open`](super::ThreadManager::open) failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The state DB could not be opened, migrated or rebuilt from the rollouts.
    #[error("cannot open the state DB: {0}")]
    StateDb(#[source] StateError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_rpc_errors_keep_the_reference_codes_and_texts() {
        let busy = JsonRpcError::from(CoreError::Busy("t1".into()));
        assert_eq!(
            (busy.code, busy.message.as_str()),
            (-32600, "thread is busy with turn t1")
        );
        assert_eq!(busy.data, None);
        let full = JsonRpcError::from(CoreError::Overloaded);
        assert_eq!(full.code, JsonRpcError::overloaded().code);
        assert_eq!(full.message, JsonRpcError::overloaded().message);
        let compact = JsonRpcError::from(CoreError::NotSteerable(NonSteerableTurnKind::Compact));
        assert_eq!(compact.code, -32600);
        assert_eq!(compact.message, "cannot steer a compact turn");
        let data = compact.data.expect("the TurnError rides along");
        assert_eq!(data["message"], "cannot steer a compact turn");
        assert_eq!(
            data["codexErrorInfo"]["activeTurnNotSteerable"]["turnKind"],
            "compact"
        );
    }
}
