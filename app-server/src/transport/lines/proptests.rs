//! Property tests of the line decoder: any bytes read through any buffer size give the
//! lines a plain split on `\n` gives, a line over the limit is reported and never buffered,
//! and JSON-RPC messages written one per line come back as the same envelopes.

use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::io::BufReader;
use weft_protocol::jsonrpc::RequestId;

use super::*;
use weft_protocol::jsonrpc::Envelope;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// What one `read_line` call returned, with the line's bytes when complete.
#[derive(Debug, PartialEq, Eq)]
enum Read {
    Complete(Vec<u8>),
    TooLong(usize),
    Eof,
}

/// Read `input` to the end through a `capacity`-byte buffer, checking after every call that
/// the line buffer stays within `max` bytes (and its allocation within twice that).
fn read_all(input: &[u8], capacity: usize, max: usize) -> Result<Vec<Read>, TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    runtime.block_on(async {
        let mut reader = BufReader::with_capacity(capacity, input);
        let mut buf = Vec::new();
        let mut reads = Vec::new();
        // Every call consumes at least one byte or returns Eof.
        for _ in 0..=input.len() + 1 {
            let line = read_line(&mut reader, &mut buf, max)
                .await
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(
                buf.len() <= max,
                "{} bytes buffered, limit {}",
                buf.len(),
                max
            );
            prop_assert!(
                buf.capacity() <= (2 * max).max(8),
                "{} bytes allocated, limit {}",
                buf.capacity(),
                max
            );
            match line {
                Line::Complete => reads.push(Read::Complete(buf.clone())),
                Line::TooLong(len) => {
                    // Only the line's start stays, for finding its id.
                    let kept = super::OVERSIZED_PREFIX.min(max);
                    prop_assert!(
                        buf.len() <= kept,
                        "a discarded line left {} bytes",
                        buf.len()
                    );
                    reads.push(Read::TooLong(len));
                }
                Line::Eof => {
                    reads.push(Read::Eof);
                    return Ok(reads);
                }
            }
        }
        Err(TestCaseError::fail("read_line never reached Eof"))
    })
}

/// The lines of `input` by a plain split: every `\n` ends a line, a last line without one
/// counts, and nothing follows a final `\n`.
fn reference(input: &[u8], max: usize) -> Vec<Read> {
    let mut pieces: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
    if pieces.last().is_some_and(|last| last.is_empty()) {
        pieces.pop();
    }
    pieces
        .into_iter()
        .map(|line| {
            if line.len() > max {
                Read::TooLong(line.len())
            } else {
                Read::Complete(line.to_vec())
            }
        })
        .chain([Read::Eof])
        .collect()
}

fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"{\"id\":1,\"method\":\"x\"}".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..24),
    ];
    proptest::collection::vec(piece, 0..16).prop_map(|pieces| pieces.concat())
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Integer),
        any::<String>().prop_map(RequestId::String),
    ]
}

/// A message and the envelope it must classify as: `(line, id, method)`.
fn message() -> impl Strategy<Value = (Value, Option<RequestId>, Option<String>)> {
    let params = prop_oneof![
        Just(json!({})),
        any::<String>().prop_map(|s| json!({"text": s, "nested": [s, {"deeper": s}]})),
        any::<i64>().prop_map(|i| json!([i, null, true])),
    ];
    prop_oneof![
        (request_id(), any::<String>(), params.clone()).prop_map(|(id, method, params)| {
            (
                json!({"id": id, "method": method, "params": params}),
                Some(id),
                Some(method),
            )
        }),
        (any::<String>(), params.clone()).prop_map(|(method, params)| {
            (
                json!({"jsonrpc": "2.0", "method": method, "params": params}),
                None,
                Some(method),
            )
        }),
        (request_id(), params)
            .prop_map(|(id, result)| { (json!({"id": id, "result": result}), Some(id), None) }),
    ]
}

proptest! {
    #![proptest_config(config())]

    /// Any bytes, any buffer size, any limit: exactly the reference's lines, and the line
    /// buffer never exceeds the limit.
    #[test]
    fn lines_match_a_plain_split(
        input in line_bytes(),
        capacity in 1usize..40,
        max in 0usize..48,
    ) {
        prop_assert_eq!(read_all(&input, capacity, max)?, reference(&input, max));
    }

    /// Each line, whatever it holds, classifies or is refused without panicking.
    #[test]
    fn any_line_classifies_without_panicking(input in line_bytes()) {
        for read in read_all(&input, 16, 1024)? {
            if let Read::Complete(line) = read {
                let text = String::from_utf8_lossy(&line);
                let _ = Envelope::read(text.trim());
            }
        }
    }

    /// Messages written one per line are read back, through any buffer size, as the same
    /// envelopes in the same order.
    #[test]
    fn messages_round_trip_through_lines(
        messages in proptest::collection::vec(message(), 0..8),
        capacity in 1usize..64,
    ) {
        let mut input = Vec::new();
        for (message, _, _) in &messages {
            input.extend_from_slice(message.to_string().as_bytes());
            input.push(b'\n');
        }
        let reads = read_all(&input, capacity, 1 << 20)?;
        prop_assert_eq!(reads.len(), messages.len() + 1);
        for (read, (message, id, method)) in reads.iter().zip(&messages) {
            let Read::Complete(line) = read else {
                return Err(TestCaseError::fail(format!("{read:?} for {message}")));
            };
            let text = std::str::from_utf8(line).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let decoded = Envelope::read(text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            match decoded {
                Envelope::Request { id: got, method: m, params } => {
                    prop_assert_eq!(Some(got), id.clone());
                    prop_assert_eq!(Some(m), method.clone());
                    prop_assert_eq!(params.as_deref().map(reparse).transpose()?, message.get("params").cloned());
                }
                Envelope::Notification { method: m } => {
                    prop_assert!(id.is_none());
                    prop_assert_eq!(Some(m), method.clone());
                }
                Envelope::Response { id: got, result, error } => {
                    prop_assert_eq!(Some(got), id.clone());
                    prop_assert!(method.is_none());
                    prop_assert_eq!(result.as_deref().map(reparse).transpose()?, message.get("result").cloned());
                    prop_assert_eq!(error.as_deref().map(reparse).transpose()?, message.get("error").cloned());
                }
            }
        }
    }
}

/// A member an envelope carries, parsed back into a JSON tree to compare.
fn reparse(raw: &serde_json::value::RawValue) -> Result<serde_json::Value, TestCaseError> {
    serde_json::from_str(raw.get()).map_err(|e| TestCaseError::fail(e.to_string()))
}
