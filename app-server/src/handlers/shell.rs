//! `thread/shellCommand` (docs/protocol.md §7.30): the user's own shell command, which the
//! thread runs as a task (or inside its running turn). The handler checks the params with the
//! reference's texts and returns the op; the thread answers `{}` before the command's item.

use std::time::Duration;

use weft_core::task::{DEFAULT_USER_SHELL_TIMEOUT, UserShellCommand};
use weft_core::thread::Op;
use weft_protocol::jsonrpc::{INVALID_PARAMS, JsonRpcError};
use weft_protocol::{ThreadShellCommandParams, ThreadShellCommandResponse};

use crate::dispatch::{HandlerResult, ThreadReply};

/// `thread/shellCommand`.
pub fn shell_command(
    params: ThreadShellCommandParams,
    reply: ThreadReply<ThreadShellCommandResponse>,
) -> HandlerResult<Op> {
    let command = checked(params)?;
    Ok(Op::ShellCommand {
        command,
        reply: reply.into_core(|()| ThreadShellCommandResponse {}),
    })
}

/// The command to run: trimmed, not empty; the timeout one hour when absent, never negative.
fn checked(params: ThreadShellCommandParams) -> Result<UserShellCommand, JsonRpcError> {
    let timeout = match params.timeout_ms {
        None => DEFAULT_USER_SHELL_TIMEOUT,
        Some(ms) => match u64::try_from(ms) {
            Ok(ms) => Duration::from_millis(ms),
            Err(_) => {
                return Err(JsonRpcError::new(
                    INVALID_PARAMS,
                    format!("thread/shellCommand timeoutMs must be non-negative, got {ms}"),
                ));
            }
        },
    };
    let command = params.command.trim();
    if command.is_empty() {
        return Err(JsonRpcError::invalid_request("command must not be empty"));
    }
    Ok(UserShellCommand {
        command: command.to_string(),
        timeout,
    })
}

#[cfg(test)]
mod tests {
    use weft_protocol::ThreadId;
    use weft_protocol::jsonrpc::INVALID_REQUEST;

    use super::*;

    fn params(command: &str, timeout_ms: Option<i64>) -> ThreadShellCommandParams {
        ThreadShellCommandParams {
            thread_id: ThreadId::from("t".to_string()),
            command: command.to_string(),
            timeout_ms,
        }
    }

    #[test]
    fn the_timeout_defaults_to_an_hour_and_zero_stays_zero() {
        let command = checked(params("  ls | wc -l \n", None)).unwrap();
        assert_eq!(command.command, "ls | wc -l");
        assert_eq!(command.timeout, Duration::from_secs(3600));
        let zero = checked(params("ls", Some(0))).unwrap();
        assert_eq!(zero.timeout, Duration::ZERO);
        let some = checked(params("ls", Some(1500))).unwrap();
        assert_eq!(some.timeout, Duration::from_millis(1500));
    }

    #[test]
    fn a_negative_timeout_and_an_empty_command_are_refused_with_the_reference_texts() {
        let err = checked(params("ls", Some(-5))).unwrap_err();
        assert_eq!(err.code, INVALID_PARAMS);
        assert_eq!(
            err.message,
            "thread/shellCommand timeoutMs must be non-negative, got -5"
        );
        let err = checked(params(" \t", None)).unwrap_err();
        assert_eq!(err.code, INVALID_REQUEST);
        assert_eq!(err.message, "command must not be empty");
    }
}
