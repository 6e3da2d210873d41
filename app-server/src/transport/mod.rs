//! Transports: they turn bytes into [`IncomingMessage`]s for the processor and write the
//! connection's outbound queue back out. Bad input is logged and dropped here; it never
//! closes a connection.

pub mod stdio;
pub mod ws;

use serde_json::Value;
use weft_protocol::jsonrpc::RequestId;

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

/// Why a frame was dropped without a reply.
#[derive(Debug, PartialEq, Eq)]
pub enum Dropped {
    /// Not JSON at all.
    NotJson(String),
    /// JSON, but not a JSON-RPC message object (arrays, scalars, missing members).
    NotAMessage,
    /// A request whose id is null, a float, or another non-id type.
    BadId,
}

/// Classify one line or text frame.
pub fn classify(text: &str) -> Result<IncomingMessage, Dropped> {
    let value: Value =
        serde_json::from_str(text).map_err(|err| Dropped::NotJson(err.to_string()))?;
    let Value::Object(object) = &value else {
        return Err(Dropped::NotAMessage);
    };
    let id = object.get("id");
    if let Some(method) = object.get("method") {
        let Value::String(method) = method else {
            return Err(Dropped::NotAMessage);
        };
        let method = method.clone();
        return match id {
            None => Ok(IncomingMessage::Notification { method }),
            Some(id) => {
                let id = request_id(id).ok_or(Dropped::BadId)?;
                Ok(IncomingMessage::Request {
                    id,
                    method,
                    raw: value,
                })
            }
        };
    }
    match id {
        Some(id) if object.contains_key("result") || object.contains_key("error") => {
            let id = request_id(id).ok_or(Dropped::BadId)?;
            Ok(IncomingMessage::Response { id, raw: value })
        }
        _ => Err(Dropped::NotAMessage),
    }
}

fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => n.as_i64().map(RequestId::Integer),
        _ => None,
    }
}

/// Log a dropped frame (never its full content: it may be huge).
pub fn log_dropped(connection: u64, reason: &Dropped, text: &str) {
    let preview: String = text.chars().take(120).collect();
    tracing::warn!(connection, ?reason, %preview, len = text.len(), "ignoring a message that is not valid JSON-RPC");
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
            Dropped::BadId
        );
        assert_eq!(
            classify(r#"{"id":1.5,"method":"x"}"#).unwrap_err(),
            Dropped::BadId
        );
        assert_eq!(classify("[1,2]").unwrap_err(), Dropped::NotAMessage);
        assert_eq!(classify(r#"{"id":1}"#).unwrap_err(), Dropped::NotAMessage);
        assert!(matches!(classify("{\"id\":"), Err(Dropped::NotJson(_))));
    }
}
