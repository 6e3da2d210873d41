//! The Weft daemon: transports (stdio, WebSocket), JSON-RPC routing, connections and
//! subscriptions, and the `weft` command line.
//!
//! In stdio mode stdout *is* the protocol, so nothing here may print to stdout.
#![deny(clippy::print_stdout)]

pub mod cli;
pub mod connection;
pub mod handlers;
pub mod logging;
pub mod outgoing;
pub mod processor;
pub mod subscriptions;
pub mod transport;
