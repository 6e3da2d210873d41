//! `initialize`: record the connection's choices and describe the server.

use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{InitializeParams, InitializeResponse};

use crate::connection::InitializeChoices;
use crate::dispatch::{Context, HandlerResult};

/// `initialize`, on a connection the router found not initialized yet.
pub async fn initialize(
    cx: Context<'_>,
    params: InitializeParams,
) -> HandlerResult<InitializeResponse> {
    if !cx.connection.initialize(InitializeChoices::from(&params)) {
        // The router handles a cx.connection's messages one at a time and lets `initialize`
        // through only while the cx.connection has no choices recorded.
        return Err(JsonRpcError::internal(
            "cx.connection initialized concurrently",
        ));
    }
    Ok(InitializeResponse {
        user_agent: user_agent(&params.client_info.name, &params.client_info.version),
        codex_home: cx.state.home.display().to_string(),
        platform_family: std::env::consts::FAMILY.to_string(),
        platform_os: std::env::consts::OS.to_string(),
    })
}

/// `<client>/<weft version> (<os> <os version>; <arch>) <terminal> (<client>; <client version>)`,
/// the shape the reference uses.
/// The version of the Codex app-server protocol Weft speaks: the one clients compare with
/// their own (the Codex TUI warns of a server older than itself). Weft's own version follows
/// at the end of the user agent (docs/protocol.md §4.1).
const PROTOCOL_VERSION: &str = "0.171.0";

fn user_agent(client_name: &str, client_version: &str) -> String {
    let version = PROTOCOL_VERSION;
    let weft = env!("CARGO_PKG_VERSION");
    let (os, os_version) = os_release();
    let arch = std::env::consts::ARCH;
    let terminal = std::env::var("TERM_PROGRAM")
        .or_else(|_| std::env::var("TERM"))
        .unwrap_or_else(|_| "unknown".into());
    format!(
        "{client_name}/{version} ({os} {os_version}; {arch}) {terminal} ({client_name}; {client_version}) weft/{weft}"
    )
}

fn os_release() -> (String, String) {
    let text = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let field = |key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim_matches('"').to_string())
    };
    (
        field("NAME").unwrap_or_else(|| std::env::consts::OS.to_string()),
        field("VERSION_ID").unwrap_or_default(),
    )
}
