//! Property tests of the JSON-RPC envelope: arbitrary input never panics and decodes into
//! something no bigger than a small multiple of itself; every message survives a
//! serialise/decode round trip unchanged.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// JSON values without floats (serde_json's default float parsing is not bit-exact, and the
/// envelope never looks inside numbers other than `id`).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(any::<String>(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A value that serialises to something other than `null` (`"params": null` and
/// `"data": null` decode as absent, by design).
fn non_null_value() -> impl Strategy<Value = Value> {
    json_value().prop_filter("not null", |v| !v.is_null())
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Integer),
        any::<String>().prop_map(RequestId::String),
    ]
}

fn jsonrpc_marker() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(prop_oneof![Just("2.0".to_owned()), any::<String>()])
}

fn trace() -> impl Strategy<Value = Option<W3cTraceContext>> {
    proptest::option::of(
        (
            proptest::option::of(any::<String>()),
            proptest::option::of(any::<String>()),
        )
            .prop_map(|(traceparent, tracestate)| W3cTraceContext {
                traceparent,
                tracestate,
            }),
    )
}

fn message() -> impl Strategy<Value = JsonRpcMessage> {
    prop_oneof![
        (
            jsonrpc_marker(),
            request_id(),
            any::<String>(),
            proptest::option::of(non_null_value()),
            trace(),
        )
            .prop_map(|(jsonrpc, id, method, params, trace)| {
                JsonRpcMessage::Request(JsonRpcRequest {
                    jsonrpc,
                    id,
                    method,
                    params,
                    trace,
                })
            }),
        (
            jsonrpc_marker(),
            any::<String>(),
            proptest::option::of(non_null_value())
        )
            .prop_map(|(jsonrpc, method, params)| {
                JsonRpcMessage::Notification(JsonRpcNotification {
                    jsonrpc,
                    method,
                    params,
                })
            }),
        (jsonrpc_marker(), request_id(), json_value()).prop_map(|(jsonrpc, id, result)| {
            JsonRpcMessage::Response(JsonRpcResponse {
                jsonrpc,
                id,
                result,
            })
        }),
        (
            jsonrpc_marker(),
            request_id(),
            any::<i64>(),
            any::<String>(),
            proptest::option::of(non_null_value()),
        )
            .prop_map(|(jsonrpc, id, code, message, data)| {
                JsonRpcMessage::Error(JsonRpcErrorResponse {
                    jsonrpc,
                    id,
                    error: JsonRpcError {
                        code,
                        message,
                        data,
                    },
                })
            }),
    ]
}

/// Text that is mostly JSON-RPC-shaped: fragments of real messages glued together, so the
/// decoder gets past the first byte more often than with uniform noise.
fn message_shaped_text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just(",".to_owned()),
        Just(":".to_owned()),
        Just("\"id\"".to_owned()),
        Just("\"method\"".to_owned()),
        Just("\"params\"".to_owned()),
        Just("\"result\"".to_owned()),
        Just("\"error\"".to_owned()),
        Just("\"jsonrpc\"".to_owned()),
        Just("null".to_owned()),
        Just("1e400".to_owned()),
        Just("-0".to_owned()),
        Just("9223372036854775808".to_owned()),
        Just("\"\\ud800\"".to_owned()),
        any::<i64>().prop_map(|i| i.to_string()),
        "\"[^\"\\\\]{0,8}\"",
        any::<String>(),
    ];
    proptest::collection::vec(fragment, 0..32).prop_map(|parts| parts.concat())
}

/// Bytes a decoded message holds on to (string contents and numbers' text), a proxy for what
/// it retains.
fn retained(message: &JsonRpcMessage) -> usize {
    serde_json::to_string(message).map_or(0, |text| text.len())
}

/// The bound: a number re-encodes at most 4.5 times as long as its shortest spelling
/// (`1e15` becomes `1000000000000000.0`); strings and member names never grow.
fn bound(input: &str) -> usize {
    5 * input.len() + 64
}

fn check_decode(text: &str) -> Result<(), TestCaseError> {
    match JsonRpcMessage::from_json_str(text) {
        Ok(message) => {
            prop_assert!(
                retained(&message) <= bound(text),
                "{} bytes decoded from {}",
                retained(&message),
                text.len()
            );
            // A decoded message is a fixed point of encode + decode.
            let again =
                serde_json::to_string(&message).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(JsonRpcMessage::from_json_str(&again), Ok(message));
        }
        Err(err) => {
            // The error carries serde's message, which may quote the offending string in
            // Rust's debug form (one DEL byte is shown as six characters, `\u{7f}`).
            let shown = err.to_string();
            prop_assert!(
                shown.len() <= 8 * text.len() + 256,
                "{} byte error for {} input bytes",
                shown.len(),
                text.len()
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Arbitrary bytes (as a transport sees them after lossy UTF-8 decoding) never panic.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_decode(&String::from_utf8_lossy(&bytes))?;
    }

    /// Message-shaped noise never panics either, and what decodes is bounded.
    #[test]
    fn message_shaped_noise_never_panics(text in message_shaped_text()) {
        check_decode(&text)?;
    }

    /// Serialised then decoded, every message is equal to itself.
    #[test]
    fn messages_round_trip(message in message()) {
        let text = serde_json::to_string(&message).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(JsonRpcMessage::from_json_str(&text), Ok(message.clone()));
        let value = serde_json::to_value(&message).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(JsonRpcMessage::from_value(value), Ok(message.clone()));
        prop_assert!(retained(&message) <= bound(&text));
    }

    /// The envelope classifier agrees with the full decode on the kind, id and method of
    /// every message, and keeps what it carries as written.
    #[test]
    fn envelope_agrees_with_the_message(message in message()) {
        let text = serde_json::to_string(&message).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let envelope = Envelope::read(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let raw = |value: &Value| serde_json::value::to_raw_value(value).ok();
        let expected = match &message {
            JsonRpcMessage::Request(r) => Envelope::Request {
                id: r.id.clone(),
                method: r.method.clone(),
                params: r.params.as_ref().and_then(raw),
            },
            JsonRpcMessage::Notification(n) => Envelope::Notification { method: n.method.clone() },
            JsonRpcMessage::Response(r) => Envelope::Response {
                id: r.id.clone(),
                result: raw(&r.result),
                error: None,
            },
            JsonRpcMessage::Error(e) => Envelope::Response {
                id: e.id.clone(),
                result: None,
                error: serde_json::value::to_raw_value(&e.error).ok(),
            },
        };
        prop_assert_eq!(envelope, expected);
    }

    /// Any JSON value at all classifies without panicking.
    #[test]
    fn any_value_classifies(value in json_value()) {
        let _ = Envelope::read(&value.to_string());
        let _ = JsonRpcMessage::from_value(value);
    }

    /// Nesting far beyond serde_json's recursion limit is refused, not a stack overflow.
    #[test]
    fn deep_nesting_never_overflows_the_stack(depth in 0usize..20_000, open in prop_oneof![Just('['), Just('{')]) {
        let text = if open == '[' {
            format!("{{\"id\":1,\"method\":\"m\",\"params\":{}{}}}", "[".repeat(depth), "]".repeat(depth))
        } else {
            format!("{{\"id\":1,\"method\":\"m\",\"params\":{}1{}}}", "{\"a\":".repeat(depth), "}".repeat(depth))
        };
        check_decode(&text)?;
    }
}
