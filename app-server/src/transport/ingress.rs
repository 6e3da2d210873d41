//! The way in: the bounded queue ([`Ingress`]) between the transports and request processing.
//! A line or frame is classified by the protocol's one envelope classifier
//! ([`weft_protocol::jsonrpc::Envelope::read`]), which keeps a request's params as raw text:
//! request processing builds their tree once, one message at a time (docs/protocol.md §11.6).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use weft_protocol::jsonrpc::{Envelope, InvalidMessage, JsonRpcError, RequestId};

use crate::connection::{Connection, ConnectionId};
use crate::outgoing;
use crate::subscriptions::Connections;

/// Capacity of the queue between the transports and request processing.
pub const INGRESS_CAPACITY: usize = 128;

/// The error for a message over `limit` bytes (`len` when known): `-32600` with the id when
/// the start of the message (`prefix`) names it, else with a null id.
pub fn oversized_error(prefix: &[u8], len: Option<usize>, limit: usize) -> Bytes {
    let size = match len {
        Some(len) => format!("of {len} bytes "),
        None => String::new(),
    };
    let error = JsonRpcError::invalid_request(format!(
        "Invalid request: message {size}exceeds the limit of {limit} bytes (limits.max_message_bytes)"
    ));
    match Envelope::probe_id(prefix) {
        Some(id) => outgoing::error(&id, &error),
        None => outgoing::error_without_id(&error),
    }
}

/// Log a dropped frame (never its full content: it may be huge).
pub fn log_dropped(connection: ConnectionId, reason: &InvalidMessage, text: &str) {
    let preview: String = text.chars().take(120).collect();
    tracing::warn!(connection, ?reason, %preview, len = text.len(), "ignoring a message that is not valid JSON-RPC");
}

/// What the transports hand to request processing.
pub enum IngressEvent {
    /// A message from a connection.
    Message(Arc<Connection>, Envelope),
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
    pub async fn submit(&self, connection: &Arc<Connection>, message: Envelope) {
        match message {
            Envelope::Request { id, method, params } => {
                let reject_id = id.clone();
                let request = Envelope::Request { id, method, params };
                let event = IngressEvent::Message(connection.clone(), request);
                // Counted before it can be answered: request processing may answer at once.
                connection.request_received();
                match self.tx.try_send(event) {
                    Ok(()) => {}
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        tracing::debug!(
                            connection = connection.id,
                            "ingress queue full; rejecting request"
                        );
                        let overloaded = outgoing::error(&reject_id, &JsonRpcError::overloaded());
                        connection.try_answer(overloaded);
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => {
                        connection.try_answer(Bytes::new());
                    }
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

/// The tree of a request, as request processing decodes it: its envelope members and its
/// params, built from the params' raw text (the only part not read yet). Built there, one
/// message at a time, rather than in the transports, where every connection reads at once.
pub fn request_tree(id: &RequestId, method: &str, params: Option<&RawValue>) -> Value {
    let mut map = serde_json::Map::with_capacity(3);
    map.insert("id".to_owned(), serde_json::json!(id));
    map.insert("method".to_owned(), Value::String(method.to_owned()));
    if let Some(params) = params {
        map.insert("params".to_owned(), tree(params));
    }
    Value::Object(map)
}

/// The tree of raw JSON the envelope classifier has already checked.
pub fn tree(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_tree_is_the_message_without_other_members() {
        let text = r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{"threadId":"t","n":[1]}}"#;
        let Ok(Envelope::Request { id, method, params }) = Envelope::read(text) else {
            panic!("a request");
        };
        assert_eq!(
            request_tree(&id, &method, params.as_deref()),
            serde_json::json!({"id":"a","method":"x","params":{"threadId":"t","n":[1]}})
        );
        let Ok(Envelope::Request { id, method, params }) =
            Envelope::read(r#"{"id":7,"method":"y"}"#)
        else {
            panic!("a request");
        };
        assert_eq!(
            request_tree(&id, &method, params.as_deref()),
            serde_json::json!({"id":7,"method":"y"})
        );
    }

    #[test]
    fn an_oversized_message_keeps_its_id_when_it_comes_first() {
        let cut = br#"{"jsonrpc":"2.0","id":"big","params":{"pad":"xxxxx"#;
        let frame = oversized_error(cut, Some(9_000_000), 4096);
        let error: serde_json::Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(error["id"], "big");
        assert_eq!(
            error["error"]["message"],
            "Invalid request: message of 9000000 bytes exceeds the limit of 4096 bytes \
             (limits.max_message_bytes)"
        );
        let frame = oversized_error(b"", None, 4096);
        let error: serde_json::Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(error["id"], serde_json::Value::Null);
    }
}
