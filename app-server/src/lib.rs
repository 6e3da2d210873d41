//! The Weft daemon: transports (stdio, WebSocket), JSON-RPC routing, connections and
//! subscriptions. The `weft` binary (`main.rs`) parses the command line ([`cli`]) and calls
//! [`server::run`].
//!
//! Modules, top to bottom (each uses only the ones below it):
//! - [`server`]: start-up, signals, graceful shutdown.
//! - [`transport`]: stdio, WebSocket and the `unix://` control socket, and the
//!   [`transport::ingress`] queue they feed.
//! - [`proxy`]: `weft app-server proxy`, a byte relay between stdio and the control socket.
//! - [`daemon`]: `weft app-server daemon start|stop|version`, a background daemon on the control
//!   socket.
//! - [`web`]: the browser side of the WebSocket listener (the web client, sign-in, origins).
//! - [`processor`]: decoding, the `initialize` gate and the one route table.
//! - [`handlers`]: one file per domain; a handler returns its method's response.
//! - [`dispatch`]: the execution modes, and the answers the router sends.
//! - [`state`]: [`state::AppState`] and the subscription registry.
//! - [`subscriptions`], [`connection`], [`outgoing`]: who hears a thread, one connection, and
//!   the bytes Weft sends.
//! - [`command_exec`]: every connection's `command/exec` processes, run to their end.
//!
//! In stdio mode stdout *is* the protocol, so nothing here may print to stdout.
#![deny(clippy::print_stdout)]

pub mod cli;
pub mod command_exec;
pub mod connection;
pub mod daemon;
pub mod dispatch;
pub mod experimental;
pub mod handlers;
pub mod logging;
pub mod outgoing;
pub mod processor;
pub mod proxy;
pub mod server;
pub mod state;
pub mod subscriptions;
pub mod transport;
pub mod web;
