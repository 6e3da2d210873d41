//! The connection skeleton every transport shares: open a connection (register it with
//! request processing), hand it each message read, and close it in order — closing in its
//! lifecycle, processing told, the writer given a bounded time to finish, its handler tasks
//! drained. The transports keep only what is theirs: how bytes become messages and messages
//! become bytes.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use weft_protocol::jsonrpc::Envelope;

use crate::connection::{Backpressure, Connection, ConnectionLimits, Outbound};
use crate::transport::ingress::{Ingress, log_dropped};

/// One open connection on a transport.
pub struct Link {
    ingress: Ingress,
    connection: Arc<Connection>,
}

/// How long closing a connection may take.
#[derive(Debug, Clone, Copy)]
pub struct CloseBounds {
    /// For the writer to write what is queued (`None`: the writer bounds itself).
    pub writer: Option<Duration>,
    /// For the connection's running handler tasks, before they are aborted.
    pub tasks: Duration,
}

impl Link {
    /// Open a connection with a fresh id, closed by `closed` (a child of the daemon's
    /// shutdown token), and register it; the outbound queue's receiving end is the writer's.
    pub fn open(
        ingress: Ingress,
        backpressure: Backpressure,
        closed: CancellationToken,
        limits: ConnectionLimits,
    ) -> (Link, Outbound) {
        let id = ingress.next_connection_id();
        let (connection, outbound) = Connection::with_limits(id, backpressure, closed, limits);
        let connection = Arc::new(connection);
        ingress.opened(connection.clone());
        (
            Link {
                ingress,
                connection,
            },
            outbound,
        )
    }

    /// The connection.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// One line or text frame from the client: classified once and handed to request
    /// processing, or logged and dropped (docs/protocol.md §3.4).
    pub async fn receive(&self, text: &str) {
        match Envelope::read(text) {
            Ok(message) => self.ingress.submit(&self.connection, message).await,
            Err(reason) => log_dropped(self.connection.id, &reason, text),
        }
    }

    /// Close the connection: closing in its lifecycle (the reader and writer see `closed`),
    /// request processing told, the writer awaited, then the handler tasks drained.
    pub async fn close(self, writer: JoinHandle<()>, bounds: CloseBounds) {
        self.connection.close();
        self.ingress.closed(self.connection.id).await;
        match bounds.writer {
            Some(bound) => {
                let _ = tokio::time::timeout(bound, writer).await;
            }
            None => {
                let _ = writer.await;
            }
        }
        self.connection.tasks().drain(bounds.tasks).await;
    }
}
