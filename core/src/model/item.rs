//! [`ResponseItem`]: the model-facing history item (Responses API `input`/`output` items).
//!
//! This is what is sent back to the model and written to the rollout. Item `id`s are accepted
//! when parsing but never serialized (with `store: false` the API rejects them).

use serde::{Deserialize, Serialize};
/// `phase` of an assistant message: the protocol's own enum (the Responses API and the
/// app-server protocol spell it the same way, `snake_case`).
pub use weft_protocol::MessagePhase;

/// One history item, tagged by `"type"` (snake_case).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseItem {
    /// A user, developer, system or assistant message.
    Message {
        /// Server-side id (output items only; never serialized).
        #[serde(default, skip_serializing)]
        id: Option<String>,
        /// Who speaks.
        role: Role,
        /// Text and image parts.
        content: Vec<ContentItem>,
        /// Experimental hint from the model that the turn may end (not used for loop control
        /// by Codex; see the turn loop).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end_turn: Option<bool>,
        /// `commentary` (mid-turn narration) or `final_answer`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<MessagePhase>,
    },
    /// Model reasoning: summary, optional raw content, opaque encrypted state to replay.
    Reasoning {
        /// Server-side id (never serialized).
        #[serde(default, skip_serializing)]
        id: String,
        /// Summary parts.
        #[serde(default)]
        summary: Vec<SummaryPart>,
        /// Raw reasoning (gpt-oss style servers); `null` when absent.
        #[serde(default)]
        content: Option<Vec<ReasoningContent>>,
        /// Must be replayed when `store` is false.
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    /// A call of a function tool; `arguments` is JSON encoded as a string.
    FunctionCall {
        /// Server-side id (never serialized).
        #[serde(default, skip_serializing)]
        id: Option<String>,
        /// The tool name.
        name: String,
        /// Optional tool namespace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// JSON arguments, as a string.
        arguments: String,
        /// Pairs the call with its output.
        call_id: String,
    },
    /// The answer to a [`ResponseItem::FunctionCall`] (or a legacy `local_shell_call`).
    FunctionCallOutput {
        /// The call's id.
        call_id: String,
        /// Text, or text and image parts.
        output: ToolOutput,
    },
    /// A call of a custom (freeform) tool such as `apply_patch`; `input` is raw text.
    CustomToolCall {
        /// Server-side id (never serialized).
        #[serde(default, skip_serializing)]
        id: Option<String>,
        /// Status reported by the server.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// Pairs the call with its output.
        call_id: String,
        /// The tool name.
        name: String,
        /// Raw input.
        input: String,
    },
    /// The answer to a [`ResponseItem::CustomToolCall`].
    CustomToolCallOutput {
        /// The call's id.
        call_id: String,
        /// Text, or text and image parts.
        output: ToolOutput,
    },
    /// Legacy `local_shell` tool call (answered with a `function_call_output`).
    LocalShellCall {
        /// Server-side id (never serialized).
        #[serde(default, skip_serializing)]
        id: Option<String>,
        /// Pairs the call with its output.
        #[serde(default)]
        call_id: Option<String>,
        /// `completed`, `in_progress` or `incomplete`.
        status: String,
        /// `{"type":"exec","command":[…],…}`.
        action: serde_json::Value,
    },
    /// A server-executed web search, replayed as is.
    WebSearchCall {
        /// Server-side id (never serialized).
        #[serde(default, skip_serializing)]
        id: Option<String>,
        /// Status reported by the server.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// What was searched or opened.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<serde_json::Value>,
    },
    /// The model asks for deferred tools (`tool_search`, docs/mcp.md §4); `arguments` is an
    /// object (`{query, limit?}`). With `execution: "client"` Weft runs the search.
    ToolSearchCall {
        /// Server-side id (never serialized).
        #[serde(default, skip_serializing)]
        id: Option<String>,
        /// Pairs the call with its output (absent for a server-executed search).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// Status reported by the server.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// `client` or `server`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        execution: Option<String>,
        /// `{query, limit?}`.
        #[serde(default)]
        arguments: serde_json::Value,
    },
    /// The answer to a [`ResponseItem::ToolSearchCall`]: the tools found, as tool definitions
    /// (namespaces of `defer_loading` functions) the model may call from now on.
    ToolSearchOutput {
        /// Server-side id (never serialized).
        #[serde(default, skip_serializing)]
        id: Option<String>,
        /// The call's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// `completed`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// `client` or `server`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        execution: Option<String>,
        /// The tool definitions found.
        #[serde(default)]
        tools: Vec<serde_json::Value>,
    },
    /// A remote compaction result.
    #[serde(alias = "compaction_summary")]
    Compaction {
        /// Opaque summary.
        encrypted_content: String,
    },
    /// Mail between the agents of a tree (multi-agent v2, docs/agents.md §5): who wrote it,
    /// to whom, and its text.
    AgentMessage {
        /// Server-side id (never serialized).
        #[serde(default, skip_serializing)]
        id: Option<String>,
        /// The sender's agent path.
        author: String,
        /// The recipient's agent path.
        recipient: String,
        /// Its text parts.
        content: Vec<ContentItem>,
    },
    /// Any other item type: kept for forward compatibility, never sent to the model.
    #[serde(other)]
    Other,
}

/// Message author.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (also harness-injected context).
    User,
    /// Developer instructions.
    Developer,
    /// The model.
    Assistant,
    /// System text.
    System,
}

/// One part of a message (or of a tool output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentItem {
    /// Text written by the user/developer/system (or in a tool output).
    InputText {
        /// The text.
        text: String,
    },
    /// An image, as a URL or a `data:` URL.
    InputImage {
        /// The image URL.
        image_url: String,
        /// `auto`, `low` or `high`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// Text written by the model.
    OutputText {
        /// The text.
        text: String,
    },
}

/// A reasoning summary part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SummaryPart {
    /// `{"type":"summary_text","text":…}`.
    SummaryText {
        /// The summary text.
        text: String,
    },
}

/// A raw reasoning content part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningContent {
    /// Raw chain of thought (kept when replaying).
    ReasoningText {
        /// The text.
        text: String,
    },
    /// Plain text (dropped when replaying).
    Text {
        /// The text.
        text: String,
    },
}

/// The `output` of a tool call: a plain string or content parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolOutput {
    /// Plain text.
    Text(String),
    /// `input_text` / `input_image` parts.
    Content(Vec<ContentItem>),
}

impl ToolOutput {
    /// The text of the output (text parts joined with newlines; images skipped).
    pub fn text(&self) -> String {
        match self {
            ToolOutput::Text(text) => text.clone(),
            ToolOutput::Content(parts) => parts
                .iter()
                .filter_map(ContentItem::text)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::Text(text)
    }
}

impl From<&String> for ToolOutput {
    fn from(text: &String) -> Self {
        ToolOutput::Text(text.clone())
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::Text(text.to_string())
    }
}

impl Role {
    /// The wire name (`user`, `developer`, `assistant`, `system`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Developer => "developer",
            Role::Assistant => "assistant",
            Role::System => "system",
        }
    }
}

impl PartialEq<str> for Role {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Role {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl ContentItem {
    /// The text of a text part.
    pub fn text(&self) -> Option<&str> {
        match self {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => Some(text),
            ContentItem::InputImage { .. } => None,
        }
    }
}

impl ResponseItem {
    /// A message with these parts.
    pub fn message(role: Role, content: Vec<ContentItem>) -> ResponseItem {
        ResponseItem::Message {
            id: None,
            role,
            content,
            end_turn: None,
            phase: None,
        }
    }

    /// A user message with these parts.
    pub fn user_message(content: Vec<ContentItem>) -> ResponseItem {
        ResponseItem::message(Role::User, content)
    }

    /// A message with one text part (`output_text` for the assistant, else `input_text`).
    pub fn text_message(role: Role, text: impl Into<String>) -> ResponseItem {
        let text = text.into();
        let part = match role {
            Role::Assistant => ContentItem::OutputText { text },
            _ => ContentItem::InputText { text },
        };
        ResponseItem::message(role, vec![part])
    }

    /// Mail from one agent of a tree to another (one text part).
    pub fn agent_message(
        author: impl Into<String>,
        recipient: impl Into<String>,
        text: impl Into<String>,
    ) -> ResponseItem {
        ResponseItem::AgentMessage {
            id: None,
            author: author.into(),
            recipient: recipient.into(),
            content: vec![ContentItem::InputText { text: text.into() }],
        }
    }

    /// A user message with one text part.
    pub fn user_text(text: impl Into<String>) -> ResponseItem {
        ResponseItem::text_message(Role::User, text)
    }

    /// The output of a function call (also answers a `local_shell_call`).
    pub fn function_call_output(
        call_id: impl Into<String>,
        output: impl Into<ToolOutput>,
    ) -> ResponseItem {
        ResponseItem::FunctionCallOutput {
            call_id: call_id.into(),
            output: output.into(),
        }
    }

    /// The output of a custom tool call.
    pub fn custom_tool_call_output(
        call_id: impl Into<String>,
        output: impl Into<ToolOutput>,
    ) -> ResponseItem {
        ResponseItem::CustomToolCallOutput {
            call_id: call_id.into(),
            output: output.into(),
        }
    }

    /// For a reasoning item: the summary texts and the raw content texts.
    pub fn reasoning_texts(&self) -> Option<(Vec<String>, Vec<String>)> {
        let ResponseItem::Reasoning {
            summary, content, ..
        } = self
        else {
            return None;
        };
        let summary = summary
            .iter()
            .map(|SummaryPart::SummaryText { text }| text.clone())
            .collect();
        let content = content
            .iter()
            .flatten()
            .map(|part| match part {
                ReasoningContent::ReasoningText { text } | ReasoningContent::Text { text } => {
                    text.clone()
                }
            })
            .collect();
        Some((summary, content))
    }

    /// The concatenated text parts of a message; `None` for other items.
    pub fn message_text(&self) -> Option<String> {
        match self {
            ResponseItem::Message { content, .. } => {
                Some(content.iter().filter_map(ContentItem::text).collect())
            }
            _ => None,
        }
    }

    /// The server-side id of an output item, when it has one.
    pub fn id(&self) -> Option<&str> {
        match self {
            ResponseItem::Message { id, .. }
            | ResponseItem::FunctionCall { id, .. }
            | ResponseItem::CustomToolCall { id, .. }
            | ResponseItem::LocalShellCall { id, .. }
            | ResponseItem::WebSearchCall { id, .. }
            | ResponseItem::ToolSearchCall { id, .. }
            | ResponseItem::ToolSearchOutput { id, .. } => id.as_deref(),
            ResponseItem::Reasoning { id, .. } => (!id.is_empty()).then_some(id.as_str()),
            _ => None,
        }
    }

    /// The `call_id` of a tool call (not of an output).
    pub fn call_id(&self) -> Option<&str> {
        match self {
            ResponseItem::FunctionCall { call_id, .. }
            | ResponseItem::CustomToolCall { call_id, .. } => Some(call_id),
            ResponseItem::LocalShellCall { call_id, .. } => call_id.as_deref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn output_items_parse_and_ids_are_not_serialized() {
        let item: ResponseItem = serde_json::from_value(json!({
            "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
            "phase": "final_answer"
        }))
        .unwrap();
        assert_eq!(item.id(), Some("msg_1"));
        assert!(matches!(&item, ResponseItem::Message { role, .. } if role == "assistant"));
        assert_eq!(item.message_text().as_deref(), Some("Hello"));
        assert_eq!(
            serde_json::to_value(&item).unwrap(),
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": "Hello"}], "phase": "final_answer"})
        );

        let reasoning: ResponseItem = serde_json::from_value(json!({
            "type": "reasoning", "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "**Plan**"}],
            "encrypted_content": "gAAA"
        }))
        .unwrap();
        assert_eq!(
            reasoning.reasoning_texts(),
            Some((vec!["**Plan**".to_string()], vec![]))
        );
        assert_eq!(
            serde_json::to_value(&reasoning).unwrap(),
            json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Plan**"}],
                   "content": null, "encrypted_content": "gAAA"})
        );

        let call: ResponseItem = serde_json::from_value(json!({
            "type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "exec_command",
            "arguments": "{\"cmd\":\"ls\"}", "status": "completed"
        }))
        .unwrap();
        assert_eq!(call.call_id(), Some("call_9"));
        assert_eq!(
            serde_json::to_value(&call).unwrap(),
            json!({"type": "function_call", "name": "exec_command",
                   "arguments": "{\"cmd\":\"ls\"}", "call_id": "call_9"})
        );
    }

    #[test]
    fn tool_outputs_and_unknown_items() {
        let output: ResponseItem = serde_json::from_value(json!({
            "type": "function_call_output", "call_id": "c",
            "output": [{"type": "input_text", "text": "a"},
                       {"type": "input_image", "image_url": "data:image/png;base64,AA"}]
        }))
        .unwrap();
        let ResponseItem::FunctionCallOutput { output, .. } = &output else {
            panic!("{output:?}");
        };
        assert_eq!(output.text(), "a");
        let plain = ResponseItem::function_call_output("c", "ok");
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            json!({"type": "function_call_output", "call_id": "c", "output": "ok"})
        );
        let other: ResponseItem =
            serde_json::from_value(json!({"type": "image_generation_call", "id": "x"})).unwrap();
        assert_eq!(other, ResponseItem::Other);
        let compaction: ResponseItem =
            serde_json::from_value(json!({"type": "compaction_summary", "encrypted_content": "e"}))
                .unwrap();
        assert!(matches!(compaction, ResponseItem::Compaction { .. }));
    }

    #[test]
    fn tool_search_items_round_trip_as_the_reference_replays_them() {
        // From the reference's replayed input (0.171.0, gpt-5.5); the ids are not sent back.
        let call = json!({"type": "tool_search_call", "id": "tsc_call_ts_1", "call_id": "call_ts_1",
            "status": "completed", "execution": "client",
            "arguments": {"query": "echo add numbers", "limit": 8}});
        let output = json!({
            "type": "tool_search_output", "id": "tso_01a2332f-0ef8-77d1-9c96-41fae683bdb5",
            "call_id": "call_ts_1", "status": "completed", "execution": "client",
            "tools": [{"type": "namespace", "name": "mcp__anchor",
                "description": "Anchor test MCP server: echo, add and fail tools.",
                "tools": [{"type": "function", "name": "echo",
                    "description": "Echo the given text back, prefixed with 'echo: '.",
                    "strict": false, "defer_loading": true,
                    "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                                   "required": ["text"]}}]}]
        });
        for (json, id) in [
            (call, "tsc_call_ts_1"),
            (output, "tso_01a2332f-0ef8-77d1-9c96-41fae683bdb5"),
        ] {
            let item: ResponseItem = serde_json::from_value(json.clone()).unwrap();
            assert_ne!(item, ResponseItem::Other);
            assert_eq!(item.id(), Some(id));
            let mut expected = json;
            expected.as_object_mut().unwrap().remove("id");
            assert_eq!(serde_json::to_value(&item).unwrap(), expected);
        }
        let ResponseItem::ToolSearchCall {
            arguments, call_id, ..
        } = serde_json::from_value(
            json!({"type": "tool_search_call", "call_id": "c", "arguments": {"query": "q"}}),
        )
        .unwrap()
        else {
            panic!("tool_search_call expected");
        };
        assert_eq!(
            (arguments, call_id.as_deref()),
            (json!({"query": "q"}), Some("c"))
        );
    }
}
