//! Serializing what Weft sends. Every message carries `"jsonrpc":"2.0"` (strict JSON-RPC 2.0
//! clients such as jsonrpsee's need it; Codex clients ignore it) and every notification an
//! `emittedAtMs` timestamp. A notification is serialized once and the same bytes go to every
//! subscribed connection.

use bytes::Bytes;
use serde::Serialize;
use weft_core::time::now_ms;
use weft_protocol::jsonrpc::{JsonRpcError, RequestId};
use weft_protocol::notifications::ServerNotification;
use weft_protocol::server_requests::ServerRequest;

/// `{"jsonrpc":"2.0","id":…,"result":…}`.
pub fn response<T: Serialize>(id: &RequestId, result: &T) -> Bytes {
    #[derive(Serialize)]
    struct Response<'a, T> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        result: &'a T,
    }
    to_bytes(&Response {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// `{"jsonrpc":"2.0","id":…,"error":{…}}`.
pub fn error(id: &RequestId, error: &JsonRpcError) -> Bytes {
    #[derive(Serialize)]
    struct ErrorResponse<'a> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        error: &'a JsonRpcError,
    }
    to_bytes(&ErrorResponse {
        jsonrpc: "2.0",
        id,
        error,
    })
}

/// `{"jsonrpc":"2.0","id":null,"error":{…}}`: the error for a message whose id cannot be
/// known (one over the size limit, cut before its `id`), as JSON-RPC 2.0 prescribes.
pub fn error_without_id(error: &JsonRpcError) -> Bytes {
    #[derive(Serialize)]
    struct ErrorResponse<'a> {
        jsonrpc: &'static str,
        id: (),
        error: &'a JsonRpcError,
    }
    to_bytes(&ErrorResponse {
        jsonrpc: "2.0",
        id: (),
        error,
    })
}

/// `{"jsonrpc":"2.0","method":…,"params":…,"emittedAtMs":…}`, assembled around the params'
/// JSON (the hot path: one serialization per notification, whatever the number of receivers).
pub fn notification(notification: &ServerNotification) -> Bytes {
    notification_at(notification, now_ms())
}

/// [`notification`] with a given `emittedAtMs` (a merged delta: when its last part was made).
pub fn notification_at(notification: &ServerNotification, emitted_at_ms: i64) -> Bytes {
    match notification.line_bytes(emitted_at_ms) {
        Ok(line) => Bytes::from(line),
        Err(err) => {
            tracing::error!(%err, method = notification.method(), "failed to serialize a notification");
            Bytes::new()
        }
    }
}

/// `{"jsonrpc":"2.0","id":…,"method":…,"params":…}` for a server → client request.
pub fn server_request(request: &ServerRequest) -> Bytes {
    #[derive(Serialize)]
    struct Request<'a> {
        jsonrpc: &'static str,
        #[serde(flatten)]
        inner: &'a ServerRequest,
    }
    to_bytes(&Request {
        jsonrpc: "2.0",
        inner: request,
    })
}

fn to_bytes<T: Serialize>(value: &T) -> Bytes {
    match serde_json::to_vec(value) {
        Ok(bytes) => Bytes::from(bytes),
        Err(err) => {
            // Our own types always serialize; if one ever does not, log it and send nothing
            // (an empty frame is skipped by every writer) rather than a broken line.
            tracing::error!(%err, "failed to serialize an outgoing message");
            Bytes::new()
        }
    }
}
