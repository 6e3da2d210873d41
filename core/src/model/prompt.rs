//! [`Prompt`]: everything one sampling request sends, and the Responses API request body.

use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::item::{ReasoningContent, ResponseItem};

/// One sampling request, independent of the wire API. Build it with `..Prompt::default()` so
/// new optional fields do not break callers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    /// Model slug.
    pub model: String,
    /// Base instructions (Responses `instructions`; Chat: the first system message). Shared:
    /// every turn of a thread without its own has Weft's one copy.
    pub instructions: std::sync::Arc<str>,
    /// The full (normalised) history.
    pub input: Vec<ResponseItem>,
    /// Tools in Responses format (`{"type":"function",…}`, `{"type":"custom",…}`, …). Chat
    /// gets the function tools only, converted. Shared: every sampling step of a turn starts
    /// from a clone of the turn's prompt, and a deep copy of the specs for each was a tenth of
    /// the heap under many concurrent turns (bench/README.md, "Issue 29").
    pub tools: std::sync::Arc<Vec<Value>>,
    /// Whether the model may call several tools at once.
    pub parallel_tool_calls: bool,
    /// `reasoning.effort` (`none`, `minimal`, `low`, `medium`, `high`, `xhigh`), sent as is.
    /// When both reasoning fields are `None` the model is treated as non-reasoning:
    /// `reasoning` is sent as `null` and no encrypted reasoning is requested.
    pub reasoning_effort: Option<String>,
    /// `reasoning.summary` (`auto`, `concise`, `detailed`); `none` leaves it out.
    pub reasoning_summary: Option<String>,
    /// Cache routing key: the thread id. Also sent as the `session_id` and
    /// `x-client-request-id` headers (Codex sends the thread id in all three).
    pub prompt_cache_key: Option<String>,
    /// `turn/start.outputSchema`: a JSON Schema the final answer must follow (Responses
    /// `text.format`, Chat `response_format`), for one turn.
    pub output_schema: Option<Value>,
    /// Extra request headers (a sub-agent's `x-openai-subagent` and turn metadata,
    /// docs/agents.md §7).
    pub headers: Vec<(String, String)>,
}

/// The name the output schema is sent under (the reference's).
pub(crate) const OUTPUT_SCHEMA_NAME: &str = "codex_output_schema";

impl Prompt {
    /// The `reasoning` object, or `None` (JSON `null`) for a non-reasoning model.
    fn reasoning(&self) -> Option<Reasoning<'_>> {
        if self.reasoning_effort.is_none() && self.reasoning_summary.is_none() {
            return None;
        }
        Some(Reasoning {
            effort: self.reasoning_effort.as_deref(),
            summary: self.reasoning_summary.as_deref().filter(|s| *s != "none"),
        })
    }
}

/// The `reasoning` object of a Responses request.
#[derive(Serialize)]
struct Reasoning<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'a str>,
}

/// The Responses API request body, field order as Codex sends it.
#[derive(Serialize)]
struct ResponsesRequest<'a> {
    model: &'a str,
    instructions: &'a str,
    input: InputItems<'a>,
    tools: &'a [Value],
    tool_choice: &'static str,
    parallel_tool_calls: bool,
    reasoning: Option<Reasoning<'a>>,
    store: bool,
    stream: bool,
    include: &'static [&'static str],
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
}

/// Serialize the Responses API request body for `prompt`.
#[cfg(test)]
pub(crate) fn responses_body(prompt: &Prompt) -> Result<Vec<u8>, serde_json::Error> {
    responses_body_limited(prompt, None)
}

/// [`responses_body`] with `max_output_tokens` (the configured `model_max_output_tokens`).
pub(crate) fn responses_body_limited(
    prompt: &Prompt,
    max_output_tokens: Option<u64>,
) -> Result<Vec<u8>, serde_json::Error> {
    let reasoning = prompt.reasoning();
    serde_json::to_vec(&ResponsesRequest {
        model: &prompt.model,
        instructions: &prompt.instructions,
        input: InputItems(&prompt.input),
        tools: &prompt.tools,
        tool_choice: "auto",
        parallel_tool_calls: prompt.parallel_tool_calls,
        include: if reasoning.is_some() {
            &["reasoning.encrypted_content"]
        } else {
            &[]
        },
        reasoning,
        store: false,
        stream: true,
        prompt_cache_key: prompt.prompt_cache_key.as_deref(),
        text: prompt.output_schema.as_ref().map(|schema| {
            serde_json::json!({"format": {
                "type": "json_schema",
                "strict": true,
                "schema": schema,
                "name": OUTPUT_SCHEMA_NAME,
            }})
        }),
        max_output_tokens,
    })
}

/// The history as sent: `Other` items are left out, and reasoning `content` is kept only when
/// it holds raw `reasoning_text` (plain `text` parts are dropped, like Codex).
struct InputItems<'a>(&'a [ResponseItem]);

impl Serialize for InputItems<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for item in self.0 {
            match item {
                ResponseItem::Other => {}
                ResponseItem::Reasoning {
                    id,
                    summary,
                    content: Some(content),
                    encrypted_content,
                } if !content
                    .iter()
                    .any(|part| matches!(part, ReasoningContent::ReasoningText { .. })) =>
                {
                    seq.serialize_element(&ResponseItem::Reasoning {
                        id: id.clone(),
                        summary: summary.clone(),
                        content: None,
                        encrypted_content: encrypted_content.clone(),
                    })?;
                }
                item => seq.serialize_element(item)?,
            }
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::item::SummaryPart;
    use serde_json::json;

    #[test]
    fn responses_body_shape() {
        let prompt = Prompt {
            model: "gpt-5.1-codex".into(),
            instructions: "be brief".into(),
            input: vec![
                ResponseItem::user_text("hi"),
                ResponseItem::Reasoning {
                    id: "rs_1".into(),
                    summary: vec![SummaryPart::SummaryText { text: "s".into() }],
                    content: Some(vec![ReasoningContent::Text { text: "t".into() }]),
                    encrypted_content: Some("e".into()),
                },
                ResponseItem::Other,
            ],
            tools: vec![json!({"type": "function", "name": "shell"})].into(),
            parallel_tool_calls: true,
            reasoning_effort: Some("xhigh".into()),
            reasoning_summary: Some("auto".into()),
            prompt_cache_key: Some("thread-1".into()),
            output_schema: None,
            headers: Vec::new(),
        };
        let body: Value = serde_json::from_slice(&responses_body(&prompt).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "gpt-5.1-codex",
                "instructions": "be brief",
                "input": [
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}],
                     "content": null, "encrypted_content": "e"}
                ],
                "tools": [{"type": "function", "name": "shell"}],
                "tool_choice": "auto",
                "parallel_tool_calls": true,
                "reasoning": {"effort": "xhigh", "summary": "auto"},
                "store": false,
                "stream": true,
                "include": ["reasoning.encrypted_content"],
                "prompt_cache_key": "thread-1"
            })
        );
        let plain = Prompt {
            model: "m".into(),
            ..Prompt::default()
        };
        let body: Value = serde_json::from_slice(&responses_body(&plain).unwrap()).unwrap();
        assert_eq!(body["reasoning"], Value::Null);
        assert_eq!(body["include"], json!([]));
        assert!(body.get("prompt_cache_key").is_none());
        let no_summary = Prompt {
            reasoning_summary: Some("none".into()),
            ..Prompt::default()
        };
        let body: Value = serde_json::from_slice(&responses_body(&no_summary).unwrap()).unwrap();
        assert_eq!(body["reasoning"], json!({}));
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    }

    #[test]
    fn an_output_schema_becomes_the_text_format() {
        let schema = json!({"type": "object", "properties": {"title": {"type": "string"}}});
        let prompt = Prompt {
            model: "m".into(),
            output_schema: Some(schema.clone()),
            ..Prompt::default()
        };
        let body: Value = serde_json::from_slice(&responses_body(&prompt).unwrap()).unwrap();
        assert_eq!(
            body["text"],
            json!({"format": {"type": "json_schema", "strict": true, "schema": schema, "name": "codex_output_schema"}})
        );
        let plain: Value =
            serde_json::from_slice(&responses_body(&Prompt::default()).unwrap()).unwrap();
        assert!(plain.get("text").is_none());
    }
}
