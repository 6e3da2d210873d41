//! Transports: they turn bytes into [`ingress::IncomingMessage`]s for the processor and write
//! each connection's outbound queue back out. Bad input is logged and dropped at the ingress;
//! it never closes a connection.
//!
//! - [`ingress`]: the envelope classifier and the bounded queue into request processing.
//! - [`stall`]: the stall clock that closes a connection whose client stopped reading.
//! - [`stdio`]: one connection over stdin/stdout, one JSON message per line.
//! - [`ws`]: WebSocket connections, one JSON message per text frame.

pub mod ingress;
pub mod stall;
pub mod stdio;
pub mod ws;
