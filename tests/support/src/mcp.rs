//! The real MCP servers the MCP tests use (docs/mcp.md), as `tests/mcp/install.sh` installed
//! them: the official Python SDK's FastMCP test server and `@modelcontextprotocol/server-everything`.
//! Nothing here skips: a missing install fails the test and says how to install.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::workspace_root;

/// Where the installed servers are.
#[derive(Debug, Clone)]
pub struct McpServers {
    /// The virtualenv's Python (with the `mcp` SDK).
    pub python: PathBuf,
    /// `tests/mcp/servers/weft_test_server.py`.
    pub test_server: PathBuf,
    /// Node.js.
    pub node: PathBuf,
    /// server-everything's `dist/index.js`.
    pub everything_js: PathBuf,
}

/// The installed servers (read once from `tests/mcp/install.sh --paths`).
pub fn mcp_servers() -> &'static McpServers {
    static SERVERS: OnceLock<McpServers> = OnceLock::new();
    SERVERS.get_or_init(|| {
        let script = workspace_root().join("tests/mcp/install.sh");
        let output = std::process::Command::new(&script)
            .arg("--paths")
            .output()
            .unwrap_or_else(|err| panic!("cannot run {}: {err}", script.display()));
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        let get = |key: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(&format!("{key}=")))
                .map(PathBuf::from)
                .unwrap_or_else(|| panic!("`install.sh --paths` printed no {key}: {text}"))
        };
        let servers = McpServers {
            python: get("WEFT_MCP_PYTHON"),
            test_server: get("WEFT_MCP_TEST_SERVER"),
            node: get("WEFT_MCP_NODE"),
            everything_js: get("WEFT_MCP_EVERYTHING_JS"),
        };
        for path in [&servers.python, &servers.everything_js] {
            assert!(
                path.exists(),
                "{} is missing: run tests/mcp/install.sh (the README's test command does)",
                path.display()
            );
        }
        servers
    })
}

impl McpServers {
    /// A `[mcp_servers.NAME]` table starting the FastMCP test server over stdio, with `extra`
    /// lines (e.g. `env = {…}`, `default_tools_approval_mode = "approve"`) after it.
    pub fn test_server_toml(&self, name: &str, extra: &str) -> String {
        format!(
            "[mcp_servers.{name}]\ncommand = {}\nargs = [{}]\n{extra}\n",
            toml_string(&self.python.display().to_string()),
            toml_string(&self.test_server.display().to_string()),
        )
    }

    /// A `[mcp_servers.NAME]` table starting server-everything over stdio.
    pub fn everything_toml(&self, name: &str, extra: &str) -> String {
        format!(
            "[mcp_servers.{name}]\ncommand = {}\nargs = [{}, \"stdio\"]\n{extra}\n",
            toml_string(&self.node.display().to_string()),
            toml_string(&self.everything_js.display().to_string()),
        )
    }
}

/// A TOML basic string.
pub fn toml_string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}
