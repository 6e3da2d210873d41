//! Chat Completions roles for chat templates nobody here wrote (docs/architecture.md §7.3).
//!
//! Many local servers render messages through the model's own chat template, and the templates
//! of Gemma, Mistral and others reject two messages of one role in a row ("Conversation roles
//! must alternate"). Weft's history naturally has such runs: the environment context and the
//! user's prompt are two `user` messages, the base instructions and the permissions two `system`
//! ones. [`alternate`] merges every run of one role into one message, and, when the provider
//! asks for it (`fold_system_prompt`), turns `system` messages into `user` text first, for
//! templates that have no system role at all. `tool` messages are never merged: each answers
//! its own call.

use serde_json::{Map, Value, json};

/// The separator between the texts of two merged messages.
const SEPARATOR: &str = "\n\n";

/// `messages` with consecutive messages of one role merged (and, with `fold_system`, every
/// `system` message read as a `user` one, so the system prompt lands at the top of the first
/// user message).
pub(crate) fn alternate(messages: Vec<Value>, fold_system: bool) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    for mut message in messages {
        if fold_system && role(&message) == Some("system") {
            message["role"] = Value::String("user".into());
        }
        match out.last_mut() {
            Some(last) if mergeable(last, &message) => merge(last, message),
            _ => out.push(message),
        }
    }
    out
}

fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

/// Two messages of one role that may become one: `user`, `system` and `assistant` runs.
fn mergeable(last: &Value, next: &Value) -> bool {
    let (Some(a), Some(b)) = (role(last), role(next)) else {
        return false;
    };
    a == b && matches!(a, "user" | "system" | "assistant")
}

/// Fold `next` into `last`: their contents joined, an assistant's tool calls and raw reasoning
/// appended in order.
fn merge(last: &mut Value, next: Value) {
    let Value::Object(next) = next else {
        return;
    };
    let Some(last) = last.as_object_mut() else {
        return;
    };
    let content = join_content(
        last.remove("content").unwrap_or(Value::Null),
        next.get("content").cloned().unwrap_or(Value::Null),
    );
    last.insert("content".into(), content);
    if let Some(Value::Array(calls)) = next.get("tool_calls") {
        match last.get_mut("tool_calls") {
            Some(Value::Array(existing)) => existing.extend(calls.iter().cloned()),
            _ => {
                last.insert("tool_calls".into(), Value::Array(calls.clone()));
            }
        }
    }
    if let Some(Value::String(reasoning)) = next.get("reasoning") {
        append_text(last, "reasoning", reasoning);
    }
}

fn append_text(message: &mut Map<String, Value>, key: &str, text: &str) {
    match message.get_mut(key) {
        Some(Value::String(existing)) => existing.push_str(text),
        _ => {
            message.insert(key.into(), Value::String(text.to_string()));
        }
    }
}

/// Two message contents as one: strings joined by a blank line; when either has parts (an
/// image), the parts of both in order; `null` (an assistant's tool-call message) adds nothing.
fn join_content(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Null, b) => b,
        (a, Value::Null) => a,
        (Value::String(a), Value::String(b)) if a.is_empty() => Value::String(b),
        (Value::String(a), Value::String(b)) if b.is_empty() => Value::String(a),
        (Value::String(a), Value::String(b)) => Value::String(format!("{a}{SEPARATOR}{b}")),
        (a, b) => {
            let mut parts = into_parts(a);
            parts.extend(into_parts(b));
            Value::Array(parts)
        }
    }
}

fn into_parts(content: Value) -> Vec<Value> {
    match content {
        Value::Array(parts) => parts,
        Value::String(text) if text.is_empty() => Vec::new(),
        Value::String(text) => vec![json!({ "type": "text", "text": text })],
        Value::Null => Vec::new(),
        other => vec![json!({ "type": "text", "text": other.to_string() })],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(messages: &[Value]) -> Vec<&str> {
        messages.iter().filter_map(role).collect()
    }

    #[test]
    fn runs_of_one_role_merge_and_tool_messages_stay_apart() {
        let merged = alternate(
            vec![
                json!({"role": "system", "content": "base"}),
                json!({"role": "system", "content": "perms"}),
                json!({"role": "user", "content": "<environment_context/>"}),
                json!({"role": "user", "content": "list files"}),
                json!({"role": "assistant", "content": "Looking.", "reasoning": "a"}),
                json!({"role": "assistant", "content": null, "reasoning": "b", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}
                ]}),
                json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt"}),
                json!({"role": "tool", "tool_call_id": "c2", "content": "b.txt"}),
                json!({"role": "assistant", "content": "done"}),
            ],
            false,
        );
        assert_eq!(
            merged,
            vec![
                json!({"role": "system", "content": "base\n\nperms"}),
                json!({"role": "user", "content": "<environment_context/>\n\nlist files"}),
                json!({"role": "assistant", "content": "Looking.", "reasoning": "ab", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}
                ]}),
                json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt"}),
                json!({"role": "tool", "tool_call_id": "c2", "content": "b.txt"}),
                json!({"role": "assistant", "content": "done"}),
            ]
        );
    }

    #[test]
    fn folding_puts_the_system_prompt_at_the_top_of_the_first_user_message() {
        let merged = alternate(
            vec![
                json!({"role": "system", "content": "base"}),
                json!({"role": "user", "content": "hi"}),
                json!({"role": "assistant", "content": "hello"}),
                json!({"role": "system", "content": "mode changed"}),
                json!({"role": "user", "content": "again"}),
            ],
            true,
        );
        assert_eq!(
            merged,
            vec![
                json!({"role": "user", "content": "base\n\nhi"}),
                json!({"role": "assistant", "content": "hello"}),
                json!({"role": "user", "content": "mode changed\n\nagain"}),
            ]
        );
        // Without folding the system messages keep their role.
        let kept = alternate(
            vec![
                json!({"role": "system", "content": "base"}),
                json!({"role": "user", "content": "hi"}),
            ],
            false,
        );
        assert_eq!(roles(&kept), ["system", "user"]);
    }

    #[test]
    fn parts_are_concatenated_when_either_side_has_an_image() {
        let image = json!({"type": "image_url", "image_url": {"url": "data:x"}});
        let merged = alternate(
            vec![
                json!({"role": "user", "content": "context"}),
                json!({"role": "user", "content": [{"type": "text", "text": "look"}, image.clone()]}),
                json!({"role": "user", "content": ""}),
            ],
            false,
        );
        assert_eq!(
            merged,
            vec![json!({"role": "user", "content": [
                {"type": "text", "text": "context"},
                {"type": "text", "text": "look"},
                image,
            ]})]
        );
    }

    #[test]
    fn an_alternating_conversation_is_left_as_it_is() {
        let messages = vec![
            json!({"role": "system", "content": "base"}),
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": null, "tool_calls": []}),
            json!({"role": "tool", "tool_call_id": "c", "content": "x"}),
            json!({"role": "user", "content": "more"}),
        ];
        assert_eq!(alternate(messages.clone(), false), messages);
        assert!(alternate(Vec::new(), true).is_empty());
    }
}
