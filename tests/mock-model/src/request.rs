//! [`RecordedRequest`]: what the mock received, with helpers to inspect the body.

use std::collections::HashSet;

use bytes::Bytes;
use serde_json::Value;

/// One request the mock received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, `GET`, …
    pub method: String,
    /// The URL path, e.g. `/v1/responses`.
    pub path: String,
    /// The raw query string, if any (without `?`).
    pub query: Option<String>,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Value::Null` when empty or not JSON).
    pub body: Value,
    /// The body as received.
    pub raw_body: Bytes,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The value of query parameter `name` (not percent-decoded).
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query
            .as_deref()?
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }

    /// Responses API: the `input` array (empty if absent).
    pub fn input(&self) -> &[Value] {
        array(&self.body, "input")
    }

    /// Chat Completions: the `messages` array (empty if absent).
    pub fn messages(&self) -> &[Value] {
        array(&self.body, "messages")
    }

    /// The `tools` array (empty if absent).
    pub fn tools(&self) -> &[Value] {
        array(&self.body, "tools")
    }

    /// Responses API: the input items whose `type` is `kind`.
    pub fn inputs_of_type<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.input()
            .iter()
            .filter(move |item| item.get("type").and_then(Value::as_str) == Some(kind))
    }

    /// Responses API: the `output` of the `function_call_output` or `custom_tool_call_output`
    /// item for `call_id`.
    pub fn tool_output(&self, call_id: &str) -> Option<&Value> {
        self.input()
            .iter()
            .find(|item| {
                matches!(
                    item.get("type").and_then(Value::as_str),
                    Some("function_call_output" | "custom_tool_call_output")
                ) && item.get("call_id").and_then(Value::as_str) == Some(call_id)
            })
            .and_then(|item| item.get("output"))
    }

    /// Responses API: the texts of the `message` input items with this `role`, one string per
    /// message (its text parts joined).
    pub fn message_texts(&self, role: &str) -> Vec<String> {
        self.inputs_of_type("message")
            .filter(|item| item.get("role").and_then(Value::as_str) == Some(role))
            .map(|item| {
                array(item, "content")
                    .iter()
                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                    .collect::<String>()
            })
            .collect()
    }

    /// Check the tool-call pairing the real APIs enforce (they answer 400 otherwise): every
    /// call has exactly one output with its `call_id`, after it, and every output has a call.
    /// Works for both the Responses `input` and the Chat `messages`.
    pub fn check_tool_pairing(&self) -> Result<(), String> {
        let mut open: Vec<(String, &'static str)> = Vec::new();
        let mut seen_calls: HashSet<String> = HashSet::new();
        let mut answered: HashSet<String> = HashSet::new();
        for item in self.input() {
            let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
            let call_id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
            match kind {
                "function_call" | "local_shell_call" => {
                    open.push((call_id.to_string(), "function_call_output"));
                }
                "custom_tool_call" => open.push((call_id.to_string(), "custom_tool_call_output")),
                // A client-executed tool search is answered by the client's output item.
                "tool_search_call"
                    if item.get("execution").and_then(Value::as_str) != Some("server") =>
                {
                    open.push((call_id.to_string(), "tool_search_output"));
                }
                "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
                    answer(&mut open, &mut answered, call_id, Some(kind))?;
                }
                _ => {}
            }
        }
        for message in self.messages() {
            if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                    open.push((id.to_string(), "tool"));
                }
            }
            if message.get("role").and_then(Value::as_str) == Some("tool") {
                let id = message
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                answer(&mut open, &mut answered, id, None)?;
            }
        }
        for (call_id, _) in &open {
            if !seen_calls.insert(call_id.clone()) {
                return Err(format!("duplicate tool call id `{call_id}`"));
            }
        }
        match open.iter().find(|(call_id, _)| !answered.contains(call_id)) {
            Some((call_id, _)) => Err(format!("tool call `{call_id}` has no output")),
            None => Ok(()),
        }
    }
}

/// Record the output for `call_id`: it must follow a call with that id, of the matching kind,
/// and be its only output.
fn answer(
    open: &mut [(String, &'static str)],
    answered: &mut HashSet<String>,
    call_id: &str,
    output_kind: Option<&str>,
) -> Result<(), String> {
    if call_id.is_empty() {
        return Err("tool output without a call_id".to_string());
    }
    let Some((_, expected)) = open.iter().find(|(id, _)| id == call_id) else {
        return Err(format!("tool output for `{call_id}` has no call before it"));
    };
    if let Some(kind) = output_kind
        && kind != *expected
    {
        return Err(format!(
            "`{call_id}` is answered by {kind}, expected {expected}"
        ));
    }
    if !answered.insert(call_id.to_string()) {
        return Err(format!("tool call `{call_id}` has more than one output"));
    }
    Ok(())
}

fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::RecordedRequest;
    use serde_json::json;

    fn request(body: serde_json::Value) -> RecordedRequest {
        RecordedRequest {
            method: "POST".into(),
            path: "/v1/responses".into(),
            query: Some("api-version=1&x=y".into()),
            headers: vec![("authorization".into(), "Bearer k".into())],
            raw_body: body.to_string().into(),
            body,
        }
    }

    #[test]
    fn pairing_accepts_answered_calls_and_rejects_orphans() {
        let ok = request(json!({"input": [
            {"type": "function_call", "call_id": "a", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": "ok"},
            {"type": "custom_tool_call", "call_id": "b", "name": "apply_patch", "input": "x"},
            {"type": "custom_tool_call_output", "call_id": "b", "output": "done"},
        ]}));
        assert_eq!(ok.check_tool_pairing(), Ok(()));
        assert_eq!(ok.tool_output("b"), Some(&json!("done")));
        assert_eq!(ok.header("Authorization"), Some("Bearer k"));
        assert_eq!(ok.query_param("api-version"), Some("1"));

        let unanswered = request(json!({"input": [
            {"type": "function_call", "call_id": "a", "name": "shell", "arguments": "{}"},
        ]}));
        assert!(unanswered.check_tool_pairing().is_err());
        let orphan = request(json!({"input": [
            {"type": "function_call_output", "call_id": "z", "output": "?"},
        ]}));
        assert!(orphan.check_tool_pairing().is_err());
        let mixed = request(json!({"input": [
            {"type": "custom_tool_call", "call_id": "b", "name": "apply_patch", "input": "x"},
            {"type": "function_call_output", "call_id": "b", "output": "done"},
        ]}));
        assert!(mixed.check_tool_pairing().is_err());
        let search =
            |items: serde_json::Value| request(json!({"input": items})).check_tool_pairing();
        let call = json!({"type": "tool_search_call", "call_id": "s", "execution": "client",
                          "arguments": {"query": "q"}});
        let output = json!({"type": "tool_search_output", "call_id": "s", "execution": "client",
                            "tools": []});
        assert_eq!(search(json!([call.clone(), output])), Ok(()));
        assert!(search(json!([call])).is_err());
        assert!(search(json!([{"type": "tool_search_call", "execution": "server"}])).is_ok());
    }

    #[test]
    fn pairing_on_chat_messages() {
        let ok = request(json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "out"},
        ]}));
        assert_eq!(ok.check_tool_pairing(), Ok(()));
        let missing = request(json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        ]}));
        assert!(missing.check_tool_pairing().is_err());
    }
}
