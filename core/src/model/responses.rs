//! Decoding Responses API SSE events (docs/architecture.md §7.2) into [`ResponseEvent`]s.
//!
//! Dispatch is on the JSON `type` (the `event:` line is ignored); non-JSON data and unknown
//! types are skipped. `response.completed` ends the stream; `response.failed`,
//! `response.incomplete` and top-level `error` events end it at once with an error (Codex
//! waited for the end of the body).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::error::ModelError;
use super::event::{ResponseEvent, TokenUsage};
use super::item::ResponseItem;
use super::limits::{MAX_REASONING_PARTS, part_index_ok};
use super::stream::{Decoder, Events, Flow};

/// State of one Responses stream.
#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    /// `end_turn` of the last assistant message that carried one.
    end_turn: Option<bool>,
}

/// The fields of an SSE event that are read. Borrowed where possible: a delta event costs
/// two small allocations (its text and its item id); unknown fields are skipped unparsed.
#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default, borrow)]
    item_id: Cow<'a, str>,
    #[serde(default)]
    summary_index: Option<i64>,
    #[serde(default)]
    content_index: Option<i64>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<Value>,
}

impl Decoder for ResponsesDecoder {
    fn data(&mut self, data: &[u8], out: &mut Events) -> Flow {
        // Checked as UTF-8 once, whole: parsing from a `str` then skips the check of each
        // string (the per-string checks were 5 % of a streamed delta's instructions).
        let parsed = match std::str::from_utf8(data) {
            Ok(text) => serde_json::from_str::<RawEvent>(text),
            Err(_) => serde_json::from_slice::<RawEvent>(data),
        };
        let event: RawEvent = match parsed {
            Ok(event) => event,
            Err(err) => {
                tracing::debug!(error = %err, "skipping SSE data that is not an event");
                return Flow::Continue;
            }
        };
        for (field, index) in [
            ("summary_index", event.summary_index),
            ("content_index", event.content_index),
        ] {
            if let Some(index) = index.filter(|i| !part_index_ok(*i)) {
                out.push_back(Err(ModelError::malformed(format!(
                    "`{field}` {index} is outside 0..{MAX_REASONING_PARTS}"
                ))));
                return Flow::Stop;
            }
        }
        match event.kind.as_ref() {
            "response.created" if event.response.is_some() => {
                out.push_back(Ok(ResponseEvent::Created));
            }
            "response.output_item.added" => {
                if let Some(item) = parse_item(event.item) {
                    out.push_back(Ok(ResponseEvent::OutputItemAdded(item)));
                }
            }
            "response.output_text.delta" => {
                if let Some(delta) = event.delta {
                    let item_id = event.item_id.into_owned();
                    out.push_back(Ok(ResponseEvent::OutputTextDelta { item_id, delta }));
                }
            }
            "response.reasoning_summary_part.added" => {
                if let Some(summary_index) = event.summary_index {
                    let item_id = event.item_id.into_owned();
                    out.push_back(Ok(ResponseEvent::ReasoningSummaryPartAdded {
                        item_id,
                        summary_index,
                    }));
                }
            }
            "response.reasoning_summary_text.delta" => {
                if let (Some(delta), Some(summary_index)) = (event.delta, event.summary_index) {
                    let item_id = event.item_id.into_owned();
                    out.push_back(Ok(ResponseEvent::ReasoningSummaryDelta {
                        item_id,
                        summary_index,
                        delta,
                    }));
                }
            }
            "response.reasoning_text.delta" => {
                if let Some(delta) = event.delta {
                    let item_id = event.item_id.into_owned();
                    out.push_back(Ok(ResponseEvent::ReasoningContentDelta {
                        item_id,
                        content_index: event.content_index.unwrap_or(0),
                        delta,
                    }));
                }
            }
            "response.output_item.done" => {
                if let Some(item) = parse_item(event.item) {
                    if let ResponseItem::Message {
                        end_turn: Some(end_turn),
                        ..
                    } = &item
                    {
                        self.end_turn = Some(*end_turn);
                    }
                    out.push_back(Ok(ResponseEvent::OutputItemDone(item)));
                }
            }
            "response.completed" => {
                out.push_back(self.completed(event.response));
                return Flow::Stop;
            }
            "response.failed" => {
                let error = event.response.as_ref().and_then(|r| r.get("error"));
                out.push_back(Err(ModelError::from_error_object(error)));
                return Flow::Stop;
            }
            "response.incomplete" => {
                let reason = event
                    .response
                    .as_ref()
                    .and_then(|r| r.pointer("/incomplete_details/reason"))
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
                    .to_string();
                out.push_back(Err(ModelError::Incomplete { reason }));
                return Flow::Stop;
            }
            "error" => {
                // `{"type":"error","code":…,"message":…}` or with a nested `error` object.
                let error = event.error.unwrap_or_else(
                    || serde_json::json!({ "code": event.code, "message": event.message }),
                );
                out.push_back(Err(ModelError::from_error_object(Some(&error))));
                return Flow::Stop;
            }
            _ => {}
        }
        Flow::Continue
    }

    fn end(&mut self, out: &mut Events) {
        out.push_back(Err(ModelError::stream_closed()));
    }
}

impl ResponsesDecoder {
    fn completed(&self, response: Option<Value>) -> Result<ResponseEvent, ModelError> {
        let response = response.unwrap_or(Value::Null);
        let token_usage = match response.get("usage") {
            None | Some(Value::Null) => None,
            Some(usage) => Some(parse_usage(usage).ok_or_else(|| {
                ModelError::stream(format!(
                    "failed to parse usage in response.completed: {usage}"
                ))
            })?),
        };
        Ok(ResponseEvent::Completed {
            response_id: response
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            token_usage,
            end_turn: response
                .get("end_turn")
                .and_then(Value::as_bool)
                .or(self.end_turn),
        })
    }
}

fn parse_item(item: Option<Value>) -> Option<ResponseItem> {
    match serde_json::from_value(item?) {
        Ok(item) => Some(item),
        Err(err) => {
            tracing::debug!(error = %err, "dropping an output item that does not parse");
            None
        }
    }
}

/// Responses `usage`: the three totals are required, the details optional.
fn parse_usage(usage: &Value) -> Option<TokenUsage> {
    let int = |pointer: &str| usage.pointer(pointer).and_then(Value::as_i64);
    Some(TokenUsage {
        input_tokens: int("/input_tokens")?,
        cached_input_tokens: int("/input_tokens_details/cached_tokens").unwrap_or(0),
        output_tokens: int("/output_tokens")?,
        reasoning_output_tokens: int("/output_tokens_details/reasoning_tokens").unwrap_or(0),
        total_tokens: int("/total_tokens")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(events: &[Value]) -> (Vec<Result<ResponseEvent, ModelError>>, bool) {
        let mut decoder = ResponsesDecoder::default();
        let mut out = Events::new();
        for event in events {
            if decoder.data(event.to_string().as_bytes(), &mut out) == Flow::Stop {
                return (out.into_iter().collect(), true);
            }
        }
        decoder.end(&mut out);
        (out.into_iter().collect(), false)
    }

    #[test]
    fn completed_with_usage_and_end_turn() {
        let (events, stopped) = decode(&[
            json!({"type": "response.created", "response": {"id": "r"}}),
            json!({"type": "response.in_progress", "response": {"id": "r"}}),
            json!({"type": "response.output_item.done", "item": {"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": "x"}], "end_turn": true}}),
            json!({"type": "response.completed", "response": {"id": "r", "usage": {
                "input_tokens": 5120, "input_tokens_details": null, "output_tokens": 210,
                "output_tokens_details": {"reasoning_tokens": 128}, "total_tokens": 5330}}}),
            json!({"type": "response.output_text.delta", "delta": "ignored after completed"}),
        ]);
        assert!(stopped);
        assert_eq!(events.len(), 3);
        assert_eq!(
            events[2],
            Ok(ResponseEvent::Completed {
                response_id: "r".into(),
                token_usage: Some(TokenUsage {
                    input_tokens: 5120,
                    cached_input_tokens: 0,
                    output_tokens: 210,
                    reasoning_output_tokens: 128,
                    total_tokens: 5330,
                }),
                end_turn: Some(true),
            })
        );
    }

    #[test]
    fn errors_are_terminal() {
        let (events, stopped) = decode(&[json!({"type": "response.failed", "response": {
            "error": {"code": "context_length_exceeded", "message": "too long"}}})]);
        assert!(stopped);
        assert!(matches!(
            events[0],
            Err(ModelError::ContextWindowExceeded { .. })
        ));
        let (events, _) = decode(&[json!({"type": "response.incomplete", "response": {
            "incomplete_details": {"reason": "max_output_tokens"}}})]);
        assert_eq!(
            events[0],
            Err(ModelError::Incomplete {
                reason: "max_output_tokens".into()
            })
        );
        let (events, _) =
            decode(&[json!({"type": "error", "code": "server_error", "message": "boom"})]);
        assert!(matches!(&events[0], Err(ModelError::Stream { message, .. }) if message == "boom"));
        let (events, stopped) = decode(&[json!({"type": "response.created", "response": {}})]);
        assert!(!stopped);
        assert!(matches!(&events[1], Err(ModelError::Stream { message, .. })
            if message == "stream closed before response.completed"));
        let (events, _) = decode(&[json!({"type": "response.completed",
            "response": {"id": "r", "usage": {"input_tokens": 1}}})]);
        assert!(matches!(events[0], Err(ModelError::Stream { .. })));
    }

    #[test]
    fn a_part_index_past_the_bound_ends_the_stream_unretried() {
        for event in [
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs",
                   "summary_index": 2_000_000_000i64}),
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs",
                   "summary_index": MAX_REASONING_PARTS, "delta": "x"}),
            json!({"type": "response.reasoning_text.delta", "item_id": "rs",
                   "content_index": -1, "delta": "x"}),
        ] {
            let (events, stopped) = decode(&[event]);
            assert!(stopped);
            assert_eq!(events.len(), 1);
            let Err(err) = &events[0] else {
                panic!("expected an error, got {events:?}");
            };
            assert!(matches!(err, ModelError::Malformed { .. }), "{err:?}");
            assert!(!err.is_retryable());
        }
        let (events, _) = decode(&[json!({"type": "response.reasoning_summary_part.added",
            "item_id": "rs", "summary_index": MAX_REASONING_PARTS - 1})]);
        assert!(matches!(
            events[0],
            Ok(ResponseEvent::ReasoningSummaryPartAdded { .. })
        ));
    }

    #[test]
    fn skips_garbage_and_unknown_events() {
        let mut decoder = ResponsesDecoder::default();
        let mut out = Events::new();
        for data in [
            &b"not json"[..],
            br#"{"type":"response.content_part.added"}"#,
            br#"{"no":"type"}"#,
        ] {
            assert_eq!(decoder.data(data, &mut out), Flow::Continue);
        }
        assert!(out.is_empty());
    }

    #[test]
    fn a_tool_search_call_is_an_output_item() {
        let item = json!({"type": "tool_search_call", "id": "tsc_1", "call_id": "call_ts",
            "status": "completed", "execution": "client",
            "arguments": {"query": "echo", "limit": 3}});
        let (events, _) = decode(&[
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ]);
        let expected = ResponseItem::ToolSearchCall {
            id: Some("tsc_1".into()),
            call_id: Some("call_ts".into()),
            status: Some("completed".into()),
            execution: Some("client".into()),
            arguments: json!({"query": "echo", "limit": 3}),
        };
        assert_eq!(
            events[0],
            Ok(ResponseEvent::OutputItemAdded(expected.clone()))
        );
        assert_eq!(events[1], Ok(ResponseEvent::OutputItemDone(expected)));
    }
}
