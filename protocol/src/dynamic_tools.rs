//! Client-defined tools (`thread/start.dynamicTools`, EXPERIMENTAL upstream): their specs, the
//! `item/tool/call` request a call of one becomes, and the `dynamicToolCall` item
//! (docs/protocol.md §9.6).

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{ItemId, ThreadId, TurnId};

/// One entry of `thread/start.dynamicTools`: a function, or a namespace of functions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DynamicToolSpec {
    /// A plain function tool.
    Function(DynamicToolFunction),
    /// A namespace of function tools.
    Namespace(DynamicToolNamespace),
}

/// A function tool defined by the client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DynamicToolFunction {
    /// The name the model calls it by (`^[a-zA-Z0-9_-]+$`).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of its arguments, passed to the model as given.
    pub input_schema: Value,
    /// Offered only through tool search (namespaced tools only). Omitted when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
}

/// A namespace of client-defined tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DynamicToolNamespace {
    /// Namespace name (`^[a-zA-Z0-9_-]+$`).
    pub name: String,
    /// What the namespace is for.
    pub description: String,
    /// Its tools (at least one).
    pub tools: Vec<DynamicToolNamespaceTool>,
}

/// A tool inside a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DynamicToolNamespaceTool {
    /// A function tool.
    Function(DynamicToolFunction),
}

impl DynamicToolNamespaceTool {
    /// The function.
    pub fn function(&self) -> &DynamicToolFunction {
        match self {
            DynamicToolNamespaceTool::Function(function) => function,
        }
    }
}

/// Params of `item/tool/call` (EXPERIMENTAL upstream): the model called a dynamic tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DynamicToolCallParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// The model's call id (also the `dynamicToolCall` item's id).
    pub call_id: String,
    /// The tool's namespace; `null` for a plain tool.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// The model's arguments (JSON).
    pub arguments: Value,
}

/// One part of a dynamic tool's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DynamicToolCallOutputContentItem {
    /// Text.
    #[serde(rename_all = "camelCase")]
    InputText {
        /// The text.
        text: String,
    },
    /// An image (URL or `data:` URL).
    #[serde(rename_all = "camelCase")]
    InputImage {
        /// The image.
        image_url: String,
    },
    /// Audio (URL or `data:` URL).
    #[serde(rename_all = "camelCase")]
    InputAudio {
        /// The audio.
        audio_url: String,
    },
}

/// Result of `item/tool/call`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DynamicToolCallResponse {
    /// What the model gets back.
    pub content_items: Vec<DynamicToolCallOutputContentItem>,
    /// Whether the call succeeded (`false` fails the item).
    pub success: bool,
}

/// Status of a `dynamicToolCall` item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DynamicToolCallStatus {
    /// Waiting for the client's answer.
    InProgress,
    /// Answered with `success: true`.
    Completed,
    /// Answered with `success: false`, with an error, or not answered.
    Failed,
}

/// `dynamicToolCall` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DynamicToolCallItem {
    /// Item id (the model's call id).
    pub id: ItemId,
    /// The tool's namespace; `null` for a plain tool.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// The model's arguments.
    pub arguments: Value,
    /// Status.
    pub status: DynamicToolCallStatus,
    /// The answer's content; `null` while in progress.
    #[serde(default)]
    pub content_items: Option<Vec<DynamicToolCallOutputContentItem>>,
    /// The answer's `success`; `null` while in progress.
    #[serde(default)]
    pub success: Option<bool>,
    /// The duration of the dynamic tool call in milliseconds.
    #[serde(default)]
    pub duration_ms: Option<i64>,
}

/// Why a `dynamicTools` list is refused (the reference's texts; `-32600`).
pub fn validate_dynamic_tools(specs: &[DynamicToolSpec]) -> Result<(), String> {
    let mut names = HashSet::new();
    let mut namespaces = HashSet::new();
    for spec in specs {
        match spec {
            DynamicToolSpec::Function(function) => {
                check_identifier("name", &function.name)?;
                if function.defer_loading {
                    return Err(format!(
                        "deferred dynamic tool must include a namespace: {}",
                        function.name
                    ));
                }
                if !names.insert(function.name.as_str()) {
                    return Err(format!("duplicate dynamic tool name: {}", function.name));
                }
                check_schema(function)?;
            }
            DynamicToolSpec::Namespace(namespace) => {
                check_identifier("namespace", &namespace.name)?;
                if !namespaces.insert(namespace.name.as_str()) {
                    return Err(format!(
                        "duplicate dynamic tool namespace: {}",
                        namespace.name
                    ));
                }
                if namespace.tools.is_empty() {
                    return Err(format!(
                        "dynamic tool namespace must contain at least one tool: {}",
                        namespace.name
                    ));
                }
                let mut inner = HashSet::new();
                for tool in &namespace.tools {
                    let function = tool.function();
                    check_identifier("name", &function.name)?;
                    if !inner.insert(function.name.as_str()) {
                        return Err(format!(
                            "duplicate dynamic tool name in namespace {}: {}",
                            namespace.name, function.name
                        ));
                    }
                    check_schema(function)?;
                }
            }
        }
    }
    Ok(())
}

/// A name or namespace: not empty, no surrounding whitespace, Responses API characters only,
/// not `mcp` or `mcp__…` (reserved for MCP tools).
fn check_identifier(what: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("dynamic tool {what} must not be empty"));
    }
    if value.trim() != value {
        return Err(format!(
            "dynamic tool {what} has leading/trailing whitespace: {value}"
        ));
    }
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "dynamic tool {what} must match ^[a-zA-Z0-9_-]+$ to match Responses API: {value}"
        ));
    }
    if value == "mcp" || value.starts_with("mcp__") {
        return Err(format!("dynamic tool {what} is reserved: {value}"));
    }
    Ok(())
}

/// The input schema must be a JSON schema object (or boolean); its content is passed through.
fn check_schema(function: &DynamicToolFunction) -> Result<(), String> {
    let kind = match &function.input_schema {
        Value::Object(_) | Value::Bool(_) => return Ok(()),
        Value::Null => "null",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "sequence",
    };
    Err(format!(
        "dynamic tool input schema is not supported for {}: invalid type: {kind}, expected struct JsonSchema",
        function.name
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn specs(value: Value) -> Vec<DynamicToolSpec> {
        serde_json::from_value(value).unwrap()
    }

    fn function(name: &str) -> Value {
        json!({"type": "function", "name": name, "description": "d", "inputSchema": {"type": "object"}})
    }

    fn refused(value: Value) -> String {
        validate_dynamic_tools(&specs(value)).unwrap_err()
    }

    #[test]
    fn specs_round_trip_in_the_wire_shape() {
        let wire = json!([
            {"type": "function", "name": "lookup", "description": "d",
             "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
            {"type": "namespace", "name": "ns", "description": "n", "tools": [
                {"type": "function", "name": "a", "description": "d", "inputSchema": {},
                 "deferLoading": true}
            ]}
        ]);
        let parsed = specs(wire.clone());
        assert_eq!(serde_json::to_value(&parsed).unwrap(), wire);
        assert_eq!(validate_dynamic_tools(&parsed), Ok(()));
    }

    #[test]
    fn refusals_use_the_reference_texts() {
        let mut deferred = function("hidden");
        deferred["deferLoading"] = json!(true);
        let mut bad_schema = function("a");
        bad_schema["inputSchema"] = json!(5);
        let ns = |name: &str, tools: Value| json!({"type": "namespace", "name": name, "description": "d", "tools": tools});
        // (tools, the refusal)
        let cases = [
            (
                json!([function("a"), function("a")]),
                "duplicate dynamic tool name: a",
            ),
            (
                json!([function("bad name")]),
                "dynamic tool name must match ^[a-zA-Z0-9_-]+$ to match Responses API: bad name",
            ),
            (json!([function("")]), "dynamic tool name must not be empty"),
            (
                json!([function(" a")]),
                "dynamic tool name has leading/trailing whitespace:  a",
            ),
            (
                json!([function("mcp__x")]),
                "dynamic tool name is reserved: mcp__x",
            ),
            (
                json!([function("mcp")]),
                "dynamic tool name is reserved: mcp",
            ),
            (
                json!([deferred]),
                "deferred dynamic tool must include a namespace: hidden",
            ),
            (
                json!([bad_schema]),
                "dynamic tool input schema is not supported for a: invalid type: number, expected struct JsonSchema",
            ),
            (
                json!([ns("ns", json!([]))]),
                "dynamic tool namespace must contain at least one tool: ns",
            ),
            (
                json!([ns("ns", json!([function("a"), function("a")]))]),
                "duplicate dynamic tool name in namespace ns: a",
            ),
            (
                json!([
                    ns("ns", json!([function("a")])),
                    ns("ns", json!([function("b")]))
                ]),
                "duplicate dynamic tool namespace: ns",
            ),
            (
                json!([ns("mcp__x", json!([function("a")]))]),
                "dynamic tool namespace is reserved: mcp__x",
            ),
            (
                json!([ns("", json!([function("a")]))]),
                "dynamic tool namespace must not be empty",
            ),
            (
                json!([ns("bad ns", json!([function("a")]))]),
                "dynamic tool namespace must match ^[a-zA-Z0-9_-]+$ to match Responses API: bad ns",
            ),
        ];
        for (tools, refusal) in cases {
            assert_eq!(refused(tools.clone()), refusal, "{tools}");
        }
    }

    #[test]
    fn what_the_reference_accepts_is_accepted() {
        // A namespace and a plain tool may share a name; names are not length-checked; any
        // schema object passes through.
        let ns = json!({"type": "namespace", "name": "a", "description": "d",
                        "tools": [function("a")]});
        let mut odd_schema = function("x");
        odd_schema["inputSchema"] = json!({"type": "string"});
        let long = "x".repeat(70);
        let all = specs(json!([
            ns,
            function("a"),
            odd_schema,
            function(&long),
            function("a__b")
        ]));
        assert_eq!(validate_dynamic_tools(&all), Ok(()));
    }
}
