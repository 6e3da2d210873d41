//! stdio: the line transport ([`super::lines`]) over stdin and stdout; one connection per
//! process. stdin's end ends the connection and the process, once every request read before
//! it is answered.
//!
//! A client that stops reading stdout for `limits.outbound_stall_secs` loses its connection,
//! and since it is the process's only one, the daemon then shuts down as on stdin's end,
//! without waiting for the answers it could not deliver (docs/protocol.md §2.5).

use tokio_util::sync::CancellationToken;

use crate::transport::ingress::Ingress;
use crate::transport::lines::{self, End, LineLimits, StreamNames};

/// Serve the one connection over stdin/stdout until stdin closes, stdout stalls or `shutdown`
/// is cancelled. Cancels `shutdown` itself on EOF or a stall, and returns once queued output
/// is written.
pub async fn serve(ingress: Ingress, shutdown: CancellationToken, limits: LineLimits) {
    let names = StreamNames {
        input: "stdin",
        output: "stdout",
    };
    let (stdin, stdout) = (tokio::io::stdin(), tokio::io::stdout());
    match lines::serve(stdin, stdout, ingress, &shutdown, limits, names).await {
        End::Eof => tracing::info!("stdin closed; shutting down"),
        End::Closed => tracing::warn!("the stdio connection is closed; shutting down"),
        End::Shutdown => {}
    }
    shutdown.cancel();
}
