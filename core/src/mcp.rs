//! MCP servers as tools (docs/mcp.md): [`config`] reads `[mcp_servers.*]`, [`connection`] is
//! one client session over rmcp (stdio or streamable HTTP), [`pool`] the daemon's one pool of
//! servers shared by every thread; [`oauth`] logs in to streamable-HTTP servers and
//! [`credentials`] keeps their tokens. What the model is offered and how its calls run is
//! `tools/mcp_tool.rs`.

pub mod config;
pub mod connection;
pub mod credentials;
pub mod names;
pub mod oauth;
pub mod pool;
mod questions;

pub use config::{ApprovalMode, McpServerConfig, McpServers, McpTransport};
pub use connection::{CallError, McpConnection, Progress, StartError};
pub use pool::{McpPool, OfferedServer, Server, ServerStatus};
