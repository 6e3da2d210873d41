//! JSON-RPC envelope types: request ids and error objects, and the one envelope classifier
//! ([`envelope`]).

mod envelope;

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use self::envelope::Envelope;

/// Invalid request (also used by Codex for unknown methods and bad params).
pub const INVALID_REQUEST: i64 = -32600;
/// Method not found.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// Server overloaded; the client should retry with backoff.
pub const OVERLOADED: i64 = -32001;

/// Id of a JSON-RPC request: a string or a 64-bit integer, echoed back with the same JSON type.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(untagged)]
pub enum RequestId {
    /// A string id.
    String(String),
    /// An integer id.
    Integer(i64),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::String(s) => f.write_str(s),
            RequestId::Integer(i) => write!(f, "{i}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(value: i64) -> Self {
        RequestId::Integer(value)
    }
}

impl From<String> for RequestId {
    fn from(value: String) -> Self {
        RequestId::String(value)
    }
}

impl From<&str> for RequestId {
    fn from(value: &str) -> Self {
        RequestId::String(value.to_owned())
    }
}

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "JSONRPCErrorError")]
pub struct JsonRpcError {
    /// Error code (see the constants in this module).
    pub code: i64,
    /// Human-readable error message.
    pub message: String,
    /// Optional structured details (e.g. a `TurnError`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl JsonRpcError {
    /// Builds an error with the given code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32600` with the given message.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, message)
    }

    /// `-32603` with the given message.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    /// `-32001 Server overloaded; retry later.`
    pub fn overloaded() -> Self {
        Self::new(OVERLOADED, "Server overloaded; retry later.")
    }

    /// Attaches structured `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl fmt::Display for JsonRpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for JsonRpcError {}

/// The JSON-RPC version marker Weft may add to outgoing messages.
pub const JSONRPC_VERSION: &str = "2.0";

/// A JSON-RPC error response: `{"id": …, "error": {…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "JSONRPCError")]
pub struct JsonRpcErrorResponse {
    /// Optional `"2.0"` marker (Codex omits it; accepted either way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonrpc: Option<String>,
    /// The id of the request that failed.
    pub id: RequestId,
    /// The error.
    pub error: JsonRpcError,
}

impl JsonRpcErrorResponse {
    /// An error response carrying `"jsonrpc": "2.0"`.
    pub fn new(id: RequestId, error: JsonRpcError) -> Self {
        Self {
            jsonrpc: Some(JSONRPC_VERSION.to_owned()),
            id,
            error,
        }
    }
}

/// W3C trace context that may accompany a request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct W3cTraceContext {
    /// `traceparent` header value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// `tracestate` header value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
}

/// A request with untyped params (either direction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "JSONRPCRequest")]
pub struct JsonRpcRequest {
    /// Optional `"2.0"` marker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonrpc: Option<String>,
    /// Request id.
    pub id: RequestId,
    /// Method name.
    pub method: String,
    /// Params (absent when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Optional W3C trace context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<W3cTraceContext>,
}

/// A notification with untyped params (either direction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "JSONRPCNotification")]
pub struct JsonRpcNotification {
    /// Optional `"2.0"` marker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonrpc: Option<String>,
    /// Method name.
    pub method: String,
    /// Params (absent when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A successful response with an untyped result (either direction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "JSONRPCResponse")]
pub struct JsonRpcResponse {
    /// Optional `"2.0"` marker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonrpc: Option<String>,
    /// Id of the request answered.
    pub id: RequestId,
    /// The result.
    pub result: Value,
}

impl JsonRpcResponse {
    /// A response carrying `"jsonrpc": "2.0"` with the serialized `result`.
    pub fn new<T: Serialize>(id: RequestId, result: &T) -> serde_json::Result<Self> {
        Ok(Self {
            jsonrpc: Some(JSONRPC_VERSION.to_owned()),
            id,
            result: serde_json::to_value(result)?,
        })
    }
}

/// Why a JSON value is not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidMessage {
    /// Not JSON at all (the parser's message).
    NotJson(String),
    /// JSON, but not a JSON-RPC message object (arrays, scalars, a non-string `method`,
    /// missing members).
    NotAMessage,
    /// An `id` that is neither a string nor an int64 (`null`, a float, …).
    BadId,
    /// The members say what kind of message it is, but one of them has the wrong shape.
    Malformed {
        /// `request`, `notification`, `response` or `error`.
        kind: &'static str,
        /// serde's message.
        error: String,
    },
}

impl fmt::Display for InvalidMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid JSON-RPC message: ")?;
        match self {
            InvalidMessage::NotJson(err) => write!(f, "not JSON: {err}"),
            InvalidMessage::NotAMessage => f.write_str("not a request, notification or response"),
            InvalidMessage::BadId => f.write_str("`id` must be a string or an int64"),
            InvalidMessage::Malformed { kind, error } => write!(f, "{kind}: {error}"),
        }
    }
}

impl std::error::Error for InvalidMessage {}

/// Any JSON-RPC message, classified by its members (not by trial and error):
/// `method` + `id` = request, `method` without `id` = notification, `id` + `result` = response,
/// `id` + `error` = error. An `id` that is neither a string nor an int64 (e.g. `null`, a float)
/// makes the message invalid; such messages are logged and dropped without a reply.
// The schema's description comes from the doc comment above; the classification itself is
// [`Envelope::read`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "JSONRPCMessage")]
pub enum JsonRpcMessage {
    /// A request.
    Request(JsonRpcRequest),
    /// A notification.
    Notification(JsonRpcNotification),
    /// A successful response.
    Response(JsonRpcResponse),
    /// An error response.
    Error(JsonRpcErrorResponse),
}

impl JsonRpcMessage {
    /// Classifies a parsed JSON value (through its text: the one classifier is
    /// [`Envelope::read`]).
    pub fn from_value(value: Value) -> Result<Self, InvalidMessage> {
        let envelope = Envelope::read(&value.to_string())?;
        Self::decode(&envelope, value)
    }

    /// Parses and classifies one line / frame.
    pub fn from_json_str(text: &str) -> Result<Self, InvalidMessage> {
        let envelope = Envelope::read(text)?;
        let value: Value =
            serde_json::from_str(text).map_err(|e| InvalidMessage::NotJson(e.to_string()))?;
        Self::decode(&envelope, value)
    }

    /// The message of the kind `envelope` says, decoded from its tree.
    fn decode(envelope: &Envelope, value: Value) -> Result<Self, InvalidMessage> {
        let kind = match envelope {
            Envelope::Request { .. } => "request",
            Envelope::Notification { .. } => "notification",
            Envelope::Response {
                result: Some(_), ..
            } => "response",
            Envelope::Response { .. } => "error",
        };
        let invalid = |e: serde_json::Error| InvalidMessage::Malformed {
            kind,
            error: e.to_string(),
        };
        Ok(match kind {
            "request" => JsonRpcMessage::Request(serde_json::from_value(value).map_err(invalid)?),
            "notification" => {
                JsonRpcMessage::Notification(serde_json::from_value(value).map_err(invalid)?)
            }
            "response" => JsonRpcMessage::Response(serde_json::from_value(value).map_err(invalid)?),
            _ => JsonRpcMessage::Error(serde_json::from_value(value).map_err(invalid)?),
        })
    }
}

impl<'de> Deserialize<'de> for JsonRpcMessage {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_value(value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn request_id_echoes_string_and_integer() {
        let s: RequestId = serde_json::from_value(json!("abc")).unwrap();
        assert_eq!(s, RequestId::String("abc".into()));
        assert_eq!(serde_json::to_value(&s).unwrap(), json!("abc"));
        assert_eq!(s.to_string(), "abc");

        let i: RequestId = serde_json::from_value(json!(42)).unwrap();
        assert_eq!(i, RequestId::Integer(42));
        assert_eq!(serde_json::to_value(&i).unwrap(), json!(42));
        assert_eq!(i.to_string(), "42");

        // "7" and 7 are different ids.
        let seven: RequestId = serde_json::from_value(json!("7")).unwrap();
        assert_ne!(seven, RequestId::Integer(7));
        assert_eq!(serde_json::to_string(&seven).unwrap(), r#""7""#);

        assert!(serde_json::from_value::<RequestId>(json!(1.5)).is_err());
        assert!(serde_json::from_value::<RequestId>(json!(null)).is_err());
    }

    #[test]
    fn error_response_shape() {
        let err = JsonRpcErrorResponse::new(
            RequestId::Integer(3),
            JsonRpcError::invalid_request("Not initialized"),
        );
        assert_eq!(
            serde_json::to_value(&err).unwrap(),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32600, "message": "Not initialized"}})
        );
        let with_data = JsonRpcError::invalid_request("x").with_data(json!({"a": 1}));
        assert_eq!(
            serde_json::to_value(&with_data).unwrap()["data"],
            json!({"a": 1})
        );
        assert_eq!(JsonRpcError::overloaded().code, OVERLOADED);
        assert_eq!(
            (
                INVALID_REQUEST,
                METHOD_NOT_FOUND,
                INVALID_PARAMS,
                INTERNAL_ERROR,
                OVERLOADED
            ),
            (-32600, -32601, -32602, -32603, -32001)
        );
    }

    #[test]
    fn classifies_messages() {
        let m = JsonRpcMessage::from_json_str(r#"{"id":1,"method":"initialize","params":{}}"#);
        assert!(matches!(m, Ok(JsonRpcMessage::Request(r)) if r.id == RequestId::Integer(1)));
        let m = JsonRpcMessage::from_json_str(r#"{"jsonrpc":"2.0","method":"initialized"}"#);
        assert!(matches!(m, Ok(JsonRpcMessage::Notification(n)) if n.method == "initialized"));
        let m = JsonRpcMessage::from_json_str(r#"{"id":"a","result":{"decision":"accept"}}"#);
        assert!(matches!(m, Ok(JsonRpcMessage::Response(_))));
        let m = JsonRpcMessage::from_json_str(r#"{"id":0,"error":{"code":-1,"message":"no"}}"#);
        assert!(matches!(m, Ok(JsonRpcMessage::Error(_))));
        let m = JsonRpcMessage::from_json_str(r#"{"id":1,"method":"x","params":null}"#);
        assert!(matches!(m, Ok(JsonRpcMessage::Request(r)) if r.params.is_none()));

        for bad in [
            r#"{"id":null,"method":"initialize"}"#,
            r#"{"id":1.5,"method":"initialize"}"#,
            r#"{"id":[1],"method":"initialize"}"#,
            r#"[{"id":1,"method":"initialize"}]"#,
            r#"{"foo":1}"#,
            r#"{"id":1}"#,
            "not json",
        ] {
            assert!(JsonRpcMessage::from_json_str(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn response_helper_adds_version() {
        let r = JsonRpcResponse::new(RequestId::from("x"), &json!({})).unwrap();
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"jsonrpc":"2.0","id":"x","result":{}}"#
        );
    }
}

#[cfg(test)]
mod proptests;
