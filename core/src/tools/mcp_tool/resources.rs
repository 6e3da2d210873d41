//! `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource` (docs/mcp.md §4).

use std::sync::Arc;

use serde_json::{Value, json};

use super::{LIST_TEMPLATES_TOOL, READ_RESOURCE_TOOL};
use crate::mcp::McpPool;

/// Runs `list_mcp_resources`, `list_mcp_resource_templates` or `read_mcp_resource`; returns the
/// JSON text the model gets.
pub async fn resource_tool(pool: &Arc<McpPool>, name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    })
    .unwrap_or(Value::Null);
    let Some(args) = args.as_object() else {
        return "failed to parse function arguments: expected an object".to_string();
    };
    let server = args
        .get("server")
        .and_then(Value::as_str)
        .map(str::to_string);
    let cursor = args
        .get("cursor")
        .and_then(Value::as_str)
        .map(str::to_string);
    match name {
        READ_RESOURCE_TOOL => {
            let (Some(server), Some(uri)) = (server, args.get("uri").and_then(Value::as_str))
            else {
                return "read_mcp_resource needs `server` and `uri`".to_string();
            };
            match pool.connect(&server).await {
                Ok(connection) => match connection.read_resource(uri).await {
                    Ok(result) => json!({"server": server, "uri": uri, "contents": result.get("contents").cloned().unwrap_or_else(|| json!([]))}).to_string(),
                    Err(err) => format!("resources/read failed: {err}"),
                },
                Err(err) => err,
            }
        }
        _ => {
            let templates = name == LIST_TEMPLATES_TOOL;
            let key = if templates {
                "resourceTemplates"
            } else {
                "resources"
            };
            let names: Vec<String> = match server {
                Some(server) => vec![server],
                None => pool
                    .servers()
                    .into_iter()
                    .filter(|s| s.config.enabled)
                    .map(|s| s.config.name.clone())
                    .collect(),
            };
            let single = names.len() == 1;
            let mut listed = Vec::new();
            let mut next_cursor = Value::Null;
            for name in names {
                let connection = match pool.connect(&name).await {
                    Ok(connection) => connection,
                    Err(err) if single => return err,
                    Err(_) => continue,
                };
                let page = if templates {
                    connection
                        .list_resource_templates(if single { cursor.clone() } else { None })
                        .await
                } else {
                    connection
                        .list_resources(if single { cursor.clone() } else { None })
                        .await
                };
                match page {
                    Ok(page) => {
                        for mut entry in page
                            .get(key)
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default()
                        {
                            entry["server"] = json!(name);
                            listed.push(entry);
                        }
                        if single {
                            next_cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
                        }
                    }
                    Err(err) if single => return format!("listing failed: {err}"),
                    Err(_) => {}
                }
            }
            json!({key: listed, "nextCursor": next_cursor}).to_string()
        }
    }
}
