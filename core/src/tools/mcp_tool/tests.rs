//! Unit tests of `mcp_tool.rs`: schemas, outputs, approval answers.

use super::*;
use crate::model::ContentItem;

#[test]
fn schemas_lose_their_titles_but_not_properties_named_title() {
    let schema = json!({
        "title": "addArguments", "type": "object",
        "properties": {
            "a": {"title": "A", "type": "integer"},
            "title": {"title": "Title", "type": "string"},
            "list": {"type": "array", "items": {"title": "Item", "type": "string"}},
        },
        "$defs": {"Point": {"title": "Point", "type": "object"}},
        "required": ["a"],
    });
    assert_eq!(
        clean_schema(schema),
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer"},
                "title": {"type": "string"},
                "list": {"type": "array", "items": {"type": "string"}},
            },
            "$defs": {"Point": {"type": "object"}},
            "required": ["a"],
        })
    );
    assert_eq!(
        clean_schema(json!({})),
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(
        clean_schema(json!(true)),
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn outputs_have_the_wall_time_then_the_content() {
    let started = Instant::now();
    let ToolOutput::Text(text) = success_output(
        started,
        &json!([{"type": "text", "text": "x"}]),
        Some(json!({"result": 5})),
    ) else {
        panic!("text expected");
    };
    let (head, body) = text.split_once("\nOutput:\n").expect("two parts");
    assert!(
        head.starts_with("Wall time: ") && head.ends_with(" seconds"),
        "{head}"
    );
    assert_eq!(body, r#"{"result":5}"#);
    let ToolOutput::Text(text) = success_output(
        started,
        &json!([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]),
        None,
    ) else {
        panic!("text expected");
    };
    assert!(text.ends_with("\nOutput:\none\ntwo"), "{text}");
    let ToolOutput::Content(parts) = success_output(
        started,
        &json!([{"type": "image", "data": "AAAA", "mimeType": "image/png"}]),
        None,
    ) else {
        panic!("content expected");
    };
    assert_eq!(
        parts[1],
        ContentItem::InputImage {
            image_url: "data:image/png;base64,AAAA".into(),
            detail: None
        }
    );
    let ToolOutput::Content(parts) = failure_output(started, vec!["boom".into()]) else {
        panic!("content expected");
    };
    assert_eq!(
        parts[1],
        ContentItem::InputText {
            text: "boom".into()
        }
    );
}

#[test]
fn approval_answers() {
    let answered = |v: Value| approval_answer(&ServerRequestOutcome::Answered(v));
    assert!(matches!(
        answered(json!({"action": "accept"})),
        Approval::Accept { session: false }
    ));
    assert!(matches!(
        answered(json!({"action": "accept", "_meta": {"persist": "session"}})),
        Approval::Accept { session: true }
    ));
    assert!(matches!(
        answered(json!({"action": "decline"})),
        Approval::Decline
    ));
    assert!(matches!(
        answered(json!({"action": "cancel"})),
        Approval::Cancel
    ));
    assert!(matches!(
        answered(json!({"action": "other"})),
        Approval::Cancel
    ));
    assert!(matches!(
        approval_answer(&ServerRequestOutcome::Cancelled),
        Approval::Cancel
    ));
}

#[test]
fn no_servers_no_tools() {
    assert!(specs(&McpPool::empty()).is_empty());
    assert!(!is_resource_tool(&McpPool::empty(), READ_RESOURCE_TOOL));
    assert!(resolve(&McpPool::empty(), Some("mcp__x"), "y").is_none());
}
