//! Params and results of `command/exec`, `command/exec/write`, `command/exec/resize`,
//! `command/exec/terminate` and the `command/exec/outputDelta` notification
//! (docs/protocol.md §7.32): a command (an argv vector) run outside any thread or turn, under
//! the configured sandbox, optionally in a PTY and with its input and output streamed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::experimental::{Experimental, ExperimentalParams};
use crate::policy::SandboxPolicy;
use crate::thread_api::empty_response;

/// PTY size in character cells for `command/exec` PTY sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandExecTerminalSize {
    /// Terminal height in character cells.
    pub rows: u16,
    /// Terminal width in character cells.
    pub cols: u16,
}

/// Run a standalone command (argv vector) in the server sandbox without creating a thread or
/// turn. The final `command/exec` response is deferred until the process exits and is sent
/// only after all `command/exec/outputDelta` notifications for it have been sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecParams {
    /// Command argv vector. Empty arrays are rejected.
    pub command: Vec<String>,
    /// Optional client-supplied, connection-scoped process id. Required for `tty`,
    /// `streamStdin`, `streamStdoutStderr`, and follow-up `command/exec/write`,
    /// `command/exec/resize`, and `command/exec/terminate` calls.
    #[serde(default)]
    pub process_id: Option<String>,
    /// Enable PTY mode. This implies `streamStdin` and `streamStdoutStderr`.
    #[serde(default)]
    pub tty: bool,
    /// Allow follow-up `command/exec/write` requests to write stdin bytes. Requires a
    /// client-supplied `processId`.
    #[serde(default)]
    pub stream_stdin: bool,
    /// Stream stdout/stderr via `command/exec/outputDelta` notifications. Streamed bytes are
    /// not duplicated into the final response and require a client-supplied `processId`.
    #[serde(default)]
    pub stream_stdout_stderr: bool,
    /// Optional per-stream stdout/stderr capture cap in bytes. When omitted, the server
    /// default applies (`[limits] command_exec_output_bytes_cap`). Cannot be combined with
    /// `disableOutputCap`.
    #[serde(default)]
    #[schemars(extend("format" = "uint", "minimum" = 0.0))]
    pub output_bytes_cap: Option<u64>,
    /// Disable stdout/stderr capture truncation for this request. Cannot be combined with
    /// `outputBytesCap`.
    #[serde(default)]
    pub disable_output_cap: bool,
    /// Disable the timeout entirely for this request. Cannot be combined with `timeoutMs`.
    #[serde(default)]
    pub disable_timeout: bool,
    /// Optional timeout in milliseconds. When omitted, the server default applies
    /// (`[limits] command_exec_timeout_ms`). Cannot be combined with `disableTimeout`.
    #[serde(default)]
    pub timeout_ms: Option<i64>,
    /// Optional working directory. Defaults to the server cwd; a relative one is taken from it.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Optional environment overrides merged into the server-computed environment. Matching
    /// names override inherited values. Set a key to `null` to unset an inherited variable.
    #[serde(default)]
    pub env: Option<BTreeMap<String, Option<String>>>,
    /// Optional initial PTY size in character cells. Only valid when `tty` is true.
    #[serde(default)]
    pub size: Option<CommandExecTerminalSize>,
    /// Optional sandbox policy for this command. Uses the same shape as thread/turn
    /// execution sandbox configuration and defaults to the configured policy when omitted.
    #[serde(default)]
    pub sandbox_policy: Option<SandboxPolicy>,
    /// Optional active permissions profile id for this command (experimental). Defaults to
    /// the user's configured permissions when omitted. Cannot be combined with
    /// `sandboxPolicy`.
    #[serde(default)]
    pub permission_profile: Option<String>,
}

impl Experimental for CommandExecParams {
    const PARAMS: ExperimentalParams = ExperimentalParams {
        served: &["permissionProfile"],
        unsupported: &[],
        empty_only: &[],
        flags: &[],
    };
}

/// Final buffered result for `command/exec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecResponse {
    /// Process exit code (124 when the timeout ended it).
    pub exit_code: i32,
    /// Buffered stdout capture. Empty when stdout was streamed via
    /// `command/exec/outputDelta`.
    pub stdout: String,
    /// Buffered stderr capture. Empty when stderr was streamed via
    /// `command/exec/outputDelta`.
    pub stderr: String,
}

/// Write stdin bytes to a running `command/exec` session, close stdin, or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecWriteParams {
    /// Client-supplied, connection-scoped `processId` from the original `command/exec`
    /// request.
    pub process_id: String,
    /// Optional base64-encoded stdin bytes to write.
    #[serde(default)]
    pub delta_base64: Option<String>,
    /// Close stdin after writing `deltaBase64`, if present.
    #[serde(default)]
    pub close_stdin: bool,
}

/// Resize a running PTY-backed `command/exec` session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecResizeParams {
    /// Client-supplied, connection-scoped `processId` from the original `command/exec`
    /// request.
    pub process_id: String,
    /// New PTY size in character cells.
    pub size: CommandExecTerminalSize,
}

/// Terminate a running `command/exec` session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecTerminateParams {
    /// Client-supplied, connection-scoped `processId` from the original `command/exec`
    /// request.
    pub process_id: String,
}

empty_response! {
    /// Empty success response for `command/exec/write`.
    CommandExecWriteResponse;
    /// Empty success response for `command/exec/resize`.
    CommandExecResizeResponse;
    /// Empty success response for `command/exec/terminate`.
    CommandExecTerminateResponse;
}

/// Stream label for `command/exec/outputDelta` notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecOutputStream {
    /// stdout stream. PTY mode multiplexes terminal output here.
    Stdout,
    /// stderr stream.
    Stderr,
}

/// Base64-encoded output chunk emitted for a streaming `command/exec` request. These
/// notifications are connection-scoped: if the originating connection closes, the server
/// terminates the process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecOutputDeltaNotification {
    /// Client-supplied, connection-scoped `processId` from the original `command/exec`
    /// request.
    pub process_id: String,
    /// Output stream for this chunk.
    pub stream: CommandExecOutputStream,
    /// Base64-encoded output bytes.
    pub delta_base64: String,
    /// `true` on the final streamed chunk for a stream when `outputBytesCap` truncated later
    /// output on that stream.
    pub cap_reached: bool,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_command_is_required() {
        let params: CommandExecParams =
            serde_json::from_value(json!({"command": ["true"]})).unwrap();
        assert_eq!(
            params,
            CommandExecParams {
                command: vec!["true".to_string()],
                ..CommandExecParams::default()
            }
        );
        let params: CommandExecParams = serde_json::from_value(json!({
            "command": ["sh"], "processId": "p", "tty": true, "size": {"rows": 5, "cols": 7},
            "env": {"A": "1", "B": null}, "timeoutMs": -1, "outputBytesCap": 3,
            "sandboxPolicy": {"type": "readOnly"}
        }))
        .unwrap();
        assert_eq!(
            params.size,
            Some(CommandExecTerminalSize { rows: 5, cols: 7 })
        );
        let env = params.env.unwrap();
        assert_eq!(env["A"], Some("1".to_string()));
        assert_eq!(env["B"], None);
        assert_eq!(params.timeout_ms, Some(-1));
    }

    #[test]
    fn the_delta_and_the_response_use_the_reference_names() {
        let delta = CommandExecOutputDeltaNotification {
            process_id: "p".to_string(),
            stream: CommandExecOutputStream::Stderr,
            delta_base64: "aGk=".to_string(),
            cap_reached: false,
        };
        assert_eq!(
            serde_json::to_value(delta).unwrap(),
            json!({"processId": "p", "stream": "stderr", "deltaBase64": "aGk=", "capReached": false})
        );
        let response = CommandExecResponse {
            exit_code: 1,
            stdout: "o".to_string(),
            stderr: String::new(),
        };
        assert_eq!(
            serde_json::to_value(response).unwrap(),
            json!({"exitCode": 1, "stdout": "o", "stderr": ""})
        );
        let write: CommandExecWriteParams =
            serde_json::from_value(json!({"processId": "p", "closeStdin": true})).unwrap();
        assert!(write.close_stdin && write.delta_base64.is_none());
    }
}
