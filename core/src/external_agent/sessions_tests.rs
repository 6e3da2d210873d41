use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::*;

fn write_jsonl(path: &Path, records: &[Value]) -> String {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, &text).unwrap();
    text
}

#[test]
fn rfc3339_times_parse_with_fractions_and_offsets() {
    assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(parse_rfc3339("2024-01-02T03:04:05Z"), Some(1_704_164_645));
    assert_eq!(
        parse_rfc3339("2024-01-02T03:04:05.123Z"),
        Some(1_704_164_645)
    );
    assert_eq!(
        parse_rfc3339("2024-01-02T05:04:05+02:00"),
        Some(1_704_164_645)
    );
    assert_eq!(parse_rfc3339("2024-03-01T00:00:00Z"), Some(1_709_251_200));
    assert_eq!(parse_rfc3339("2024-01-02 03:04:05"), None);
    assert_eq!(parse_rfc3339("yesterday"), None);
    assert_eq!(parse_rfc3339("2024-13-02T03:04:05Z"), None);
}

#[test]
fn a_session_reads_as_messages_with_tool_notes_and_its_title() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let cwd = dir.path().display().to_string();
    let text = write_jsonl(
        &path,
        &[
            json!({"type": "summary", "summary": "ignored"}),
            json!({"type": "user", "cwd": cwd, "timestamp": "2024-01-02T03:04:05Z",
                "message": {"role": "user", "content": "<command-message>init</command-message>\n\n  Fix it\nmore"}}),
            json!({"type": "assistant", "timestamp": "2024-01-02T03:04:06Z", "message": {"content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "name": "Bash", "input": {"command": "ls", "description": "List"}}
            ]}}),
            json!({"type": "user", "timestamp": "2024-01-02T03:04:07Z", "message": {"content": [
                {"type": "tool_result", "content": [{"type": "text", "text": "a.rs"}], "is_error": true}
            ]}}),
            json!({"type": "user", "isMeta": true, "message": {"content": "meta"}}),
            json!({"type": "user", "isSidechain": true, "message": {"content": "side"}}),
            json!({"type": "user", "message": {"content": "   "}}),
            json!({"type": "assistant", "message": {"content": [{"type": "image"}]}}),
        ],
    );
    std::fs::write(&path, format!("{text}not json\n")).unwrap();
    let session = read_session(&path, 1 << 20).unwrap();
    assert_eq!(session.cwd.as_deref(), Some(dir.path()));
    assert_eq!(session.title.as_deref(), Some("Fix it"));
    let texts: Vec<(Role, &str)> = session
        .messages
        .iter()
        .map(|m| (m.role, m.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        vec![
            (
                Role::User,
                "<command-message>init</command-message>\n\n  Fix it\nmore"
            ),
            (
                Role::Assistant,
                "Looking.\n\n[external_agent_tool_call: Bash]\ndescription: List\ncommand: ls\n[/external_agent_tool_call]"
            ),
            (
                Role::Assistant,
                "[external_agent_tool_result: error]\na.rs\n[/external_agent_tool_result]"
            ),
            (Role::Assistant, "[external unsupported block: image]"),
        ]
    );
    assert_eq!(session.latest_timestamp(), Some(1_704_164_647));
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(session.sha256, format!("{:x}", Sha256::digest(bytes)));
}

#[test]
fn custom_titles_win_over_ai_titles_and_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_jsonl(
        &path,
        &[
            json!({"type": "user", "message": {"content": "prompt"}}),
            json!({"type": "custom-title", "customTitle": "first"}),
            json!({"type": "custom-title", "customTitle": "final"}),
            json!({"type": "ai-title", "aiTitle": "generated"}),
        ],
    );
    assert_eq!(
        read_session(&path, 1 << 20).unwrap().title.as_deref(),
        Some("final")
    );
    write_jsonl(
        &path,
        &[
            json!({"type": "user", "message": {"content": "prompt"}}),
            json!({"type": "ai-title", "aiTitle": " generated "}),
        ],
    );
    assert_eq!(
        read_session(&path, 1 << 20).unwrap().title.as_deref(),
        Some("generated")
    );
    write_jsonl(
        &path,
        &[json!({"type": "user", "message": {"content": "<system-reminder>x</system-reminder>"}})],
    );
    assert_eq!(
        read_session(&path, 1 << 20).unwrap().title.as_deref(),
        Some("Imported session")
    );
}

#[test]
fn long_notes_and_titles_are_cut() {
    assert_eq!(truncate("abcdef", 6), "abcdef");
    assert_eq!(truncate("abcdefg", 6), "abc...");
    let long = "x".repeat(200);
    assert_eq!(title_from_prompt(&long).chars().count(), 120);
    let note = tool_call_note(&json!({"name": "Edit", "input": {"old": "y".repeat(3000)}}));
    assert!(note.starts_with("[external_agent_tool_call: Edit]\ninput: {\"old\":\"yyy"));
    assert!(note.ends_with("...\n[/external_agent_tool_call]"));
}

#[test]
fn a_file_past_the_byte_limit_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, "x".repeat(100)).unwrap();
    let err = read_session(&path, 99).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    assert!(read_session(&path, 100).is_ok());
}
