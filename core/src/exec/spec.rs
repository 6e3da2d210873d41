//! The `exec_command` and `write_stdin` tool definitions and their arguments (docs/architecture.md §8.2).

use std::path::Path;

use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::{DEFAULT_EXEC_YIELD_MS, DEFAULT_WRITE_STDIN_YIELD_MS, ExecRequest};

/// Name of the tool that starts a command.
pub const EXEC_COMMAND_TOOL: &str = "exec_command";
/// Name of the tool that writes to / polls a running command.
pub const WRITE_STDIN_TOOL: &str = "write_stdin";

const EXEC_COMMAND_DESCRIPTION: &str = "Run a shell command and return its output. The command \
runs in the user's shell (`<shell> -lc <cmd>`) in the working directory, with output (stdout \
and stderr together) returned when it exits. If it is still running after `yield_time_ms`, it \
keeps running as a session: the result then carries a session ID instead of an exit code, and \
`write_stdin` sends input to it or collects more output. The command gets pipes, not a \
terminal (no TTY): interactive programs that need a terminal will not work. Background jobs \
started with `&` are killed when the command exits; to keep a server running, run it in the \
foreground and let the call yield. Set `workdir` instead of using `cd`.";

const WRITE_STDIN_DESCRIPTION: &str = "Write characters to the stdin of a running exec_command \
session and return the output it produced since the last call. Pass empty `chars` to only \
wait for more output (polls wait at least 5 seconds unless the process exits first). \
Include a trailing newline (\\n) to submit a line.";

fn exec_command_properties() -> serde_json::Map<String, Value> {
    let properties = json!({
        "cmd": {
            "type": "string",
            "description": "The shell command to run."
        },
        "workdir": {
            "type": "string",
            "description": "Working directory for the command; defaults to the turn's working directory. Relative paths are resolved against it."
        },
        "shell": {
            "type": "string",
            "description": "Shell binary to run the command with; defaults to the user's shell."
        },
        "login": {
            "type": "boolean",
            "description": "Run the shell as a login shell (-l), loading the user's profile. Defaults to true."
        },
        "yield_time_ms": {
            "type": "number",
            "description": "How long to wait for the command before returning, in milliseconds (250 to 30000, default 10000). A command still running then keeps running as a session."
        },
        "max_output_tokens": {
            "type": "number",
            "description": "Most output tokens to return (default 10000); longer output keeps its beginning and end."
        }
    });
    match properties {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

fn function_tool(
    name: &str,
    description: &str,
    properties: serde_json::Map<String, Value>,
    required: &[&str],
) -> Value {
    json!({
        "type": "function",
        "name": name,
        "description": description,
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }
    })
}

/// `exec_command` as a Responses API function tool.
pub fn exec_command_tool_spec() -> Value {
    function_tool(
        EXEC_COMMAND_TOOL,
        EXEC_COMMAND_DESCRIPTION,
        exec_command_properties(),
        &["cmd"],
    )
}

/// `exec_command` with the escalation parameters (`sandbox_permissions`, `justification`) for
/// approval policies under which the model may ask to run outside the sandbox (`on-request`).
pub fn exec_command_tool_spec_with_escalation() -> Value {
    let mut properties = exec_command_properties();
    properties.insert(
        "sandbox_permissions".to_string(),
        json!({
            "type": "string",
            "description": "\"use_default\" (default) runs the command in the sandbox. \"require_escalated\" asks the user to approve running it without the sandbox; use it only when the sandbox blocks a command that needs to write outside the workspace or reach the network, and give a `justification`."
        }),
    );
    properties.insert(
        "justification".to_string(),
        json!({
            "type": "string",
            "description": "With \"require_escalated\": one sentence, shown to the user, saying why the command must run outside the sandbox."
        }),
    );
    function_tool(
        EXEC_COMMAND_TOOL,
        EXEC_COMMAND_DESCRIPTION,
        properties,
        &["cmd"],
    )
}

/// `write_stdin` as a Responses API function tool.
pub fn write_stdin_tool_spec() -> Value {
    let properties = json!({
        "session_id": {
            "type": "number",
            "description": "The session ID returned by exec_command."
        },
        "chars": {
            "type": "string",
            "description": "Characters to write to stdin; empty (the default) only polls for output."
        },
        "yield_time_ms": {
            "type": "number",
            "description": "How long to wait for output after writing, in milliseconds (default 250; at most 30000; polls with empty chars wait 5000 to 300000)."
        },
        "max_output_tokens": {
            "type": "number",
            "description": "Most output tokens to return (default 10000)."
        }
    });
    let properties = match properties {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    function_tool(
        WRITE_STDIN_TOOL,
        WRITE_STDIN_DESCRIPTION,
        properties,
        &["session_id"],
    )
}

/// Whether the model asks to run inside the sandbox or outside it (with approval).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxPermissions {
    /// Run in the turn's sandbox.
    #[default]
    UseDefault,
    /// Run without the sandbox, after the user approves.
    RequireEscalated,
}

/// `exec_command` arguments as the model sent them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ExecCommandArgs {
    /// The shell command.
    pub cmd: String,
    /// Working directory (relative to the turn's cwd).
    #[serde(default)]
    pub workdir: Option<String>,
    /// Shell binary.
    #[serde(default)]
    pub shell: Option<String>,
    /// Login shell (default true).
    #[serde(default)]
    pub login: Option<bool>,
    /// Yield time in ms.
    #[serde(default, deserialize_with = "lenient_u64")]
    pub yield_time_ms: Option<u64>,
    /// Output budget in tokens.
    #[serde(default, deserialize_with = "lenient_u64")]
    pub max_output_tokens: Option<u64>,
    /// Sandbox escalation request.
    #[serde(default)]
    pub sandbox_permissions: Option<SandboxPermissions>,
    /// Why escalation is needed.
    #[serde(default)]
    pub justification: Option<String>,
}

impl ExecCommandArgs {
    /// The request to run, with defaults applied and `workdir` resolved against `cwd`.
    pub fn to_request(&self, cwd: &Path) -> ExecRequest {
        let workdir = match self.workdir.as_deref().map(str::trim) {
            Some(dir) if !dir.is_empty() => cwd.join(dir),
            _ => cwd.to_path_buf(),
        };
        ExecRequest {
            cmd: self.cmd.clone(),
            workdir,
            shell: self.shell.clone().filter(|s| !s.trim().is_empty()),
            login: self.login.unwrap_or(true),
            yield_time_ms: self.yield_time_ms.unwrap_or(DEFAULT_EXEC_YIELD_MS),
            max_output_tokens: self.max_output_tokens.map(saturating_usize),
        }
    }

    /// Whether the model asked to run outside the sandbox.
    pub fn wants_escalation(&self) -> bool {
        self.sandbox_permissions == Some(SandboxPermissions::RequireEscalated)
    }
}

/// `write_stdin` arguments as the model sent them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WriteStdinArgs {
    /// The session.
    #[serde(deserialize_with = "required_u64")]
    pub session_id: u64,
    /// Characters to write (empty = poll).
    #[serde(default)]
    pub chars: String,
    /// Yield time in ms.
    #[serde(default, deserialize_with = "lenient_u64")]
    pub yield_time_ms: Option<u64>,
    /// Output budget in tokens.
    #[serde(default, deserialize_with = "lenient_u64")]
    pub max_output_tokens: Option<u64>,
}

impl WriteStdinArgs {
    /// The yield time with the default applied (clamping happens in `write_stdin`).
    pub fn yield_time_ms(&self) -> u64 {
        self.yield_time_ms.unwrap_or(DEFAULT_WRITE_STDIN_YIELD_MS)
    }

    /// The output budget, if given.
    pub fn max_output_tokens(&self) -> Option<usize> {
        self.max_output_tokens.map(saturating_usize)
    }
}

/// Bad tool arguments; the `Display` text is what the model is told (docs/architecture.md §8.1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed to parse function arguments: {0}")]
pub struct ArgsError(pub String);

/// Parses `exec_command`'s JSON arguments string.
pub fn parse_exec_command_args(arguments: &str) -> Result<ExecCommandArgs, ArgsError> {
    let args: ExecCommandArgs =
        serde_json::from_str(arguments).map_err(|e| ArgsError(e.to_string()))?;
    if args.cmd.trim().is_empty() {
        return Err(ArgsError("`cmd` must not be empty".to_string()));
    }
    Ok(args)
}

/// Parses `write_stdin`'s JSON arguments string.
pub fn parse_write_stdin_args(arguments: &str) -> Result<WriteStdinArgs, ArgsError> {
    serde_json::from_str(arguments).map_err(|e| ArgsError(e.to_string()))
}

fn saturating_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A JSON number (integer or float) or a numeric string, as a non-negative integer.
#[derive(Deserialize)]
#[serde(untagged)]
enum Number {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(String),
}

fn number_to_u64(number: Number) -> Result<u64, String> {
    match number {
        Number::Unsigned(n) => Ok(n),
        Number::Signed(n) => Err(format!("expected a non-negative number, got {n}")),
        Number::Float(f) if f.is_finite() && f >= 0.0 => Ok(f as u64),
        Number::Float(f) => Err(format!("expected a non-negative number, got {f}")),
        Number::Text(text) => text
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("expected a number, got {text:?}")),
    }
}

fn lenient_u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    match Option::<Number>::deserialize(deserializer)? {
        None => Ok(None),
        Some(number) => number_to_u64(number)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}

fn required_u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    number_to_u64(Number::deserialize(deserializer)?).map_err(serde::de::Error::custom)
}
