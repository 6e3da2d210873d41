//! `command/exec` and its follow-ups (docs/protocol.md §7.32): their params, results and the
//! `command/exec/outputDelta` notification validate against both schemas with every key
//! present.

use std::collections::BTreeMap;

use super::*;
use crate::command_api::*;

/// One delta per stream, the last one capped, for the notification conformance test.
pub(super) fn sample_notifications() -> Vec<ServerNotification> {
    [
        (CommandExecOutputStream::Stdout, false),
        (CommandExecOutputStream::Stderr, true),
    ]
    .into_iter()
    .map(|(stream, cap_reached)| {
        CommandExecOutputDeltaNotification {
            process_id: "p".into(),
            stream,
            delta_base64: "aGk=".into(),
            cap_reached,
        }
        .into()
    })
    .collect()
}

#[test]
fn command_exec_params_and_results_validate() {
    let mut schemas = Schemas::load();
    schemas.check_params::<methods::CommandExec>(&CommandExecParams {
        command: vec!["ls".into(), "-l".into()],
        ..CommandExecParams::default()
    });
    schemas.check_params::<methods::CommandExec>(&CommandExecParams {
        command: vec!["sh".into()],
        process_id: Some("p".into()),
        tty: true,
        stream_stdin: true,
        stream_stdout_stderr: true,
        output_bytes_cap: Some(10),
        disable_output_cap: false,
        disable_timeout: false,
        timeout_ms: Some(1000),
        cwd: Some("/w".into()),
        env: Some(BTreeMap::from([
            ("A".to_string(), Some("1".to_string())),
            ("B".to_string(), None),
        ])),
        size: Some(CommandExecTerminalSize { rows: 24, cols: 80 }),
        sandbox_policy: Some(SandboxPolicy::ReadOnly {
            network_access: false,
        }),
        permission_profile: None,
    });
    schemas.check_params::<methods::CommandExec>(&CommandExecParams {
        command: vec!["true".into()],
        permission_profile: Some(":read-only".into()),
        ..CommandExecParams::default()
    });
    schemas.check_result::<methods::CommandExec>(&CommandExecResponse {
        exit_code: 124,
        stdout: "out".into(),
        stderr: String::new(),
    });
    schemas.check_params::<methods::CommandExecWrite>(&CommandExecWriteParams {
        process_id: "p".into(),
        delta_base64: Some("aGk=".into()),
        close_stdin: true,
    });
    schemas.check_result::<methods::CommandExecWrite>(&CommandExecWriteResponse {});
    schemas.check_params::<methods::CommandExecResize>(&CommandExecResizeParams {
        process_id: "p".into(),
        size: CommandExecTerminalSize { rows: 1, cols: 2 },
    });
    schemas.check_result::<methods::CommandExecResize>(&CommandExecResizeResponse {});
    schemas.check_params::<methods::CommandExecTerminate>(&CommandExecTerminateParams {
        process_id: "p".into(),
    });
    schemas.check_result::<methods::CommandExecTerminate>(&CommandExecTerminateResponse {});
}
