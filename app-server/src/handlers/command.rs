//! `command/exec`, `command/exec/write`, `command/exec/resize` and `command/exec/terminate`
//! (docs/protocol.md §7.32): a command outside any thread, started here under the configured
//! sandbox (or the request's `sandboxPolicy`), run by the connection's process table
//! (`command_exec.rs`), which answers `command/exec` when the process has exited and its
//! output was sent. The checks and their texts are the reference's.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use weft_core::exec::{ExecError, StandaloneCommand, StandaloneProcess};
use weft_core::permissions::profile_sandbox;
use weft_core::sandbox::SandboxSpec;
use weft_protocol::jsonrpc::{INVALID_PARAMS, JsonRpcError};
use weft_protocol::{
    CommandExecParams, CommandExecResizeParams, CommandExecResizeResponse, CommandExecResponse,
    CommandExecTerminateParams, CommandExecTerminateResponse, CommandExecWriteParams,
    CommandExecWriteResponse, SandboxMode, SandboxPolicy,
};

use crate::command_exec::{Control, Launch, terminal_size};
use crate::dispatch::{Context, HandlerResult, ThreadReply};
use crate::handlers::daemon_cwd;

fn invalid_params(message: impl Into<String>) -> JsonRpcError {
    JsonRpcError::new(INVALID_PARAMS, message)
}

/// `command/exec`: checked and started here; answered when the process ends.
pub fn exec(
    cx: Context<'_>,
    params: CommandExecParams,
    reply: ThreadReply<CommandExecResponse>,
) -> HandlerResult<()> {
    let limits = &cx.state.config.limits;
    let prepared = prepare(
        params,
        limits.command_exec_output_bytes_cap,
        limits.command_exec_timeout_ms,
    )?;
    let Prepared {
        command,
        policy,
        launch,
    } = prepared;
    let policy =
        policy.unwrap_or_else(|| configured_policy(cx.state.config.sandbox_mode.as_deref()));
    // The sandbox's workspace is the daemon's cwd, whatever the command's own cwd.
    let sandbox = SandboxSpec::from_policy(&policy, &daemon_cwd()).with_home(&cx.state.home);
    let mut env = cx.state.config.shell_environment_policy.environment();
    // As for the model's commands (docs/architecture.md §8.2), before the client's overrides.
    if !sandbox.network_allowed() {
        env.push(("WEFT_SANDBOX_NETWORK_DISABLED".to_string(), "1".to_string()));
    }
    if let Some(overrides) = &command.env_overrides {
        for (key, value) in overrides {
            env.retain(|(name, _)| name != key);
            if let Some(value) = value {
                env.push((key.clone(), value.clone()));
            }
        }
    }
    let to_run = StandaloneCommand {
        argv: command.argv,
        cwd: command.cwd,
        env,
        stdin: launch.stream_stdin,
        tty: command.tty,
    };
    let launch = Launch {
        max_processes: limits.command_exec_max_processes,
        ..launch
    };
    cx.state.command_execs.launch(
        cx.connection,
        launch,
        || StandaloneProcess::spawn(&to_run, &sandbox).map_err(spawn_error),
        reply.into_core(|response: CommandExecResponse| response),
    )
}

/// `command/exec/write`.
pub async fn write(
    cx: Context<'_>,
    params: CommandExecWriteParams,
) -> HandlerResult<CommandExecWriteResponse> {
    if params.delta_base64.is_none() && !params.close_stdin {
        return Err(invalid_params(
            "command/exec/write requires deltaBase64 or closeStdin",
        ));
    }
    let bytes = match &params.delta_base64 {
        Some(delta) => STANDARD
            .decode(delta)
            .map_err(|err| invalid_params(format!("invalid deltaBase64: {err}")))?,
        None => Vec::new(),
    };
    cx.state
        .command_execs
        .control(
            cx.connection.id,
            params.process_id,
            Control::Write {
                bytes,
                close_stdin: params.close_stdin,
            },
        )
        .await?;
    Ok(CommandExecWriteResponse {})
}

/// `command/exec/resize`.
pub async fn resize(
    cx: Context<'_>,
    params: CommandExecResizeParams,
) -> HandlerResult<CommandExecResizeResponse> {
    let size = terminal_size(params.size)?;
    cx.state
        .command_execs
        .control(cx.connection.id, params.process_id, Control::Resize(size))
        .await?;
    Ok(CommandExecResizeResponse {})
}

/// `command/exec/terminate`.
pub async fn terminate(
    cx: Context<'_>,
    params: CommandExecTerminateParams,
) -> HandlerResult<CommandExecTerminateResponse> {
    cx.state
        .command_execs
        .control(cx.connection.id, params.process_id, Control::Terminate)
        .await?;
    Ok(CommandExecTerminateResponse {})
}

/// What the params ask for, checked.
struct Prepared {
    command: Command,
    policy: Option<SandboxPolicy>,
    launch: Launch,
}

struct Command {
    argv: Vec<String>,
    cwd: PathBuf,
    env_overrides: Option<std::collections::BTreeMap<String, Option<String>>>,
    tty: Option<weft_core::exec::TerminalSize>,
}

/// The params checked in the reference's order, with its texts; `cap` and `timeout_ms` are
/// the configured defaults.
fn prepare(
    params: CommandExecParams,
    cap: usize,
    timeout_ms: u64,
) -> Result<Prepared, JsonRpcError> {
    if params.command.is_empty() {
        return Err(JsonRpcError::invalid_request("command must not be empty"));
    }
    if params.permission_profile.is_some() && params.sandbox_policy.is_some() {
        return Err(JsonRpcError::invalid_request(
            "`permissionProfile` cannot be combined with `sandboxPolicy`",
        ));
    }
    if params.size.is_some() && !params.tty {
        return Err(invalid_params("command/exec size requires tty: true"));
    }
    if params.disable_output_cap && params.output_bytes_cap.is_some() {
        return Err(invalid_params(
            "command/exec cannot set both outputBytesCap and disableOutputCap",
        ));
    }
    if params.disable_timeout && params.timeout_ms.is_some() {
        return Err(invalid_params(
            "command/exec cannot set both timeoutMs and disableTimeout",
        ));
    }
    let timeout = match params.timeout_ms {
        _ if params.disable_timeout => None,
        None => Some(Duration::from_millis(timeout_ms)),
        Some(ms) => match u64::try_from(ms) {
            Ok(ms) => Some(Duration::from_millis(ms)),
            Err(_) => {
                return Err(invalid_params(format!(
                    "command/exec timeoutMs must be non-negative, got {ms}"
                )));
            }
        },
    };
    let output_cap = if params.disable_output_cap {
        None
    } else {
        Some(match params.output_bytes_cap {
            Some(bytes) => usize::try_from(bytes).unwrap_or(usize::MAX),
            None => cap,
        })
    };
    let tty = match (params.tty, params.size) {
        (false, _) => None,
        (true, None) => Some(weft_core::exec::TerminalSize::default()),
        (true, Some(size)) => Some(terminal_size(size)?),
    };
    // The profile is resolved after the other checks, as the reference resolves it.
    let policy = match params.permission_profile.as_deref() {
        Some(id) => Some(SandboxPolicy::from_mode(profile_sandbox(id).map_err(
            |e| {
                JsonRpcError::invalid_request(format!("invalid permission profile: {}", e.reason()))
            },
        )?)),
        None => params.sandbox_policy,
    };
    let base = daemon_cwd();
    let cwd = match params.cwd.as_deref() {
        Some(cwd) => base.join(cwd),
        None => base,
    };
    Ok(Prepared {
        command: Command {
            argv: params.command,
            cwd,
            env_overrides: params.env,
            tty,
        },
        policy,
        launch: Launch {
            process_id: params.process_id,
            stream_stdin: params.tty || params.stream_stdin,
            stream_output: params.tty || params.stream_stdout_stderr,
            output_cap,
            timeout,
            max_processes: 0,
        },
    })
}

/// The configured `sandbox_mode` (`workspace-write` when unset or not a mode), as a policy.
fn configured_policy(mode: Option<&str>) -> SandboxPolicy {
    let mode = mode
        .and_then(|mode| serde_json::from_value(serde_json::Value::String(mode.to_string())).ok())
        .unwrap_or(SandboxMode::WorkspaceWrite);
    SandboxPolicy::from_mode(mode)
}

/// A process that could not be started: the reference's texts.
fn spawn_error(error: ExecError) -> JsonRpcError {
    match error {
        ExecError::SandboxUnavailable(_) | ExecError::Sandbox(_) => {
            JsonRpcError::internal(format!("exec failed: {error}"))
        }
        ExecError::Spawn(reason) => {
            JsonRpcError::internal(format!("failed to spawn command: {reason}"))
        }
        other => JsonRpcError::internal(format!("failed to spawn command: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use weft_protocol::CommandExecTerminalSize;
    use weft_protocol::jsonrpc::INVALID_REQUEST;

    use super::*;

    fn params(command: &[&str]) -> CommandExecParams {
        CommandExecParams {
            command: command.iter().map(|s| s.to_string()).collect(),
            ..CommandExecParams::default()
        }
    }

    fn refused(params: CommandExecParams) -> JsonRpcError {
        match prepare(params, 100, 1000) {
            Ok(_) => panic!("accepted"),
            Err(error) => error,
        }
    }

    #[test]
    fn bad_params_get_the_reference_errors_in_its_order() {
        let error = refused(params(&[]));
        assert_eq!(
            (error.code, error.message.as_str()),
            (INVALID_REQUEST, "command must not be empty")
        );
        let size = Some(CommandExecTerminalSize { rows: 0, cols: 3 });
        let error = refused(CommandExecParams {
            size,
            ..params(&["true"])
        });
        assert_eq!(
            (error.code, error.message.as_str()),
            (INVALID_PARAMS, "command/exec size requires tty: true")
        );
        let error = refused(CommandExecParams {
            size,
            tty: true,
            ..params(&["true"])
        });
        assert_eq!(
            error.message,
            "command/exec size rows and cols must be greater than 0"
        );
        let error = refused(CommandExecParams {
            output_bytes_cap: Some(1),
            disable_output_cap: true,
            ..params(&["true"])
        });
        assert_eq!(
            error.message,
            "command/exec cannot set both outputBytesCap and disableOutputCap"
        );
        let error = refused(CommandExecParams {
            timeout_ms: Some(1),
            disable_timeout: true,
            ..params(&["true"])
        });
        assert_eq!(
            error.message,
            "command/exec cannot set both timeoutMs and disableTimeout"
        );
        let error = refused(CommandExecParams {
            timeout_ms: Some(-5),
            ..params(&["true"])
        });
        assert_eq!(
            (error.code, error.message.as_str()),
            (
                INVALID_PARAMS,
                "command/exec timeoutMs must be non-negative, got -5"
            )
        );
    }

    #[test]
    fn a_permission_profile_is_checked_where_the_reference_checks_it() {
        let profile = |id: &str| CommandExecParams {
            permission_profile: Some(id.to_string()),
            ..params(&["true"])
        };
        // Combined with a policy: after the empty command, before the size.
        let error = refused(CommandExecParams {
            sandbox_policy: Some(SandboxPolicy::DangerFullAccess),
            ..profile(":workspace")
        });
        assert_eq!(
            (error.code, error.message.as_str()),
            (
                INVALID_REQUEST,
                "`permissionProfile` cannot be combined with `sandboxPolicy`"
            )
        );
        let error = refused(CommandExecParams {
            command: Vec::new(),
            sandbox_policy: Some(SandboxPolicy::DangerFullAccess),
            ..profile(":workspace")
        });
        assert_eq!(error.message, "command must not be empty");
        // An unknown id: after every other check.
        let error = refused(CommandExecParams {
            timeout_ms: Some(1),
            disable_timeout: true,
            ..profile(":nope")
        });
        assert_eq!(
            error.message,
            "command/exec cannot set both timeoutMs and disableTimeout"
        );
        let error = refused(profile(":nope"));
        assert_eq!(
            (error.code, error.message.as_str()),
            (
                INVALID_REQUEST,
                "invalid permission profile: default_permissions refers to unknown built-in profile `:nope`"
            )
        );
        assert_eq!(
            refused(profile("mine")).message,
            "invalid permission profile: default_permissions requires a `[permissions]` table"
        );
        // A built-in one is its sandbox mode's policy.
        let prepared = prepare(profile(":read-only"), 100, 1000).unwrap();
        assert_eq!(
            prepared.policy,
            Some(SandboxPolicy::from_mode(SandboxMode::ReadOnly))
        );
    }

    #[test]
    fn defaults_come_from_config_and_tty_implies_streaming() {
        let prepared = prepare(params(&["ls"]), 100, 1000).unwrap();
        assert_eq!(prepared.launch.output_cap, Some(100));
        assert_eq!(prepared.launch.timeout, Some(Duration::from_millis(1000)));
        assert!(!prepared.launch.stream_stdin && !prepared.launch.stream_output);
        assert_eq!(prepared.command.cwd, daemon_cwd());
        let prepared = prepare(
            CommandExecParams {
                tty: true,
                disable_output_cap: true,
                disable_timeout: true,
                cwd: Some("sub".to_string()),
                ..params(&["ls"])
            },
            100,
            1000,
        )
        .unwrap();
        assert_eq!(prepared.launch.output_cap, None);
        assert_eq!(prepared.launch.timeout, None);
        assert!(prepared.launch.stream_stdin && prepared.launch.stream_output);
        assert_eq!(
            prepared.command.tty,
            Some(weft_core::exec::TerminalSize { rows: 24, cols: 80 })
        );
        assert_eq!(prepared.command.cwd, daemon_cwd().join("sub"));
    }

    #[test]
    fn the_configured_mode_is_the_default_policy() {
        assert_eq!(
            configured_policy(Some("read-only")),
            SandboxPolicy::ReadOnly {
                network_access: false
            }
        );
        assert_eq!(
            configured_policy(None),
            SandboxPolicy::from_mode(SandboxMode::WorkspaceWrite)
        );
    }
}
