//! Building a Chat Completions request from a [`Prompt`] (docs/architecture.md §7.3, with our fixes:
//! `developer` becomes `system`, only function tools are offered, usage is requested).

use serde_json::{Map, Value, json};

use super::item::{ContentItem, ReasoningContent, ResponseItem, Role, ToolOutput};
use super::prompt::Prompt;
use super::provider::ProviderConfig;
use super::roles::alternate;

/// The Chat Completions request body for `prompt` to `provider`: runs of one role merged (and
/// the system prompt folded into the user's text when the provider asks, `roles.rs`), and
/// `max_tokens` when `model_max_output_tokens` is configured.
pub(crate) fn chat_body(prompt: &Prompt, provider: &ProviderConfig) -> Value {
    let mut body = json!({
        "model": prompt.model,
        "messages": alternate(messages(prompt), provider.fold_system_prompt),
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if let Some(max_tokens) = provider.max_output_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    let tools = chat_tools(&prompt.tools);
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    if let Some(schema) = &prompt.output_schema {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": super::prompt::OUTPUT_SCHEMA_NAME, "schema": schema, "strict": true},
        });
    }
    body
}

/// Function tools in Chat format: `{"type":"function","function":{name, description,
/// parameters, …}}`. Chat has no namespaces: a namespace's functions are offered flat, as
/// `<namespace>__<name>` (the name a call comes back with, see `tools/dynamic_tool.rs`).
/// Custom/freeform and server tools cannot be offered on Chat.
fn chat_tools(tools: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for tool in tools {
        match tool.get("type").and_then(Value::as_str) {
            Some("function") => out.extend(chat_function(tool, None)),
            Some("namespace") => {
                let namespace = tool.get("name").and_then(Value::as_str);
                for inner in tool
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    out.extend(chat_function(inner, namespace));
                }
            }
            _ => {}
        }
    }
    out
}

fn chat_function(tool: &Value, namespace: Option<&str>) -> Option<Value> {
    let mut function = tool.as_object()?.clone();
    function.remove("type");
    if let Some(namespace) = namespace {
        let name = function.get("name")?.as_str()?;
        let flat = flat_name(Some(namespace), name);
        function.insert("name".into(), Value::String(flat));
    }
    Some(json!({ "type": "function", "function": function }))
}

/// A tool's name on Chat: `<namespace>__<name>` for a namespaced one.
fn flat_name(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(namespace) => format!("{namespace}__{name}"),
        None => name.to_string(),
    }
}

/// History → Chat messages.
fn messages(prompt: &Prompt) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    if !prompt.instructions.is_empty() {
        out.push(json!({ "role": "system", "content": prompt.instructions }));
    }
    let last_user = prompt.input.iter().rposition(|item| {
        matches!(
            item,
            ResponseItem::Message {
                role: Role::User,
                ..
            }
        )
    });
    // Raw reasoning after the last user message rides on the next assistant message (the
    // non-standard `reasoning` field), else on the previous one; older reasoning is dropped.
    let mut reasoning = String::new();
    let mut last_assistant: Option<usize> = None;
    let mut last_assistant_text: Option<String> = None;
    for (position, item) in prompt.input.iter().enumerate() {
        match item {
            ResponseItem::Message { role, content, .. } => match role {
                Role::Assistant => {
                    let text = joined_text(content);
                    if last_assistant_text.as_deref() == Some(text.as_str()) {
                        continue;
                    }
                    out.push(json!({ "role": "assistant", "content": text }));
                    let at = out.len() - 1;
                    attach_reasoning(&mut out, at, &mut reasoning);
                    last_assistant = Some(at);
                    last_assistant_text = Some(text);
                }
                Role::User => {
                    out.push(json!({ "role": "user", "content": message_content(content) }));
                    last_assistant = None;
                }
                // Many local chat templates reject `developer`.
                Role::Developer | Role::System => {
                    out.push(json!({ "role": "system", "content": message_content(content) }));
                }
            },
            // Chat has no agent mail: it reads as a user message (its text names the sender).
            ResponseItem::AgentMessage { content, .. } => {
                out.push(json!({ "role": "user", "content": message_content(content) }));
                last_assistant = None;
            }
            ResponseItem::FunctionCall {
                name,
                namespace,
                arguments,
                call_id,
                ..
            } => {
                let name = flat_name(namespace.as_deref(), name);
                let at = push_tool_call(&mut out, call_id, &name, arguments.clone());
                attach_reasoning(&mut out, at, &mut reasoning);
                last_assistant = Some(at);
            }
            ResponseItem::CustomToolCall {
                call_id,
                name,
                input,
                ..
            } => {
                let arguments = json!({ "input": input }).to_string();
                let at = push_tool_call(&mut out, call_id, name, arguments);
                attach_reasoning(&mut out, at, &mut reasoning);
                last_assistant = Some(at);
            }
            ResponseItem::LocalShellCall {
                call_id: Some(call_id),
                action,
                ..
            } => {
                let at = push_tool_call(&mut out, call_id, "local_shell", action.to_string());
                attach_reasoning(&mut out, at, &mut reasoning);
                last_assistant = Some(at);
            }
            ResponseItem::FunctionCallOutput { call_id, output }
            | ResponseItem::CustomToolCallOutput { call_id, output } => {
                out.push(json!({
                    "role": "tool", "tool_call_id": call_id, "content": tool_content(output)
                }));
            }
            ResponseItem::Reasoning {
                content: Some(parts),
                ..
            } if last_user.is_some_and(|user| position > user) => {
                for part in parts {
                    if let ReasoningContent::ReasoningText { text } = part {
                        reasoning.push_str(text);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(at) = last_assistant {
        attach_reasoning(&mut out, at, &mut reasoning);
    }
    out
}

/// Append the call to the previous assistant tool-call message, or start one. Returns the
/// message's position.
fn push_tool_call(out: &mut Vec<Value>, call_id: &str, name: &str, arguments: String) -> usize {
    let call = json!({
        "id": call_id, "type": "function",
        "function": { "name": name, "arguments": arguments }
    });
    if let Some(last) = out.last_mut()
        && last["role"] == "assistant"
        && last["content"].is_null()
        && let Some(calls) = last.get_mut("tool_calls").and_then(Value::as_array_mut)
    {
        calls.push(call);
        return out.len() - 1;
    }
    out.push(json!({ "role": "assistant", "content": null, "tool_calls": [call] }));
    out.len() - 1
}

fn attach_reasoning(out: &mut [Value], at: usize, reasoning: &mut String) {
    if reasoning.is_empty() {
        return;
    }
    if let Some(Value::Object(message)) = out.get_mut(at) {
        let text = std::mem::take(reasoning);
        match message.get_mut("reasoning") {
            Some(Value::String(existing)) => existing.push_str(&text),
            _ => {
                message.insert("reasoning".into(), Value::String(text));
            }
        }
    }
}

fn joined_text(content: &[ContentItem]) -> String {
    content
        .iter()
        .filter_map(ContentItem::text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A string, or text/image parts when there is an image.
fn message_content(content: &[ContentItem]) -> Value {
    if !content
        .iter()
        .any(|part| matches!(part, ContentItem::InputImage { .. }))
    {
        return Value::String(joined_text(content));
    }
    Value::Array(content.iter().map(chat_part).collect())
}

fn chat_part(part: &ContentItem) -> Value {
    match part {
        ContentItem::InputText { text } | ContentItem::OutputText { text } => {
            json!({ "type": "text", "text": text })
        }
        ContentItem::InputImage { image_url, detail } => {
            let mut image = Map::new();
            image.insert("url".into(), Value::String(image_url.clone()));
            if let Some(detail) = detail {
                image.insert("detail".into(), Value::String(detail.clone()));
            }
            json!({ "type": "image_url", "image_url": image })
        }
    }
}

fn tool_content(output: &ToolOutput) -> Value {
    match output {
        ToolOutput::Text(text) => Value::String(text.clone()),
        ToolOutput::Content(parts) => message_content(parts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::item::SummaryPart;

    fn provider() -> ProviderConfig {
        ProviderConfig::new("p", "P", "http://127.0.0.1:1/v1")
    }

    #[test]
    fn history_maps_to_chat_messages() {
        let prompt = Prompt {
            model: "qwen".into(),
            instructions: "base".into(),
            input: vec![
                ResponseItem::text_message(Role::Developer, "perms"),
                ResponseItem::user_text("list files"),
                ResponseItem::Reasoning {
                    id: String::new(),
                    summary: vec![SummaryPart::SummaryText { text: "s".into() }],
                    content: Some(vec![ReasoningContent::ReasoningText {
                        text: "think".into(),
                    }]),
                    encrypted_content: None,
                },
                ResponseItem::FunctionCall {
                    id: None,
                    name: "shell".into(),
                    namespace: None,
                    arguments: "{\"command\":[\"ls\"]}".into(),
                    call_id: "c1".into(),
                },
                ResponseItem::FunctionCall {
                    id: None,
                    name: "shell".into(),
                    namespace: None,
                    arguments: "{}".into(),
                    call_id: "c2".into(),
                },
                ResponseItem::FunctionCallOutput {
                    call_id: "c1".into(),
                    output: "a.txt".into(),
                },
                ResponseItem::FunctionCallOutput {
                    call_id: "c2".into(),
                    output: ToolOutput::Content(vec![
                        ContentItem::InputText { text: "img".into() },
                        ContentItem::InputImage {
                            image_url: "data:x".into(),
                            detail: None,
                        },
                    ]),
                },
                ResponseItem::text_message(Role::Assistant, "done"),
                ResponseItem::text_message(Role::Assistant, "done"),
            ],
            tools: vec![
                json!({"type": "function", "name": "shell", "description": "d",
                       "strict": false, "parameters": {"type": "object"}}),
                json!({"type": "custom", "name": "apply_patch", "format": {}}),
                json!({"type": "web_search"}),
            ]
            .into(),
            ..Prompt::default()
        };
        let body = chat_body(&prompt, &provider());
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {"name": "shell", "description": "d",
                    "strict": false, "parameters": {"type": "object"}}}])
        );
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "base\n\nperms"},
                {"role": "user", "content": "list files"},
                {"role": "assistant", "content": null, "reasoning": "think", "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "shell", "arguments": "{\"command\":[\"ls\"]}"}},
                    {"id": "c2", "type": "function", "function": {"name": "shell", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
                {"role": "tool", "tool_call_id": "c2", "content": [
                    {"type": "text", "text": "img"},
                    {"type": "image_url", "image_url": {"url": "data:x"}}
                ]},
                {"role": "assistant", "content": "done"}
            ])
        );
    }

    #[test]
    fn namespaces_are_flattened() {
        let body = chat_body(
            &Prompt {
                model: "m".into(),
                input: vec![
                    ResponseItem::user_text("hi"),
                    ResponseItem::FunctionCall {
                        id: None,
                        name: "act".into(),
                        namespace: Some("ns".into()),
                        arguments: "{}".into(),
                        call_id: "c1".into(),
                    },
                    ResponseItem::FunctionCallOutput {
                        call_id: "c1".into(),
                        output: "ok".into(),
                    },
                ],
                tools: vec![
                    json!({"type": "namespace", "name": "ns", "description": "n", "tools": [
                        {"type": "function", "name": "act", "description": "d", "strict": false,
                         "parameters": {}}
                    ]}),
                ]
                .into(),
                ..Prompt::default()
            },
            &provider(),
        );
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {"name": "ns__act", "description": "d",
                    "strict": false, "parameters": {}}}])
        );
        assert_eq!(
            body["messages"][1]["tool_calls"][0]["function"]["name"],
            "ns__act"
        );
    }

    #[test]
    fn no_tools_key_without_function_tools() {
        let body = chat_body(
            &Prompt {
                model: "m".into(),
                input: vec![ResponseItem::user_text("hi")],
                ..Prompt::default()
            },
            &provider(),
        );
        assert!(body.get("tools").is_none());
        assert_eq!(body["messages"], json!([{"role": "user", "content": "hi"}]));
    }
}

#[cfg(test)]
mod wire_tests {
    use super::*;

    fn two_user_messages() -> Prompt {
        Prompt {
            model: "gemma".into(),
            instructions: "base".into(),
            input: vec![
                ResponseItem::user_text("<environment_context/>"),
                ResponseItem::user_text("hi"),
            ],
            ..Prompt::default()
        }
    }

    #[test]
    fn the_environment_and_the_prompt_are_one_user_message() {
        let provider = ProviderConfig::new("p", "P", "http://127.0.0.1:1/v1");
        let body = chat_body(&two_user_messages(), &provider);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "base"},
                {"role": "user", "content": "<environment_context/>\n\nhi"}
            ])
        );
        assert!(body.get("max_tokens").is_none());
    }

    #[test]
    fn folding_and_max_tokens_follow_the_provider() {
        let mut provider = ProviderConfig::new("p", "P", "http://127.0.0.1:1/v1");
        provider.fold_system_prompt = true;
        provider.max_output_tokens = Some(512);
        let body = chat_body(&two_user_messages(), &provider);
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": "base\n\n<environment_context/>\n\nhi"}])
        );
        assert_eq!(body["max_tokens"], 512);
    }
}
