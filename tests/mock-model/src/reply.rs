//! [`Reply`]: a wire-agnostic description of one model response (its output items, usage and
//! how the stream ends), rendered into a [`Script`] for either wire API.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::render;
use crate::script::{Gate, Script, WireApi};

/// Token usage reported at the end of a reply (Responses `usage` / Chat usage chunk).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// `input_tokens` / `prompt_tokens`.
    pub input_tokens: i64,
    /// `input_tokens_details.cached_tokens` / `prompt_tokens_details.cached_tokens`.
    pub cached_input_tokens: i64,
    /// `output_tokens` / `completion_tokens`.
    pub output_tokens: i64,
    /// `output_tokens_details.reasoning_tokens` / `completion_tokens_details.reasoning_tokens`.
    pub reasoning_output_tokens: i64,
    /// `total_tokens`.
    pub total_tokens: i64,
}

impl Usage {
    /// `input` + `output` tokens, no cached or reasoning tokens.
    pub fn new(input_tokens: i64, output_tokens: i64) -> Usage {
        Usage {
            input_tokens,
            output_tokens,
            total_tokens: input_tokens + output_tokens,
            ..Usage::default()
        }
    }
}

/// A reasoning output item: summary parts (each streamed as deltas), raw reasoning text
/// (streamed as `reasoning_text` deltas) and the opaque `encrypted_content`.
#[derive(Debug, Clone)]
pub struct Reasoning {
    pub(crate) summary: Vec<Vec<String>>,
    pub(crate) raw: Vec<String>,
    pub(crate) encrypted_content: Option<String>,
}

impl Default for Reasoning {
    fn default() -> Self {
        Reasoning::new()
    }
}

impl Reasoning {
    /// An empty reasoning item with a fake `encrypted_content`.
    pub fn new() -> Reasoning {
        Reasoning {
            summary: Vec::new(),
            raw: Vec::new(),
            encrypted_content: Some("gAAAAB-mock-encrypted-reasoning".to_string()),
        }
    }

    /// Add a summary part streamed as one delta.
    pub fn summary(self, text: impl Into<String>) -> Reasoning {
        self.summary_deltas([text.into()])
    }

    /// Add a summary part streamed as these deltas.
    pub fn summary_deltas<I, S>(mut self, deltas: I) -> Reasoning
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.summary
            .push(deltas.into_iter().map(Into::into).collect());
        self
    }

    /// Raw reasoning content (one `reasoning_text` part) streamed as these deltas.
    pub fn raw_deltas<I, S>(mut self, deltas: I) -> Reasoning
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.raw.extend(deltas.into_iter().map(Into::into));
        self
    }

    /// Raw reasoning content streamed as one delta.
    pub fn raw(self, text: impl Into<String>) -> Reasoning {
        self.raw_deltas([text.into()])
    }

    /// Set (or with `None`, drop) `encrypted_content`.
    pub fn encrypted_content(mut self, value: Option<&str>) -> Reasoning {
        self.encrypted_content = value.map(str::to_string);
        self
    }
}

/// One element of a reply, in stream order.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    Message {
        deltas: Vec<String>,
        phase: Option<String>,
        end_turn: Option<bool>,
    },
    Reasoning(Reasoning),
    FunctionCall {
        call_id: String,
        name: String,
        arguments: String,
    },
    CustomToolCall {
        call_id: String,
        name: String,
        input: String,
    },
    /// A raw event / chunk JSON, sent verbatim.
    Raw(serde_json::Value),
    Delay(Duration),
    Gate(Gate),
}

/// The terminal event of a reply.
#[derive(Debug, Clone)]
pub(crate) enum Terminal {
    /// `response.completed` / finish chunk + usage chunk + `[DONE]`.
    Completed,
    /// `response.failed` with `error.{code,message}` / a chat `{"error":…}` chunk.
    Failed { code: String, message: String },
    /// `response.incomplete` / chat `finish_reason: "length"`.
    Incomplete { reason: String },
    /// A top-level `{"type":"error",…}` event / a chat `{"error":…}` chunk.
    ErrorEvent { code: String, message: String },
    /// No terminal event at all.
    Nothing,
}

/// What happens to the connection after the last event.
#[derive(Debug, Clone, Copy)]
pub(crate) enum After {
    /// End the body cleanly.
    End,
    /// Keep the connection open, sending nothing more.
    Stall,
    /// Abort the connection.
    Cut,
}

/// A wire-agnostic model response, rendered with [`Reply::responses`] or [`Reply::chat`].
///
/// ```no_run
/// # use weft_mock_model::{MockModel, Reasoning, Reply, Usage};
/// # fn example(mock: &MockModel) {
/// mock.push(
///     Reply::new()
///         .reasoning(Reasoning::new().summary("**Planning**").raw("let me think"))
///         .text_chunks("Hello there, world", 3)
///         .function_call("call_1", "shell", r#"{"command":["ls"]}"#)
///         .usage(Usage::new(100, 20))
///         .responses(),
/// );
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Reply {
    pub(crate) id: Option<String>,
    pub(crate) parts: Vec<Part>,
    pub(crate) usage: Option<Usage>,
    pub(crate) terminal: Terminal,
    pub(crate) after: After,
    pub(crate) event_delay: Option<Duration>,
    pub(crate) finish_reason: Option<String>,
    pub(crate) argument_fragments: usize,
    pub(crate) headers: Vec<(String, String)>,
}

impl Default for Reply {
    fn default() -> Self {
        Reply::new()
    }
}

static NEXT_RESPONSE: AtomicU64 = AtomicU64::new(1);

impl Reply {
    /// An empty reply that completes with zeroed usage.
    pub fn new() -> Reply {
        Reply {
            id: None,
            parts: Vec::new(),
            usage: Some(Usage::default()),
            terminal: Terminal::Completed,
            after: After::End,
            event_delay: None,
            finish_reason: None,
            argument_fragments: 3,
            headers: Vec::new(),
        }
    }

    /// Set the response id (default `resp_<n>`, unique in the process). Item ids derive from
    /// it: `msg_<n>_<output index>`, `rs_…`, `fc_…`, `ctc_…`.
    pub fn id(mut self, id: impl Into<String>) -> Reply {
        self.id = Some(id.into());
        self
    }

    /// An assistant message streamed as one delta.
    pub fn text(self, text: impl Into<String>) -> Reply {
        self.text_deltas([text.into()])
    }

    /// An assistant message streamed as these deltas (its text is their concatenation).
    pub fn text_deltas<I, S>(mut self, deltas: I) -> Reply
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.parts.push(Part::Message {
            deltas: deltas.into_iter().map(Into::into).collect(),
            phase: None,
            end_turn: None,
        });
        self
    }

    /// An assistant message with `text` split into `n` deltas of about equal length (fewer if
    /// the text has fewer than `n` characters).
    pub fn text_chunks(self, text: &str, n: usize) -> Reply {
        self.text_deltas(split_even(text, n))
    }

    /// Set `phase` (`commentary` / `final_answer`) on the last message (Responses only).
    ///
    /// # Panics
    /// If no message was added before.
    pub fn phase(mut self, value: &str) -> Reply {
        match self.last_message() {
            Some((phase, _)) => *phase = Some(value.to_string()),
            None => panic!("Reply::phase needs a message before it"),
        }
        self
    }

    /// Set `end_turn` on the last message (Responses only; Chat has no such field).
    ///
    /// # Panics
    /// If no message was added before.
    pub fn end_turn(mut self, value: bool) -> Reply {
        match self.last_message() {
            Some((_, end_turn)) => *end_turn = Some(value),
            None => panic!("Reply::end_turn needs a message before it"),
        }
        self
    }

    /// A reasoning item.
    pub fn reasoning(mut self, reasoning: Reasoning) -> Reply {
        self.parts.push(Part::Reasoning(reasoning));
        self
    }

    /// A function tool call; `arguments` is the JSON-encoded argument string.
    pub fn function_call(
        mut self,
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Reply {
        self.parts.push(Part::FunctionCall {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
        });
        self
    }

    /// A custom (freeform) tool call with raw `input`. On Chat it is rendered as a function
    /// call whose arguments are `{"input": input}`.
    pub fn custom_tool_call(
        mut self,
        call_id: impl Into<String>,
        name: impl Into<String>,
        input: impl Into<String>,
    ) -> Reply {
        self.parts.push(Part::CustomToolCall {
            call_id: call_id.into(),
            name: name.into(),
            input: input.into(),
        });
        self
    }

    /// A raw event (Responses) or chunk (Chat) JSON, sent verbatim at this point.
    pub fn raw_event(mut self, event: serde_json::Value) -> Reply {
        self.parts.push(Part::Raw(event));
        self
    }

    /// Pause this long at this point of the stream.
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.parts.push(Part::Delay(delay));
        self
    }

    /// Pause this long before every event of the stream.
    pub fn event_delay(mut self, delay: Duration) -> Reply {
        self.event_delay = Some(delay);
        self
    }

    /// Hold the stream at this point until `gate` is released.
    pub fn gate(mut self, gate: &Gate) -> Reply {
        self.parts.push(Part::Gate(gate.clone()));
        self
    }

    /// Usage reported at the end (default: all zero).
    pub fn usage(mut self, usage: Usage) -> Reply {
        self.usage = Some(usage);
        self
    }

    /// Report no usage (`"usage": null`; no usage chunk on Chat).
    pub fn no_usage(mut self) -> Reply {
        self.usage = None;
        self
    }

    /// End with `response.failed` carrying `error.{code,message}` instead of completing
    /// (Chat: a `{"error":…}` chunk).
    pub fn failed(mut self, code: &str, message: &str) -> Reply {
        self.terminal = Terminal::Failed {
            code: code.to_string(),
            message: message.to_string(),
        };
        self
    }

    /// End with `response.incomplete` and this reason (Chat: `finish_reason: "length"`).
    pub fn incomplete(mut self, reason: &str) -> Reply {
        self.terminal = Terminal::Incomplete {
            reason: reason.to_string(),
        };
        self
    }

    /// End with a top-level `{"type":"error",…}` event (Chat: a `{"error":…}` chunk).
    pub fn error_event(mut self, code: &str, message: &str) -> Reply {
        self.terminal = Terminal::ErrorEvent {
            code: code.to_string(),
            message: message.to_string(),
        };
        self
    }

    /// Stop sending after the parts so far, without a terminal event, and keep the connection
    /// open until the client closes it (an idle model).
    pub fn stall(mut self) -> Reply {
        self.terminal = Terminal::Nothing;
        self.after = After::Stall;
        self
    }

    /// Abort the connection after the parts so far, before any terminal event.
    pub fn cut(mut self) -> Reply {
        self.terminal = Terminal::Nothing;
        self.after = After::Cut;
        self
    }

    /// End the body cleanly after the parts so far, without a terminal event.
    pub fn close_early(mut self) -> Reply {
        self.terminal = Terminal::Nothing;
        self.after = After::End;
        self
    }

    /// Keep the connection open after the terminal event (to check that the client stops at
    /// `response.failed` and friends instead of waiting for the end of the body).
    pub fn keep_open(mut self) -> Reply {
        self.after = After::Stall;
        self
    }

    /// Chat only: the `finish_reason` of the last chunk (default `tool_calls` when the reply
    /// has tool calls, else `stop`). Use `"stop"` with tool calls to mimic servers that lie.
    pub fn finish_reason(mut self, reason: &str) -> Reply {
        self.finish_reason = Some(reason.to_string());
        self
    }

    /// Chat only: how many fragments each tool call's arguments are split into (default 3).
    pub fn argument_fragments(mut self, n: usize) -> Reply {
        self.argument_fragments = n.max(1);
        self
    }

    /// Add a response header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Render as a Responses API SSE stream (`POST …/responses`).
    pub fn responses(self) -> Script {
        let id = self.response_id();
        render::render(WireApi::Responses, &id, self)
    }

    /// Render as a Chat Completions SSE stream (`POST …/chat/completions`).
    pub fn chat(self) -> Script {
        let id = self.response_id();
        render::render(WireApi::Chat, &id, self)
    }

    /// Render for `api`.
    pub fn render(self, api: WireApi) -> Script {
        match api {
            WireApi::Responses => self.responses(),
            WireApi::Chat => self.chat(),
        }
    }

    fn response_id(&self) -> String {
        match &self.id {
            Some(id) => id.clone(),
            None => format!("resp_{}", NEXT_RESPONSE.fetch_add(1, Ordering::Relaxed)),
        }
    }

    fn last_message(&mut self) -> Option<(&mut Option<String>, &mut Option<bool>)> {
        self.parts.iter_mut().rev().find_map(|part| match part {
            Part::Message {
                phase, end_turn, ..
            } => Some((phase, end_turn)),
            _ => None,
        })
    }
}

/// Split `text` into `n` pieces of about equal character count (fewer if it is shorter; one
/// empty piece for empty text). Splits only at character boundaries.
pub fn split_even(text: &str, n: usize) -> Vec<String> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let chars = bounds.len() - 1;
    let n = n.clamp(1, chars.max(1));
    (0..n)
        .map(|i| text[bounds[i * chars / n]..bounds[(i + 1) * chars / n]].to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::split_even;

    #[test]
    fn split_even_keeps_text_and_char_boundaries() {
        assert_eq!(split_even("abcdef", 3), vec!["ab", "cd", "ef"]);
        assert_eq!(split_even("ab", 5), vec!["a", "b"]);
        assert_eq!(split_even("", 4), vec![""]);
        let text = "héllo wörld ✓";
        let parts = split_even(text, 4);
        assert_eq!(parts.len(), 4);
        assert_eq!(parts.concat(), text);
    }
}
