//! The way in: classifying a line or frame into an [`IncomingMessage`] and the bounded queue
//! ([`Ingress`]) between the transports and request processing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio::sync::mpsc;
use weft_protocol::jsonrpc::{Envelope, InvalidMessage, JsonRpcError, RequestId};

use crate::connection::{Connection, ConnectionId};
use crate::outgoing;
use crate::subscriptions::Connections;

/// Capacity of the queue between the transports and request processing.
pub const INGRESS_CAPACITY: usize = 128;

/// A decoded JSON-RPC envelope from a client. Params are decoded later, with the method.
#[derive(Debug)]
pub enum IncomingMessage {
    /// A request: answered with a response or an error.
    Request {
        /// The id, echoed back exactly.
        id: RequestId,
        /// The method name.
        method: String,
        /// The whole message object (decoded together with the method, as Codex does).
        raw: Value,
    },
    /// A notification (only `initialized` means anything).
    Notification {
        /// The method name.
        method: String,
    },
    /// A response to a server request (approvals).
    Response {
        /// The id of the server request it answers.
        id: RequestId,
        /// The whole message object.
        raw: Value,
    },
}

/// Classify one line or text frame.
pub fn classify(text: &str) -> Result<IncomingMessage, InvalidMessage> {
    let raw: Value =
        serde_json::from_str(text).map_err(|err| InvalidMessage::NotJson(err.to_string()))?;
    Ok(match Envelope::classify(&raw)? {
        Envelope::Request { id, method } => IncomingMessage::Request { id, method, raw },
        Envelope::Notification { method } => IncomingMessage::Notification { method },
        Envelope::Response { id } => IncomingMessage::Response { id, raw },
    })
}

/// Log a dropped frame (never its full content: it may be huge).
pub fn log_dropped(connection: ConnectionId, reason: &InvalidMessage, text: &str) {
    let preview: String = text.chars().take(120).collect();
    tracing::warn!(connection, ?reason, %preview, len = text.len(), "ignoring a message that is not valid JSON-RPC");
}

/// What the transports hand to request processing.
pub enum IngressEvent {
    /// A message from a connection.
    Message(Arc<Connection>, IncomingMessage),
    /// A connection has closed.
    Closed(ConnectionId),
}

/// The transports' handle on request processing. Cheap to clone.
#[derive(Clone)]
pub struct Ingress {
    tx: mpsc::Sender<IngressEvent>,
    connections: Arc<Connections>,
    next_connection: Arc<AtomicU64>,
}

impl Ingress {
    /// An ingress that registers connections in `connections`, and the receiving end of its
    /// queue, for the processor.
    pub fn new(connections: Arc<Connections>) -> (Ingress, mpsc::Receiver<IngressEvent>) {
        let (tx, rx) = mpsc::channel(INGRESS_CAPACITY);
        let ingress = Ingress {
            tx,
            connections,
            next_connection: Arc::new(AtomicU64::new(1)),
        };
        (ingress, rx)
    }

    /// A fresh connection id.
    pub fn next_connection_id(&self) -> ConnectionId {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    /// Register a new connection.
    pub fn opened(&self, connection: Arc<Connection>) {
        self.connections.insert(connection);
    }

    /// Hand a message to the processor. A request that finds the queue full is answered at
    /// once with `-32001`; other messages wait for room.
    pub async fn submit(&self, connection: &Arc<Connection>, message: IncomingMessage) {
        match message {
            IncomingMessage::Request { id, method, raw } => {
                let reject_id = id.clone();
                let request = IncomingMessage::Request { id, method, raw };
                let event = IngressEvent::Message(connection.clone(), request);
                if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(event) {
                    tracing::debug!(
                        connection = connection.id,
                        "ingress queue full; rejecting request"
                    );
                    connection.try_send(outgoing::error(&reject_id, &JsonRpcError::overloaded()));
                }
            }
            other => {
                let _ = self
                    .tx
                    .send(IngressEvent::Message(connection.clone(), other))
                    .await;
            }
        }
    }

    /// A connection has closed.
    pub async fn closed(&self, id: ConnectionId) {
        let _ = self.tx.send(IngressEvent::Closed(id)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_envelopes() {
        assert!(matches!(
            classify(r#"{"id":1,"method":"initialize","params":{}}"#),
            Ok(IncomingMessage::Request {
                id: RequestId::Integer(1),
                ..
            })
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":"a","method":"x"}"#),
            Ok(IncomingMessage::Request {
                id: RequestId::String(_),
                ..
            })
        ));
        assert!(matches!(
            classify(r#"{"method":"initialized"}"#),
            Ok(IncomingMessage::Notification { .. })
        ));
        assert!(matches!(
            classify(r#"{"id":0,"result":{}}"#),
            Ok(IncomingMessage::Response { .. })
        ));
        assert_eq!(
            classify(r#"{"id":null,"method":"x"}"#).unwrap_err(),
            InvalidMessage::BadId
        );
        assert_eq!(
            classify(r#"{"id":1.5,"method":"x"}"#).unwrap_err(),
            InvalidMessage::BadId
        );
        assert_eq!(classify("[1,2]").unwrap_err(), InvalidMessage::NotAMessage);
        assert_eq!(
            classify(r#"{"id":1}"#).unwrap_err(),
            InvalidMessage::NotAMessage
        );
        assert!(matches!(
            classify("{\"id\":"),
            Err(InvalidMessage::NotJson(_))
        ));
    }
}
