//! How a model failure is told to the client when it ends a turn: the turn loop and the
//! compaction both import it from here (so neither imports the other).

use weft_protocol::{CodexErrorInfo, TurnError};

use super::ModelError;

/// The client-facing error of a failed turn.
pub fn turn_error(err: &ModelError) -> TurnError {
    let status = err.http_status();
    let (message, info) = if err.is_context_window_exceeded() {
        (
            "Weft ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.".to_string(),
            CodexErrorInfo::ContextWindowExceeded,
        )
    } else if err.is_retryable() {
        (
            err.to_string(),
            CodexErrorInfo::ResponseTooManyFailedAttempts {
                http_status_code: status,
            },
        )
    } else {
        (err.to_string(), err.error_info())
    };
    TurnError {
        message,
        codex_error_info: Some(info),
        additional_details: None,
        misalignment: None,
    }
}
