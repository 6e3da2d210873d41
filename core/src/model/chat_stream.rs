//! Decoding Chat Completions stream chunks (docs/architecture.md §7.3) into [`ResponseEvent`]s.
//!
//! Text and reasoning (`reasoning_content`, or `reasoning` as a string or `{text|content}`)
//! stream as deltas on synthesized items. Tool-call fragments are assembled per slot (by
//! `index`, falling back to `id`) and emitted on **any** `finish_reason` and at `[DONE]`/end,
//! since several servers say `stop` after streaming tool calls. Reading continues after the
//! finish chunk so the usage chunk is seen.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::error::ModelError;
use super::event::{ResponseEvent, TokenUsage};
use super::item::{ContentItem, ReasoningContent, ResponseItem, Role};
use super::limits::MAX_CHAT_TOOL_CALLS;
use super::stream::{Decoder, Events, Flow};

/// State of one Chat stream.
#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    response_id: String,
    message: Option<Building>,
    reasoning: Option<Building>,
    /// Tool calls in first-seen order.
    calls: Vec<CallSlot>,
    /// A `finish_reason` was seen.
    finished: bool,
    usage: Option<TokenUsage>,
}

/// A text item being streamed.
#[derive(Debug)]
struct Building {
    kind: TextKind,
    id: String,
    text: String,
}

/// What a [`Building`] item is.
#[derive(Debug, Clone, Copy)]
enum TextKind {
    Reasoning,
    Message,
}

impl TextKind {
    /// The item as it is announced (`text` none) or done.
    fn item(self, id: String, text: Option<String>) -> ResponseItem {
        match self {
            TextKind::Reasoning => ResponseItem::Reasoning {
                id,
                summary: Vec::new(),
                content: Some(
                    text.map(|text| vec![ReasoningContent::ReasoningText { text }])
                        .unwrap_or_default(),
                ),
                encrypted_content: None,
            },
            TextKind::Message => ResponseItem::Message {
                id: Some(id),
                role: Role::Assistant,
                content: text
                    .map(|text| vec![ContentItem::OutputText { text }])
                    .unwrap_or_default(),
                end_turn: None,
                phase: None,
            },
        }
    }
}

impl Building {
    /// A new item of `kind`, announced in `out` (`response.output_item.added`).
    fn open(kind: TextKind, out: &mut Events) -> Building {
        let prefix = match kind {
            TextKind::Reasoning => "rs",
            TextKind::Message => "msg",
        };
        let id = format!("{prefix}_{}", uuid::Uuid::now_v7().simple());
        out.push_back(Ok(ResponseEvent::OutputItemAdded(
            kind.item(id.clone(), None),
        )));
        Building {
            kind,
            id,
            text: String::new(),
        }
    }

    /// Append `text` to the item in `slot`, opening one of `kind` when there is none; its id.
    fn append(slot: &mut Option<Building>, kind: TextKind, text: &str, out: &mut Events) -> String {
        let item = slot.get_or_insert_with(|| Building::open(kind, out));
        item.text.push_str(text);
        item.id.clone()
    }

    /// `response.output_item.done`, with the text streamed.
    fn done(self) -> ResponseEvent {
        ResponseEvent::OutputItemDone(self.kind.item(self.id, Some(self.text)))
    }
}

#[derive(Debug)]
struct CallSlot {
    index: Option<i64>,
    id: Option<String>,
    name: String,
    arguments: String,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    id: Cow<'a, str>,
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<ChatUsage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<FlexText>,
    #[serde(default)]
    reasoning_content: Option<FlexText>,
    #[serde(default)]
    reasoning: Option<FlexText>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<i64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<FlexArguments>,
}

#[derive(Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: i64,
    #[serde(default)]
    completion_tokens: i64,
    #[serde(default)]
    total_tokens: Option<i64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<i64>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<i64>,
}

impl Decoder for ChatDecoder {
    fn data(&mut self, data: &[u8], out: &mut Events) -> Flow {
        let trimmed = data.trim_ascii();
        if trimmed == b"[DONE]" || trimmed == b"DONE" {
            self.complete(out);
            return Flow::Stop;
        }
        let chunk: Chunk = match serde_json::from_slice(data) {
            Ok(chunk) => chunk,
            Err(err) => {
                tracing::debug!(error = %err, "skipping a chat chunk that does not parse");
                return Flow::Continue;
            }
        };
        if let Some(error) = chunk.error {
            let error = error.get("error").unwrap_or(&error);
            out.push_back(Err(ModelError::from_error_object(Some(error))));
            return Flow::Stop;
        }
        if self.response_id.is_empty() && !chunk.id.is_empty() {
            self.response_id = chunk.id.into_owned();
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(TokenUsage {
                input_tokens: usage.prompt_tokens,
                cached_input_tokens: usage
                    .prompt_tokens_details
                    .and_then(|d| d.cached_tokens)
                    .unwrap_or(0),
                output_tokens: usage.completion_tokens,
                reasoning_output_tokens: usage
                    .completion_tokens_details
                    .and_then(|d| d.reasoning_tokens)
                    .unwrap_or(0),
                total_tokens: usage
                    .total_tokens
                    .unwrap_or(usage.prompt_tokens.saturating_add(usage.completion_tokens)),
            });
        }
        for choice in chunk.choices.into_iter().flatten() {
            if let Some(delta) = choice.delta
                && self.apply(delta, out) == Flow::Stop
            {
                return Flow::Stop;
            }
            if choice.finish_reason.is_some() {
                self.flush(out);
                self.finished = true;
            }
        }
        Flow::Continue
    }

    fn end(&mut self, out: &mut Events) {
        if self.finished {
            self.complete(out);
        } else {
            out.push_back(Err(ModelError::stream(
                "stream closed before the chat completion finished",
            )));
        }
    }
}

impl ChatDecoder {
    /// [`Flow::Stop`] after a bound was broken (the error is in `out`).
    fn apply(&mut self, delta: Delta, out: &mut Events) -> Flow {
        let reasoning = delta.reasoning_content.or(delta.reasoning);
        if let Some(FlexText(text)) = reasoning.filter(|t| !t.0.is_empty()) {
            let item_id = Building::append(&mut self.reasoning, TextKind::Reasoning, &text, out);
            out.push_back(Ok(ResponseEvent::ReasoningContentDelta {
                item_id,
                content_index: 0,
                delta: text,
            }));
        }
        let content = delta.content.filter(|t| !t.0.is_empty());
        if content.is_some() || delta.tool_calls.as_ref().is_some_and(|c| !c.is_empty()) {
            // The answer has begun: the reasoning before it is complete.
            self.finish_reasoning(out);
        }
        if let Some(FlexText(text)) = content {
            let item_id = Building::append(&mut self.message, TextKind::Message, &text, out);
            out.push_back(Ok(ResponseEvent::OutputTextDelta {
                item_id,
                delta: text,
            }));
        }
        for call in delta.tool_calls.into_iter().flatten() {
            if !self.add_call_fragment(call) {
                out.push_back(Err(ModelError::malformed(format!(
                    "more than {MAX_CHAT_TOOL_CALLS} tool calls in one response"
                ))));
                return Flow::Stop;
            }
        }
        Flow::Continue
    }

    /// Slot rules: a known `id` picks its slot; else `index` picks the latest slot with that
    /// index, unless that slot already has a different id (servers that put every call at
    /// index 0); a fragment with neither continues the last slot. False when the fragment
    /// would open a slot past [`MAX_CHAT_TOOL_CALLS`].
    fn add_call_fragment(&mut self, call: ToolCallDelta) -> bool {
        let by_id = call
            .id
            .as_deref()
            .and_then(|id| self.calls.iter().position(|c| c.id.as_deref() == Some(id)));
        let by_index = || {
            let index = call.index?;
            let at = self.calls.iter().rposition(|c| c.index == Some(index))?;
            let other_id = matches!((&self.calls[at].id, &call.id), (Some(a), Some(b)) if a != b);
            (!other_id).then_some(at)
        };
        let slot = match by_id.or_else(by_index) {
            Some(at) => at,
            None if call.index.is_none() && call.id.is_none() && !self.calls.is_empty() => {
                self.calls.len() - 1
            }
            None if self.calls.len() >= MAX_CHAT_TOOL_CALLS => return false,
            None => {
                self.calls.push(CallSlot {
                    index: call.index,
                    id: None,
                    name: String::new(),
                    arguments: String::new(),
                });
                self.calls.len() - 1
            }
        };
        let slot = &mut self.calls[slot];
        if slot.id.is_none() {
            slot.id = call.id.filter(|id| !id.is_empty());
        }
        if let Some(function) = call.function {
            if slot.name.is_empty()
                && let Some(name) = function.name
            {
                slot.name = name;
            }
            if let Some(FlexArguments(arguments)) = function.arguments {
                slot.arguments.push_str(&arguments);
            }
        }
        true
    }

    /// Emit the reasoning item built so far as done.
    fn finish_reasoning(&mut self, out: &mut Events) {
        if let Some(reasoning) = self.reasoning.take() {
            out.push_back(Ok(reasoning.done()));
        }
    }

    /// Emit every item built so far as done: reasoning, message, then tool calls.
    fn flush(&mut self, out: &mut Events) {
        self.finish_reasoning(out);
        if let Some(message) = self.message.take() {
            out.push_back(Ok(message.done()));
        }
        for (position, call) in self.calls.drain(..).enumerate() {
            if call.name.is_empty() {
                tracing::debug!(?call, "dropping a chat tool call without a name");
                continue;
            }
            let call_id = call
                .id
                .unwrap_or_else(|| format!("tool-call-{}", call.index.unwrap_or(position as i64)));
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_string()
            } else {
                call.arguments
            };
            out.push_back(Ok(ResponseEvent::OutputItemDone(
                ResponseItem::FunctionCall {
                    id: None,
                    name: call.name,
                    namespace: None,
                    arguments,
                    call_id,
                },
            )));
        }
    }

    fn complete(&mut self, out: &mut Events) {
        self.flush(out);
        out.push_back(Ok(ResponseEvent::Completed {
            response_id: std::mem::take(&mut self.response_id),
            token_usage: self.usage,
            end_turn: None,
        }));
    }
}

/// Text that may arrive as a string, an array of parts (`{"text":…}` or strings), or an
/// object with `text` or `content`.
struct FlexText(String);

impl<'de> Deserialize<'de> for FlexText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FlexTextVisitor)
    }
}

struct FlexTextVisitor;

impl<'de> Visitor<'de> for FlexTextVisitor {
    type Value = FlexText;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, an array of text parts, or an object with text")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<FlexText, E> {
        Ok(FlexText(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<FlexText, E> {
        Ok(FlexText(text))
    }

    fn visit_unit<E: de::Error>(self) -> Result<FlexText, E> {
        Ok(FlexText(String::new()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FlexText, A::Error> {
        let mut text = String::new();
        while let Some(FlexText(part)) = seq.next_element()? {
            text.push_str(&part);
        }
        Ok(FlexText(text))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FlexText, A::Error> {
        let mut text: Option<String> = None;
        while let Some(key) = map.next_key::<String>()? {
            if (key == "text" || key == "content") && text.is_none() {
                text = map.next_value::<Option<FlexText>>()?.map(|t| t.0);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(FlexText(text.unwrap_or_default()))
    }
}

/// Tool-call arguments: a JSON string, or (from some servers) a JSON value, re-encoded.
struct FlexArguments(String);

impl<'de> Deserialize<'de> for FlexArguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(text) => FlexArguments(text),
            serde_json::Value::Null => FlexArguments(String::new()),
            value => FlexArguments(value.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_support::{done_items, function_call as call};
    use serde_json::{Value, json};

    fn decode(chunks: &[Value], done: bool) -> Vec<Result<ResponseEvent, ModelError>> {
        let mut decoder = ChatDecoder::default();
        let mut out = Events::new();
        for chunk in chunks {
            assert_eq!(
                decoder.data(chunk.to_string().as_bytes(), &mut out),
                Flow::Continue
            );
        }
        if done {
            assert_eq!(decoder.data(b"[DONE]", &mut out), Flow::Stop);
        } else {
            decoder.end(&mut out);
        }
        out.into_iter().collect()
    }

    fn delta(delta: Value) -> Value {
        json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
    }

    fn finish(reason: &str) -> Value {
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    }

    #[test]
    fn tool_calls_past_the_bound_end_the_stream_unretried() {
        let mut decoder = ChatDecoder::default();
        let mut out = Events::new();
        // Distinct indices, each a slot of its own; a huge index allocates nothing.
        for index in 0..MAX_CHAT_TOOL_CALLS as i64 {
            let chunk = delta(json!({"tool_calls": [{"index": index * 7_000_000,
                "function": {"name": "f"}}]}));
            assert_eq!(
                decoder.data(chunk.to_string().as_bytes(), &mut out),
                Flow::Continue
            );
        }
        let chunk = delta(json!({"tool_calls": [{"index": -1, "function": {"name": "f"}}]}));
        assert_eq!(
            decoder.data(chunk.to_string().as_bytes(), &mut out),
            Flow::Stop
        );
        let Some(Err(err)) = out.back() else {
            panic!("expected an error last, got {out:?}");
        };
        assert!(matches!(err, ModelError::Malformed { .. }) && !err.is_retryable());
    }

    #[test]
    fn every_call_at_index_zero_and_missing_ids() {
        let events = decode(
            &[
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{\"x\""}}]}),
                ),
                delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]})),
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "g", "arguments": {"y": 2}}}]}),
                ),
                delta(json!({"tool_calls": [{"function": {"name": "h"}}]})),
                finish("tool_calls"),
            ],
            false,
        );
        assert_eq!(
            done_items(&events),
            vec![call("a", "f", "{\"x\":1}"), call("b", "g", "{\"y\":2}")]
        );
        assert!(matches!(
            events.last(),
            Some(Ok(ResponseEvent::Completed { .. }))
        ));
        let events = decode(
            &[
                delta(json!({"tool_calls": [{"index": 3, "function": {"name": "f"}}]})),
                finish("tool_calls"),
            ],
            true,
        );
        assert_eq!(done_items(&events), vec![call("tool-call-3", "f", "{}")]);
    }

    #[test]
    fn content_variants_reasoning_fields_and_errors() {
        let events = decode(
            &[
                delta(json!({"role": "assistant", "content": ""})),
                delta(json!({"reasoning": {"text": "r1"}})),
                delta(json!({"reasoning_content": "r2"})),
                delta(json!({"content": [{"type": "text", "text": "a"}, "b"]})),
                finish("stop"),
            ],
            true,
        );
        let items = done_items(&events);
        assert_eq!(items.len(), 2);
        assert!(
            matches!(&items[0], ResponseItem::Reasoning { content: Some(c), .. }
            if c == &vec![ReasoningContent::ReasoningText { text: "r1r2".into() }])
        );
        assert_eq!(items[1].message_text().as_deref(), Some("ab"));
        // No finish reason and no [DONE]: the stream was cut short.
        let events = decode(&[delta(json!({"content": "x"}))], false);
        assert!(matches!(
            events.last(),
            Some(Err(ModelError::Stream { .. }))
        ));
        let mut decoder = ChatDecoder::default();
        let mut out = Events::new();
        let error = json!({"error": {"message": "maximum context length is 4096", "code": null}});
        assert_eq!(
            decoder.data(error.to_string().as_bytes(), &mut out),
            Flow::Stop
        );
        assert!(matches!(
            out[0],
            Err(ModelError::ContextWindowExceeded { .. })
        ));
    }
}

#[cfg(test)]
mod proptests;
