//! The way in: classifying a line or frame into an [`IncomingMessage`] and the bounded queue
//! ([`Ingress`]) between the transports and request processing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use std::borrow::Cow;

use bytes::Bytes;
use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use weft_protocol::jsonrpc::{InvalidMessage, JsonRpcError, RequestId};

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
        /// The whole message's text (decoded together with the method, as Codex does, by
        /// request processing: one message at a time).
        text: Box<str>,
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
        /// The whole message's text.
        text: Box<str>,
    },
}

/// Classify one line or text frame. Only the envelope's members are looked at, borrowed from
/// the text: no tree of the message is built here, where every connection reads at once.
pub fn classify(text: &str) -> Result<IncomingMessage, InvalidMessage> {
    let members: Members<'_> = serde_json::from_str(text).map_err(|err| match err.classify() {
        serde_json::error::Category::Data => InvalidMessage::NotAMessage,
        _ => InvalidMessage::NotJson(err.to_string()),
    })?;
    if let Some(method) = members.method {
        let method: String =
            serde_json::from_str(method.get()).map_err(|_| InvalidMessage::NotAMessage)?;
        return Ok(match members.id {
            None => IncomingMessage::Notification { method },
            Some(id) => IncomingMessage::Request {
                id: request_id(id)?,
                method,
                text: text.into(),
            },
        });
    }
    match members.id {
        Some(id) if members.answer => Ok(IncomingMessage::Response {
            id: request_id(id)?,
            text: text.into(),
        }),
        _ => Err(InvalidMessage::NotAMessage),
    }
}

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
    match probe_id(prefix) {
        Some(id) => outgoing::error(&id, &error),
        None => outgoing::error_without_id(&error),
    }
}

/// The envelope members of a message: borrowed, so nothing of it is copied or built.
struct Members<'a> {
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    /// Whether it has a `result` or an `error` member.
    answer: bool,
}

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    /// The last of a repeated member counts, as with a JSON object tree.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Members {
            id: None,
            method: None,
            answer: false,
        };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "id" => members.id = Some(map.next_value()?),
                "method" => members.method = Some(map.next_value()?),
                "result" | "error" => {
                    map.next_value::<IgnoredAny>()?;
                    members.answer = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(members)
    }
}

/// A string or int64 id; anything else (`null`, a float, an object…) is not an id.
fn request_id(raw: &RawValue) -> Result<RequestId, InvalidMessage> {
    let text = raw.get();
    if text.starts_with('"') {
        serde_json::from_str(text)
            .map(RequestId::String)
            .map_err(|_| InvalidMessage::BadId)
    } else {
        text.parse::<i64>()
            .map(RequestId::Integer)
            .map_err(|_| InvalidMessage::BadId)
    }
}

/// The id of a message from the start of its text, if an `id` member comes before the cut.
fn probe_id(prefix: &[u8]) -> Option<RequestId> {
    let mut found = None;
    let mut deserializer = serde_json::Deserializer::from_slice(prefix);
    // The cut text ends the parse with an error; what was found before it stands.
    let _ = serde::de::DeserializeSeed::deserialize(IdProbe(&mut found), &mut deserializer);
    found
}

struct IdProbe<'f>(&'f mut Option<RequestId>);

impl<'de> serde::de::DeserializeSeed<'de> for IdProbe<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for IdProbe<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "id" {
                let raw: &RawValue = map.next_value()?;
                *self.0 = request_id(raw).ok();
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
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
            IncomingMessage::Request { id, method, text } => {
                let reject_id = id.clone();
                let request = IncomingMessage::Request { id, method, text };
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

    #[test]
    fn envelope_members_are_read_without_a_tree() {
        // Escaped member names and repeated members read as a JSON object tree would.
        assert!(matches!(
            classify(r#"{"\u0069d":3,"method":"x","params":[[[]]]}"#),
            Ok(IncomingMessage::Request {
                id: RequestId::Integer(3),
                ..
            })
        ));
        assert!(matches!(
            classify(r#"{"id":null,"id":4,"method":"x"}"#),
            Ok(IncomingMessage::Request {
                id: RequestId::Integer(4),
                ..
            })
        ));
        assert_eq!(
            classify(r#"{"id":1,"method":5}"#).unwrap_err(),
            InvalidMessage::NotAMessage
        );
        assert_eq!(
            classify(r#"{"id":{"a":1},"method":"x"}"#).unwrap_err(),
            InvalidMessage::BadId
        );
        assert!(matches!(
            classify(r#"{"id":1,"method":"x"} trailing"#),
            Err(InvalidMessage::NotJson(_))
        ));
    }

    #[test]
    fn an_oversized_message_keeps_its_id_when_it_comes_first() {
        let cut = br#"{"jsonrpc":"2.0","id":"big","params":{"pad":"xxxxx"#;
        assert_eq!(probe_id(cut), Some(RequestId::String("big".into())));
        assert_eq!(probe_id(br#"{"method":"x","params":{"pad":"xxxx"#), None);
        assert_eq!(probe_id(b"xxxx"), None);
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
