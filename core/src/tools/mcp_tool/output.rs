//! What the model gets from an MCP call (docs/mcp.md §4): the wall-time line, then the
//! structured content or the text; a failure as the two-part content array.

use std::time::Instant;

use serde_json::{Value, json};

use crate::model::{ContentItem, ToolOutput};

pub(super) fn millis(started: Instant) -> i64 {
    i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX)
}

fn wall_time(started: Instant) -> String {
    format!(
        "Wall time: {:.4} seconds\nOutput:",
        started.elapsed().as_secs_f64()
    )
}

pub(super) fn texts(content: &Value) -> Vec<String> {
    content
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn failure_output(started: Instant, messages: Vec<String>) -> ToolOutput {
    let mut parts = vec![ContentItem::InputText {
        text: wall_time(started),
    }];
    parts.extend(
        messages
            .into_iter()
            .map(|text| ContentItem::InputText { text }),
    );
    ToolOutput::Content(parts)
}

/// Structured content as compact JSON; else the text parts; images as image parts.
pub(super) fn success_output(
    started: Instant,
    content: &Value,
    structured: Option<Value>,
) -> ToolOutput {
    let head = wall_time(started);
    if let Some(structured) = structured {
        return ToolOutput::Text(format!("{head}\n{structured}"));
    }
    let parts = content.as_array().cloned().unwrap_or_default();
    let images: Vec<&Value> = parts
        .iter()
        .filter(|p| p.get("type") == Some(&json!("image")))
        .collect();
    if images.is_empty() {
        let body = texts(content).join("\n");
        let body = if body.is_empty() && !parts.is_empty() {
            content.to_string()
        } else {
            body
        };
        return ToolOutput::Text(format!("{head}\n{body}"));
    }
    let mut items = vec![ContentItem::InputText { text: head }];
    for part in &parts {
        match part.get("type").and_then(Value::as_str) {
            Some("text") => items.push(ContentItem::InputText {
                text: part
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            }),
            Some("image") => {
                let mime = part
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("image/png");
                let data = part.get("data").and_then(Value::as_str).unwrap_or_default();
                items.push(ContentItem::InputImage {
                    image_url: format!("data:{mime};base64,{data}"),
                    detail: None,
                });
            }
            _ => items.push(ContentItem::InputText {
                text: part.to_string(),
            }),
        }
    }
    ToolOutput::Content(items)
}
