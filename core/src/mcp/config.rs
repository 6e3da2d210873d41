//! `[mcp_servers.NAME]` from the config, entry by entry: an entry that does not parse (no
//! `command` and no `url`, both, a bad timeout, an unknown approval mode) is left out with a
//! warning instead of stopping the daemon, and the warnings are logged at start-up and shown
//! by `mcpServerStatus/list` (docs/mcp.md §2).
//!
//! The keys are the reference's, so a `config.toml` written for it configures Weft the same.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::config_base::{ConfigLayers, one_line};

/// Seconds a server may take to start and list its tools, unless configured.
pub const DEFAULT_STARTUP_TIMEOUT_SECS: f64 = 10.0;
/// Seconds one tool call may take, unless configured.
pub const DEFAULT_TOOL_TIMEOUT_SECS: f64 = 60.0;

/// When a tool call needs the user's approval (docs/mcp.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalMode {
    /// Tools the server marks read-only run unasked; others ask unless the policy is `never`.
    #[default]
    Auto,
    /// Every call asks.
    Prompt,
    /// Read-only tools run unasked; tools that may write ask (the same split as `auto`).
    Writes,
    /// Every call runs unasked: the user approved this server's tools in the config.
    Approve,
}

/// How Weft reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process speaking MCP over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set on top of the environment policy's.
        env: BTreeMap<String, String>,
        /// Names of daemon variables passed through as they are.
        env_vars: Vec<String>,
        /// Working directory (the daemon's when unset).
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// The variable holding the bearer token, read when the server starts.
        bearer_token_env_var: Option<String>,
        /// Headers sent on every request.
        http_headers: BTreeMap<String, String>,
        /// Headers whose values are read from daemon variables (header → variable).
        env_http_headers: BTreeMap<String, String>,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    /// The table's name (`[mcp_servers.NAME]`): the tools' namespace is `mcp__NAME`.
    pub name: String,
    /// How to reach it.
    pub transport: McpTransport,
    /// `enabled = false` keeps the entry but starts nothing.
    pub enabled: bool,
    /// `required = true`: a failed start is logged as an error (the daemon still runs).
    pub required: bool,
    /// Time to start and list tools.
    pub startup_timeout: Duration,
    /// Time one call may take.
    pub tool_timeout: Duration,
    /// When set, only these tools are offered.
    pub enabled_tools: Option<Vec<String>>,
    /// These tools are never offered.
    pub disabled_tools: Vec<String>,
    /// `default_tools_approval_mode`.
    pub default_approval: ApprovalMode,
    /// `[mcp_servers.NAME.tools.TOOL] approval_mode`.
    pub tool_approvals: BTreeMap<String, ApprovalMode>,
    /// `scopes`: what an OAuth login asks for when the login names none (docs/mcp.md §9).
    pub scopes: Option<Vec<String>>,
    /// `oauth_resource`: an RFC 8707 `resource` added to the authorization URL.
    pub oauth_resource: Option<String>,
}

impl McpServerConfig {
    /// Whether the model may see and call `tool`.
    pub fn tool_allowed(&self, tool: &str) -> bool {
        let enabled = self
            .enabled_tools
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|t| t == tool));
        enabled && !self.disabled_tools.iter().any(|t| t == tool)
    }

    /// The approval mode of `tool`.
    pub fn approval_mode(&self, tool: &str) -> ApprovalMode {
        self.tool_approvals
            .get(tool)
            .copied()
            .unwrap_or(self.default_approval)
    }
}

/// The `mcp_servers` table as configured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpServers {
    /// Entries that parse, by name.
    pub servers: BTreeMap<String, McpServerConfig>,
    /// Entries left out, and why (one line each).
    pub warnings: Vec<String>,
    /// The entries left out, by name: why (`mcpServerStatus/list` shows them as failed).
    pub invalid: BTreeMap<String, String>,
    /// `[mcp] eager_start`: start every enabled server when the daemon starts instead of with
    /// the first thread that needs it.
    pub eager_start: bool,
}

/// One entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryToml {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    env_vars: Vec<String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    bearer_token_env_var: Option<String>,
    #[serde(default)]
    http_headers: BTreeMap<String, String>,
    #[serde(default)]
    env_http_headers: BTreeMap<String, String>,
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default)]
    required: bool,
    startup_timeout_sec: Option<f64>,
    startup_timeout_ms: Option<u64>,
    tool_timeout_sec: Option<f64>,
    enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    disabled_tools: Vec<String>,
    #[serde(default)]
    default_tools_approval_mode: ApprovalMode,
    #[serde(default)]
    tools: BTreeMap<String, ToolToml>,
    scopes: Option<Vec<String>>,
    oauth_resource: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolToml {
    approval_mode: Option<ApprovalMode>,
}

fn yes() -> bool {
    true
}

impl McpServers {
    /// Reads the merged config's `mcp_servers` value (`None` when absent).
    pub fn read(value: Option<&toml::Value>) -> McpServers {
        let mut read = McpServers::default();
        let Some(value) = value else {
            return read;
        };
        let Some(table) = value.as_table() else {
            read.warnings
                .push("`mcp_servers` must be a table of servers; no MCP server is used".into());
            return read;
        };
        for (name, entry) in table {
            match parse_entry(name, entry) {
                Ok(config) => {
                    read.servers.insert(name.clone(), config);
                }
                Err(reason) => {
                    read.warnings
                        .push(format!("skipping MCP server `{name}`: {reason}"));
                    read.invalid.insert(name.clone(), reason);
                }
            }
        }
        read
    }
}

/// The `mcp_servers` section as the config file says now, with the command line's overrides
/// on top (`config/mcpServer/reload`): the file is read again; the rest of the config is not.
pub fn reread(layers: &ConfigLayers) -> Result<McpServers, String> {
    let mut section = match std::fs::read_to_string(&layers.file_path) {
        Ok(text) => text
            .parse::<toml::Table>()
            .map_err(|err| {
                format!(
                    "{}: invalid TOML: {}",
                    layers.file_path.display(),
                    one_line(err.message())
                )
            })?
            .remove("mcp_servers"),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            return Err(format!(
                "{}: cannot read: {err}",
                layers.file_path.display()
            ));
        }
    };
    if let Some(overrides) = layers
        .overrides
        .as_ref()
        .and_then(|layer| layer.table.get("mcp_servers"))
    {
        section = Some(match section {
            Some(base) => merge(base, overrides.clone()),
            None => overrides.clone(),
        });
    }
    Ok(McpServers::read(section.as_ref()))
}

/// `over` on top of `base`, tables merged key by key.
fn merge(base: toml::Value, over: toml::Value) -> toml::Value {
    match (base, over) {
        (toml::Value::Table(mut base), toml::Value::Table(over)) => {
            for (key, value) in over {
                let merged = match base.remove(&key) {
                    Some(old) => merge(old, value),
                    None => value,
                };
                base.insert(key, merged);
            }
            toml::Value::Table(base)
        }
        (_, over) => over,
    }
}

fn parse_entry(name: &str, entry: &toml::Value) -> Result<McpServerConfig, String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err("a server name may only have letters, digits, `_` and `-`".into());
    }
    let raw: EntryToml = entry
        .clone()
        .try_into()
        .map_err(|err: toml::de::Error| one_line(err.message()))?;
    let transport = match (raw.command, raw.url) {
        (Some(_), Some(_)) => return Err("set either `command` or `url`, not both".into()),
        (None, None) => return Err("set `command` (stdio) or `url` (streamable HTTP)".into()),
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err("`command` is empty".into());
            }
            McpTransport::Stdio {
                command,
                args: raw.args,
                env: raw.env,
                env_vars: raw.env_vars,
                cwd: raw.cwd,
            }
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("`url` must be http:// or https://, not `{url}`"));
            }
            McpTransport::Http {
                url,
                bearer_token_env_var: raw.bearer_token_env_var,
                http_headers: raw.http_headers,
                env_http_headers: raw.env_http_headers,
            }
        }
    };
    let startup_timeout = match (raw.startup_timeout_sec, raw.startup_timeout_ms) {
        (Some(secs), _) => seconds("startup_timeout_sec", secs)?,
        (None, Some(ms)) => Duration::from_millis(ms),
        (None, None) => Duration::from_secs_f64(DEFAULT_STARTUP_TIMEOUT_SECS),
    };
    let tool_timeout = seconds(
        "tool_timeout_sec",
        raw.tool_timeout_sec.unwrap_or(DEFAULT_TOOL_TIMEOUT_SECS),
    )?;
    let tool_approvals = raw
        .tools
        .into_iter()
        .filter_map(|(tool, config)| config.approval_mode.map(|mode| (tool, mode)))
        .collect();
    Ok(McpServerConfig {
        name: name.to_string(),
        transport,
        enabled: raw.enabled,
        required: raw.required,
        startup_timeout,
        tool_timeout,
        enabled_tools: raw.enabled_tools,
        disabled_tools: raw.disabled_tools,
        default_approval: raw.default_tools_approval_mode,
        tool_approvals,
        scopes: raw.scopes,
        oauth_resource: raw.oauth_resource,
    })
}

fn seconds(key: &str, secs: f64) -> Result<Duration, String> {
    if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 {
        Ok(Duration::from_secs_f64(secs))
    } else {
        Err(format!(
            "`{key}` must be a number of seconds above 0 and at most 86400"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> McpServers {
        let table: toml::Table = text.parse().unwrap_or_default();
        McpServers::read(table.get("mcp_servers"))
    }

    #[test]
    fn the_oauth_keys_of_an_entry() {
        let read = read(
            "[mcp_servers.web]\nurl = \"https://x.example/mcp\"\nscopes = [\"a\", \"b\"]\n\
             oauth_resource = \"https://api.example\"\n",
        );
        let web = &read.servers["web"];
        assert_eq!(
            web.scopes.as_deref(),
            Some(&["a".to_string(), "b".to_string()][..])
        );
        assert_eq!(web.oauth_resource.as_deref(), Some("https://api.example"));
    }

    #[test]
    fn stdio_and_http_entries_with_the_reference_keys() {
        let servers = read(
            r#"
            [mcp_servers.docs]
            command = "python3"
            args = ["server.py"]
            env = { A = "1" }
            startup_timeout_sec = 2.5
            tool_timeout_sec = 30
            default_tools_approval_mode = "prompt"
            disabled_tools = ["drop"]
            [mcp_servers.docs.tools.add]
            approval_mode = "approve"
            [mcp_servers.web]
            url = "http://127.0.0.1:9/mcp"
            bearer_token_env_var = "TOKEN"
            enabled_tools = ["echo"]
            "#,
        );
        assert!(servers.warnings.is_empty(), "{:?}", servers.warnings);
        let docs = &servers.servers["docs"];
        assert_eq!(docs.startup_timeout, Duration::from_millis(2500));
        assert_eq!(docs.tool_timeout, Duration::from_secs(30));
        assert_eq!(docs.approval_mode("add"), ApprovalMode::Approve);
        assert_eq!(docs.approval_mode("echo"), ApprovalMode::Prompt);
        assert!(docs.tool_allowed("echo") && !docs.tool_allowed("drop"));
        assert!(
            matches!(&docs.transport, McpTransport::Stdio { command, .. } if command == "python3")
        );
        let web = &servers.servers["web"];
        assert!(
            matches!(&web.transport, McpTransport::Http { url, .. } if url == "http://127.0.0.1:9/mcp")
        );
        assert!(web.tool_allowed("echo") && !web.tool_allowed("other"));
        assert_eq!(web.tool_timeout, Duration::from_secs(60));
        assert_eq!(web.approval_mode("x"), ApprovalMode::Auto);
    }

    #[test]
    fn bad_entries_are_skipped_with_a_reason_and_good_ones_kept() {
        // Each bad entry (its key and its TOML) with what its warning says.
        let bad = [
            ("none", r#"args = ["x"]"#, "`none`: set `command`"),
            (
                "both",
                r#"command = "srv"
                url = "http://127.0.0.1/""#,
                "`both`: set either",
            ),
            (
                "slow",
                r#"command = "srv"
                tool_timeout_sec = -1"#,
                "`slow`: `tool_timeout_sec`",
            ),
            (
                "mode",
                r#"command = "srv"
                default_tools_approval_mode = "sometimes""#,
                "`mode`:",
            ),
            (
                "typo",
                r#"command = "srv"
                comand = "x""#,
                "`typo`:",
            ),
            (r#""bad name""#, r#"command = "srv""#, "`bad name`:"),
        ];
        let mut text = String::from("[mcp_servers.good]\ncommand = \"srv\"\n");
        for (key, toml, _) in bad {
            text.push_str(&format!("[mcp_servers.{key}]\n{toml}\n"));
        }
        let servers = read(&text);
        assert_eq!(
            servers.servers.keys().collect::<Vec<_>>(),
            vec!["good"],
            "{:?}",
            servers.warnings
        );
        assert_eq!(servers.warnings.len(), bad.len(), "{:?}", servers.warnings);
        assert_eq!(servers.invalid.len(), bad.len());
        assert!(servers.invalid["none"].starts_with("set `command`"));
        let joined = servers.warnings.join("\n");
        for (_, _, needle) in bad {
            assert!(joined.contains(needle), "{needle} in {joined}");
        }
    }

    #[test]
    fn not_a_table_is_one_warning() {
        let servers = read("mcp_servers = 3");
        assert!(servers.servers.is_empty());
        assert_eq!(servers.warnings.len(), 1);
        assert!(read("").servers.is_empty());
    }
}
