//! Rendering a [`Reply`] into pre-built SSE bytes for the Responses API or Chat Completions.

use serde_json::{Value, json};

use crate::reply::{After, Part, Reasoning, Reply, Terminal, Usage, split_even};
use crate::script::{Script, Step, WireApi};

pub(crate) fn render(api: WireApi, id: &str, reply: Reply) -> Script {
    let mut out = Writer::new(api, reply.event_delay);
    match api {
        WireApi::Responses => responses(&mut out, id, &reply),
        WireApi::Chat => chat(&mut out, id, &reply),
    }
    match reply.after {
        After::End => {}
        After::Stall => out.step(Step::Stall),
        After::Cut => out.step(Step::Cut),
    }
    let mut script = Script::from_steps(Some(api), out.finish());
    script.headers = reply.headers;
    script
}

/// Accumulates frames into steps.
struct Writer {
    api: WireApi,
    event_delay: Option<std::time::Duration>,
    steps: Vec<Step>,
    buf: Vec<u8>,
}

impl Writer {
    fn new(api: WireApi, event_delay: Option<std::time::Duration>) -> Writer {
        Writer {
            api,
            event_delay,
            steps: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// One SSE frame: `event: <type>\ndata: <json>\n\n` for Responses, `data: <json>\n\n` for
    /// Chat.
    fn frame(&mut self, value: &Value) {
        if let Some(delay) = self.event_delay {
            self.step(Step::Delay(delay));
        }
        if self.api == WireApi::Responses
            && let Some(kind) = value.get("type").and_then(Value::as_str)
        {
            self.buf.extend_from_slice(b"event: ");
            self.buf.extend_from_slice(kind.as_bytes());
            self.buf.push(b'\n');
        }
        self.buf.extend_from_slice(b"data: ");
        // Writing a `Value` into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.buf, value);
        self.buf.extend_from_slice(b"\n\n");
    }

    fn raw(&mut self, text: &str) {
        self.buf.extend_from_slice(text.as_bytes());
    }

    fn step(&mut self, step: Step) {
        if !self.buf.is_empty() {
            let bytes = std::mem::take(&mut self.buf);
            self.steps.push(Step::Bytes(bytes.into()));
        }
        self.steps.push(step);
    }

    fn finish(mut self) -> Vec<Step> {
        if !self.buf.is_empty() {
            let bytes = std::mem::take(&mut self.buf);
            self.steps.push(Step::Bytes(bytes.into()));
        }
        self.steps
    }
}

// ---------------------------------------------------------------------------------------------
// Responses API

fn responses(out: &mut Writer, id: &str, reply: &Reply) {
    let suffix = id.strip_prefix("resp_").unwrap_or(id);
    out.frame(&json!({
        "type": "response.created",
        "response": { "id": id, "object": "response", "status": "in_progress", "output": [] }
    }));
    let mut index = 0usize;
    for part in &reply.parts {
        match part {
            Part::Message {
                deltas,
                phase,
                end_turn,
            } => {
                message(
                    out,
                    &format!("msg_{suffix}_{index}"),
                    index,
                    deltas,
                    phase,
                    *end_turn,
                );
                index += 1;
            }
            Part::Reasoning(reasoning) => {
                reasoning_item(out, &format!("rs_{suffix}_{index}"), index, reasoning);
                index += 1;
            }
            Part::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let item_id = format!("fc_{suffix}_{index}");
                let delta = json!({
                    "type": "response.function_call_arguments.delta", "item_id": item_id,
                    "output_index": index, "delta": arguments
                });
                let item = json!({ "type": "function_call", "id": item_id, "call_id": call_id,
                                   "name": name });
                tool_call_item(out, index, item, ("arguments", arguments), Some(delta));
                index += 1;
            }
            Part::CustomToolCall {
                call_id,
                name,
                input,
            } => {
                let item = json!({ "type": "custom_tool_call", "id": format!("ctc_{suffix}_{index}"),
                                   "call_id": call_id, "name": name });
                tool_call_item(out, index, item, ("input", input), None);
                index += 1;
            }
            Part::Raw(value) => out.frame(value),
            Part::Delay(delay) => out.step(Step::Delay(*delay)),
            Part::Gate(gate) => out.step(Step::Gate(gate.clone())),
        }
    }
    match &reply.terminal {
        Terminal::Completed => out.frame(&json!({
            "type": "response.completed",
            "response": { "id": id, "object": "response", "status": "completed",
                          "usage": reply.usage.map(responses_usage) }
        })),
        Terminal::Failed { code, message } => out.frame(&json!({
            "type": "response.failed",
            "response": { "id": id, "object": "response", "status": "failed",
                          "error": { "code": code, "message": message } }
        })),
        Terminal::Incomplete { reason } => out.frame(&json!({
            "type": "response.incomplete",
            "response": { "id": id, "object": "response", "status": "incomplete",
                          "incomplete_details": { "reason": reason } }
        })),
        Terminal::ErrorEvent { code, message } => out.frame(&json!({
            "type": "error", "code": code, "message": message, "param": null
        })),
        Terminal::Nothing => {}
    }
}

/// A tool-call `item`: its `added` event with `field` (the arguments or the input) empty, then
/// `between` (the arguments' delta), then its `done` event with `field` = `value`.
fn tool_call_item(
    out: &mut Writer,
    index: usize,
    item: Value,
    (field, value): (&str, &str),
    between: Option<Value>,
) {
    let with = |text: &str, status: &str| {
        let mut item = item.clone();
        item[field] = json!(text);
        item["status"] = json!(status);
        item
    };
    out.frame(&item_event("added", index, with("", "in_progress")));
    if let Some(event) = between {
        out.frame(&event);
    }
    out.frame(&item_event("done", index, with(value, "completed")));
}

fn item_event(kind: &str, index: usize, item: Value) -> Value {
    json!({ "type": format!("response.output_item.{kind}"), "output_index": index, "item": item })
}

fn message(
    out: &mut Writer,
    item_id: &str,
    index: usize,
    deltas: &[String],
    phase: &Option<String>,
    end_turn: Option<bool>,
) {
    out.frame(&item_event(
        "added",
        index,
        json!({ "type": "message", "id": item_id, "role": "assistant",
                "status": "in_progress", "content": [] }),
    ));
    for delta in deltas {
        out.frame(&json!({
            "type": "response.output_text.delta", "item_id": item_id,
            "output_index": index, "content_index": 0, "delta": delta
        }));
    }
    let mut item = json!({
        "type": "message", "id": item_id, "role": "assistant", "status": "completed",
        "content": [{ "type": "output_text", "text": deltas.concat(), "annotations": [] }]
    });
    if let Some(phase) = phase {
        item["phase"] = json!(phase);
    }
    if let Some(end_turn) = end_turn {
        item["end_turn"] = json!(end_turn);
    }
    out.frame(&item_event("done", index, item));
}

fn reasoning_item(out: &mut Writer, item_id: &str, index: usize, reasoning: &Reasoning) {
    out.frame(&item_event(
        "added",
        index,
        json!({ "type": "reasoning", "id": item_id, "summary": [] }),
    ));
    for (summary_index, deltas) in reasoning.summary.iter().enumerate() {
        out.frame(&json!({
            "type": "response.reasoning_summary_part.added", "item_id": item_id,
            "output_index": index, "summary_index": summary_index,
            "part": { "type": "summary_text", "text": "" }
        }));
        for delta in deltas {
            out.frame(&json!({
                "type": "response.reasoning_summary_text.delta", "item_id": item_id,
                "output_index": index, "summary_index": summary_index, "delta": delta
            }));
        }
    }
    for delta in &reasoning.raw {
        out.frame(&json!({
            "type": "response.reasoning_text.delta", "item_id": item_id,
            "output_index": index, "content_index": 0, "delta": delta
        }));
    }
    let summary: Vec<Value> = reasoning
        .summary
        .iter()
        .map(|deltas| json!({ "type": "summary_text", "text": deltas.concat() }))
        .collect();
    let mut item = json!({
        "type": "reasoning", "id": item_id, "summary": summary,
        "encrypted_content": reasoning.encrypted_content
    });
    if !reasoning.raw.is_empty() {
        item["content"] = json!([{ "type": "reasoning_text", "text": reasoning.raw.concat() }]);
    }
    out.frame(&item_event("done", index, item));
}

fn responses_usage(usage: Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "input_tokens_details": { "cached_tokens": usage.cached_input_tokens },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": { "reasoning_tokens": usage.reasoning_output_tokens },
        "total_tokens": usage.total_tokens
    })
}

// ---------------------------------------------------------------------------------------------
// Chat Completions

fn chat(out: &mut Writer, id: &str, reply: &Reply) {
    let id = format!("chatcmpl-{}", id.strip_prefix("resp_").unwrap_or(id));
    let chunk = |delta: Value, finish_reason: Option<&str>| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }]
        })
    };
    // Like OpenAI: the first chunk carries the role and an empty content string.
    out.frame(&chunk(json!({ "role": "assistant", "content": "" }), None));
    let mut tool_index = 0usize;
    let mut tool_call = |out: &mut Writer, call_id: &str, name: &str, arguments: &str| {
        out.frame(&chunk(
            json!({ "tool_calls": [{ "index": tool_index, "id": call_id, "type": "function",
                                      "function": { "name": name, "arguments": "" } }] }),
            None,
        ));
        for fragment in split_even(arguments, reply.argument_fragments) {
            out.frame(&chunk(
                json!({ "tool_calls": [{ "index": tool_index,
                                          "function": { "arguments": fragment } }] }),
                None,
            ));
        }
        tool_index += 1;
    };
    for part in &reply.parts {
        match part {
            Part::Message { deltas, .. } => {
                for delta in deltas {
                    out.frame(&chunk(json!({ "content": delta }), None));
                }
            }
            Part::Reasoning(reasoning) => {
                for delta in &reasoning.raw {
                    out.frame(&chunk(json!({ "reasoning_content": delta }), None));
                }
            }
            Part::FunctionCall {
                call_id,
                name,
                arguments,
            } => tool_call(out, call_id, name, arguments),
            Part::CustomToolCall {
                call_id,
                name,
                input,
            } => {
                let arguments = json!({ "input": input }).to_string();
                tool_call(out, call_id, name, &arguments);
            }
            Part::Raw(value) => out.frame(value),
            Part::Delay(delay) => out.step(Step::Delay(*delay)),
            Part::Gate(gate) => out.step(Step::Gate(gate.clone())),
        }
    }
    let has_tool_calls = reply.parts.iter().any(|part| {
        matches!(
            part,
            Part::FunctionCall { .. } | Part::CustomToolCall { .. }
        )
    });
    let finish = |out: &mut Writer, default_reason: &str| {
        let reason = reply.finish_reason.as_deref().unwrap_or(default_reason);
        out.frame(&chunk(json!({}), Some(reason)));
        if let Some(usage) = reply.usage {
            out.frame(&json!({
                "id": id, "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
                "choices": [],
                "usage": {
                    "prompt_tokens": usage.input_tokens,
                    "completion_tokens": usage.output_tokens,
                    "total_tokens": usage.total_tokens,
                    "prompt_tokens_details": { "cached_tokens": usage.cached_input_tokens },
                    "completion_tokens_details": { "reasoning_tokens": usage.reasoning_output_tokens }
                }
            }));
        }
        out.raw("data: [DONE]\n\n");
    };
    match &reply.terminal {
        Terminal::Completed => finish(out, if has_tool_calls { "tool_calls" } else { "stop" }),
        Terminal::Incomplete { .. } => finish(out, "length"),
        Terminal::Failed { code, message } | Terminal::ErrorEvent { code, message } => {
            out.frame(&json!({ "error": { "message": message, "type": code, "code": code } }));
        }
        Terminal::Nothing => {}
    }
}
