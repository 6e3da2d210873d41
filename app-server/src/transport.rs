//! Transports: they turn bytes into envelopes for the processor and write each connection's
//! outbound queue back out. Bad input is logged and dropped at the ingress; it never closes a
//! connection.
//!
//! - [`link`]: the connection skeleton every transport shares (open, receive, close).
//! - [`ingress`]: the bounded queue into request processing.
//! - [`stall`]: the stall clock that closes a connection whose client stopped reading.
//! - [`lines`]: one connection over any byte stream, one JSON message per line.
//! - [`stdio`]: [`lines`] over stdin/stdout.
//! - [`ws`]: WebSocket connections, one JSON message per text frame.
//! - [`unix`]: the `unix://` control socket: the same WebSocket connections over a private
//!   Unix domain socket.

pub mod ingress;
pub mod lines;
pub mod link;
pub mod stall;
pub mod stdio;
pub mod unix;
pub mod ws;
