//! Params and result of `thread/shellCommand` (docs/protocol.md §7.30): the user's own shell
//! command, run in the thread's shell and working directory as a task of the thread.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::ThreadId;
use crate::thread_api::empty_response;

/// Params of `thread/shellCommand`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadShellCommandParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// Shell command string evaluated by the thread's configured shell. Unlike `command/exec`,
    /// this intentionally preserves shell syntax such as pipes, redirects, and quoting. Weft
    /// runs it under the thread's sandbox policy (docs/protocol.md §13).
    pub command: String,
    /// Maximum execution time in milliseconds. Defaults to one hour when omitted or null.
    /// Must be non-negative; zero requests an immediate timeout, not unlimited execution.
    /// Does not affect the immediate RPC acknowledgement.
    #[serde(default)]
    pub timeout_ms: Option<i64>,
}

empty_response! {
    /// Result of `thread/shellCommand`: the command was accepted; its item follows.
    ThreadShellCommandResponse;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_timeout_is_optional_and_may_be_null() {
        for raw in [
            json!({"threadId": "t", "command": "ls"}),
            json!({"threadId": "t", "command": "ls", "timeoutMs": null}),
        ] {
            let params: ThreadShellCommandParams = serde_json::from_value(raw).unwrap();
            assert_eq!(params.timeout_ms, None);
        }
        let params: ThreadShellCommandParams =
            serde_json::from_value(json!({"threadId": "t", "command": "ls", "timeoutMs": -1}))
                .unwrap();
        assert_eq!(params.timeout_ms, Some(-1));
        assert_eq!(
            serde_json::to_value(ThreadShellCommandResponse {}).unwrap(),
            json!({})
        );
    }
}
