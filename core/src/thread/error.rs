//! Why a request to a thread, or to the thread manager, failed.

use weft_protocol::NonSteerableTurnKind;

/// Why a request to a thread was refused. `Display` is the exact client-facing message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    /// Bad thread settings (unknown provider, missing cwd, …).
    #[error("{0}")]
    InvalidSettings(String),
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
    /// Storage failed (rollout or state DB).
    #[error("{0}")]
    Storage(String),
}
