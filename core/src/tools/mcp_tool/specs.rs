//! What the model is offered for the MCP servers (docs/mcp.md §4): the `mcp__NAME` namespaces,
//! the resource tools, and input schemas as the model gets them.

use serde_json::{Value, json};

use super::{LIST_RESOURCES_TOOL, LIST_TEMPLATES_TOOL, NAMESPACE_PREFIX, READ_RESOURCE_TOOL};
use crate::mcp::{McpPool, OfferedServer};

/// The tool definitions of the pool's running servers, then the resource tools.
pub fn specs(pool: &McpPool) -> Vec<Value> {
    if !pool.has_servers() {
        return Vec::new();
    }
    let mut specs: Vec<Value> = resource_tool_specs();
    for server in pool.offered() {
        if server.tools.is_empty() {
            continue;
        }
        let tools: Vec<Value> = server.tools.iter().filter_map(function_spec).collect();
        specs.push(json!({
            "type": "namespace",
            "name": namespace_name(&server),
            "description": namespace_description(&server),
            "tools": tools,
        }));
    }
    specs
}

/// The resource tools alone (offered inline also when the servers' tools are deferred behind
/// `tool_search`, docs/mcp.md §4); none when no server is configured.
pub fn resource_specs(pool: &McpPool) -> Vec<Value> {
    if pool.has_servers() {
        resource_tool_specs()
    } else {
        Vec::new()
    }
}

/// `mcp__NAME`.
pub fn namespace_name(server: &OfferedServer) -> String {
    format!("{NAMESPACE_PREFIX}{}", server.config.name)
}

/// A server's namespace description: its `initialize` instructions, or a line naming it.
pub fn namespace_description(server: &OfferedServer) -> String {
    server
        .instructions
        .clone()
        .filter(|text| !text.trim().is_empty())
        .unwrap_or_else(|| format!("Tools of the `{}` MCP server.", server.config.name))
}

/// One MCP tool as a Responses API function (`strict: false`, the cleaned input schema).
pub fn function_spec(tool: &Value) -> Option<Value> {
    Some(json!({
        "type": "function",
        "name": tool.get("name")?.as_str()?,
        "description": tool.get("description").and_then(Value::as_str).unwrap_or_default(),
        "strict": false,
        "parameters": clean_schema(tool.get("inputSchema").cloned().unwrap_or_else(|| json!({}))),
    }))
}

fn resource_tool_specs() -> Vec<Value> {
    let server = |what: &str| json!({"type": "string", "description": format!("The MCP server's name, as configured. Leave it out to {what} every server.")});
    let cursor = json!({"type": "string", "description": "The cursor a previous call returned, for the next page."});
    vec![
        json!({
            "type": "function",
            "name": LIST_RESOURCES_TOOL,
            "description": "List the resources (files, records, documents) that the configured MCP servers make available to read.",
            "strict": false,
            "parameters": {"type": "object", "properties": {"cursor": cursor, "server": server("list the resources of")}, "additionalProperties": false},
        }),
        json!({
            "type": "function",
            "name": LIST_TEMPLATES_TOOL,
            "description": "List the resource templates (URI patterns with parameters) of the configured MCP servers.",
            "strict": false,
            "parameters": {"type": "object", "properties": {"cursor": cursor, "server": server("list the templates of")}, "additionalProperties": false},
        }),
        json!({
            "type": "function",
            "name": READ_RESOURCE_TOOL,
            "description": "Read one resource of an MCP server by its URI.",
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The MCP server's name, as list_mcp_resources reports it."},
                    "uri": {"type": "string", "description": "The resource's URI, as list_mcp_resources reports it."},
                },
                "required": ["server", "uri"],
                "additionalProperties": false,
            },
        }),
    ]
}

/// An input schema as the model gets it: every `title` dropped (property *names* kept), and
/// an object schema at the top.
pub fn clean_schema(schema: Value) -> Value {
    let mut schema = strip_titles(schema);
    if let Value::Object(map) = &mut schema {
        map.entry("type").or_insert_with(|| json!("object"));
        if map.get("type") == Some(&json!("object")) {
            map.entry("properties").or_insert_with(|| json!({}));
        }
    } else {
        schema = json!({"type": "object", "properties": {}});
    }
    schema
}

fn strip_titles(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(key, _)| key != "title")
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        // A map of names to schemas: keep every name, clean each schema.
                        (
                            "properties" | "$defs" | "definitions" | "patternProperties",
                            Value::Object(inner),
                        ) => Value::Object(
                            inner
                                .into_iter()
                                .map(|(k, v)| (k, strip_titles(v)))
                                .collect(),
                        ),
                        (_, value) => strip_titles(value),
                    };
                    (key, value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_titles).collect()),
        other => other,
    }
}
