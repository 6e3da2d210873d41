//! Test support for Weft's end-to-end suite: start the real `weft` binary, speak JSON-RPC to
//! it over stdio or WebSocket, and validate every message it sends against Weft's own schema
//! (`schema/`) and, for the methods we share with Codex, against the reference schema
//! (`tests/reference/codex-app-server-schema`, checked in; see `tests/reference/README.md`).
//!
//! Layout:
//! - [`binary`] finds (and if needed builds) the `weft` binary;
//! - [`home`] is a temporary `$WEFT_HOME` with config helpers;
//! - [`daemon`] spawns `weft app-server` and owns the process (killed on drop);
//! - [`client`] is the JSON-RPC client over both transports, with a timeout on every read (its
//!   transport halves, [`client::transport`], are also what `bench/` speaks through);
//! - [`schema`] validates each received message;
//! - [`http`] has raw HTTP and raw WebSocket helpers for the listener's edge cases, and an
//!   address that takes no connection;
//! - [`mcp`] finds the real MCP servers the MCP tests start;
//! - [`codex`] finds the real Codex client and runs it (`codex exec --remote …`);
//! - [`tui`] drives the Codex TUI through a private tmux server.
//!
//! ```no_run
//! # async fn demo() {
//! use weft_test_support::{Daemon, TestHome, Transport};
//! let home = TestHome::new();
//! let mut daemon = Daemon::start(Transport::Ws, &home, &[]).await;
//! let mut client = daemon.client().await;
//! let init = client.initialize().await;
//! assert_eq!(init["platformOs"], "linux");
//! # }
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod binary;
pub mod client;
pub mod codex;
pub mod daemon;
pub mod home;
pub mod http;
pub mod mcp;
pub mod schema;
pub mod tui;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use tokio::process::Command;

pub use binary::{weft_bin, workspace_root};
pub use client::{Client, Recv, RpcError, WsHandshakeError};
pub use codex::{ClientHome, ClientOutput, codex_bin, run_codex};
pub use daemon::{CommandOutput, Daemon, DaemonBuilder, Transport, run_weft, run_weft_with_env};
pub use home::{TestHome, mock_model_config};
pub use http::{BlackHole, HttpResponse, http_request};
pub use mcp::{McpServers, mcp_servers};
pub use tui::Tui;

/// How long any single read (a message, a process exit, a log line) may take before the test
/// fails. Nothing in the suite waits longer than this on one event.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The short window used by "no reply" checks ([`Client::expect_no_message_within`]).
pub const QUIET_PERIOD: Duration = Duration::from_millis(300);

/// Truncate a text for a failure message, keeping it readable.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

/// Spawn `cmd` (the program `bin`, run as `name ARGS…`) and wait at most `timeout` for it to
/// finish; panics if it cannot be spawned or runs longer.
pub(crate) async fn output_within(
    mut cmd: Command,
    bin: &Path,
    name: &str,
    args: &[&str],
    timeout: Duration,
) -> Output {
    let child = cmd
        .spawn()
        .unwrap_or_else(|err| panic!("spawn {}: {err}", bin.display()));
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(output) => output.unwrap_or_else(|err| panic!("wait for {name}: {err}")),
        Err(_) => panic!(
            "`{name} {}` did not finish within {timeout:?}",
            args.join(" ")
        ),
    }
}
