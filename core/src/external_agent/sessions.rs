//! Claude Code sessions (`~/.claude/projects/<encoded cwd>/<id>.jsonl`, one JSON record a
//! line) read as conversations: the user's and the assistant's messages, the session's cwd
//! and title, as the reference reads them (docs/protocol.md §7.39). `tool_use` and
//! `tool_result` blocks become bounded text notes, `thinking` is dropped, meta and sidechain
//! records are skipped; a user record holding only tool results speaks for the assistant.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Longest title, in characters (longer ones end with `...`).
const TITLE_MAX_CHARS: usize = 120;
/// Longest tool input note, in characters.
const NOTE_MAX_CHARS: usize = 2_000;
/// Longest tool result note, in characters.
const TOOL_RESULT_MAX_CHARS: usize = 4_000;
/// The title of a session whose first user message has no line of text.
const FALLBACK_TITLE: &str = "Imported session";
/// Wrappers Claude Code puts before a prompt, skipped for the title.
const CONTROL_WRAPPERS: [(&str, &str); 3] = [
    ("<command-message>", "</command-message>"),
    ("<system-reminder>", "</system-reminder>"),
    ("<ide_opened_file>", "</ide_opened_file>"),
];

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The assistant (tool results included).
    Assistant,
}

/// One message of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who says it.
    pub role: Role,
    /// Its text (tool notes included).
    pub text: String,
    /// Unix seconds, when the record has a time.
    pub timestamp: Option<i64>,
}

/// A session file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The first `cwd` of its records.
    pub cwd: Option<PathBuf>,
    /// The last `custom-title`, else the last `ai-title`, else the first user message's first
    /// meaningful line.
    pub title: Option<String>,
    /// Its messages, in file order.
    pub messages: Vec<Message>,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
}

impl Session {
    /// The newest message time.
    pub fn latest_timestamp(&self) -> Option<i64> {
        self.messages.iter().filter_map(|m| m.timestamp).max()
    }
}

/// Read a session file of at most `max_bytes` (a larger one is an `InvalidData` error).
pub fn read_session(path: &Path, max_bytes: u64) -> std::io::Result<Session> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    if size > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} is {size} bytes; [limits] max_external_agent_session_bytes is {max_bytes}",
                path.display()
            ),
        ));
    }
    let mut reader = BufReader::new(file.take(max_bytes));
    let mut hasher = Sha256::new();
    let mut line = String::new();
    let mut cwd = None;
    let mut custom_title = None;
    let mut ai_title = None;
    let mut fallback_title = None;
    let mut messages = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        hasher.update(line.as_bytes());
        let Ok(mut record) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        if cwd.is_none() {
            cwd = record.get("cwd").and_then(Value::as_str).map(PathBuf::from);
        }
        if let Some(title) = titled(&record, "custom-title", "customTitle") {
            custom_title = Some(title);
        }
        if let Some(title) = titled(&record, "ai-title", "aiTitle") {
            ai_title = Some(title);
        }
        if let Some(message) = message_of(&mut record) {
            if message.role == Role::User && fallback_title.is_none() {
                fallback_title = Some(title_from_prompt(&message.text));
            }
            messages.push(message);
        }
    }
    Ok(Session {
        cwd,
        title: custom_title.or(ai_title).or(fallback_title),
        messages,
        sha256: format!("{:x}", hasher.finalize()),
    })
}

fn titled(record: &Value, kind: &str, field: &str) -> Option<String> {
    (record.get("type").and_then(Value::as_str) == Some(kind))
        .then(|| record.get(field).and_then(Value::as_str))
        .flatten()
        .map(str::trim)
        .filter(|title| !title.is_empty())
        .map(str::to_owned)
}

fn message_of(record: &mut Value) -> Option<Message> {
    let kind = record
        .get("type")
        .or_else(|| record.get("role"))?
        .as_str()?;
    let assistant = match kind {
        "assistant" => true,
        "user" => false,
        _ => return None,
    };
    if record.get("isMeta").and_then(Value::as_bool) == Some(true)
        || record.get("isSidechain").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let timestamp = record
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339)
        .or_else(|| {
            record
                .get("timestamp_ms")
                .and_then(Value::as_i64)
                .map(|ms| ms / 1000)
        });
    let content = record.get_mut("message")?.get_mut("content")?.take();
    let (text, only_tool_results) = match content {
        Value::String(text) if text.trim().is_empty() => return None,
        Value::String(text) => (text, false),
        Value::Array(blocks) => text_of_blocks(&blocks)?,
        _ => return None,
    };
    Some(Message {
        role: if assistant || only_tool_results {
            Role::Assistant
        } else {
            Role::User
        },
        text,
        timestamp,
    })
}

/// The blocks' text, and whether they are tool results only.
fn text_of_blocks(blocks: &[Value]) -> Option<(String, bool)> {
    let mut parts = Vec::new();
    let mut only_tool_results = blocks.iter().any(Value::is_object);
    for block in blocks.iter().filter(|block| block.is_object()) {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    parts.push(text.to_owned());
                    only_tool_results = false;
                }
            }
            Some("tool_use") => {
                parts.push(tool_call_note(block));
                only_tool_results = false;
            }
            Some("tool_result") => parts.push(tool_result_note(block)),
            Some("thinking") | None => {}
            Some(other) => {
                parts.push(format!("[external unsupported block: {other}]"));
                only_tool_results = false;
            }
        }
    }
    let text = parts
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    (!text.is_empty()).then_some((text, only_tool_results))
}

fn tool_call_note(block: &Value) -> String {
    let name = block
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let mut lines = vec![format!("[external_agent_tool_call: {name}]")];
    match block.get("input") {
        Some(Value::Object(input)) => {
            let field = |key: &str| input.get(key).and_then(Value::as_str);
            if let Some(description) = field("description") {
                lines.push(format!("description: {description}"));
            }
            if let Some(command) = field("command") {
                lines.push(format!("command: {command}"));
            }
            if let Some(file) = field("file_path").or_else(|| field("file")) {
                lines.push(format!("file: {file}"));
            }
            if lines.len() == 1 {
                let json = Value::Object(input.clone()).to_string();
                lines.push(format!("input: {}", truncate(&json, NOTE_MAX_CHARS)));
            }
        }
        Some(input) => lines.push(format!(
            "input: {}",
            truncate(&input.to_string(), NOTE_MAX_CHARS)
        )),
        None => {}
    }
    lines.push("[/external_agent_tool_call]".into());
    lines.join("\n")
}

fn tool_result_note(block: &Value) -> String {
    let label = if block.get("is_error").and_then(Value::as_bool) == Some(true) {
        "[external_agent_tool_result: error]"
    } else {
        "[external_agent_tool_result]"
    };
    let text = match block.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| item.get("text").and_then(Value::as_str))
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    if text.is_empty() {
        format!("{label}\n[/external_agent_tool_result]")
    } else {
        format!(
            "{label}\n{}\n[/external_agent_tool_result]",
            truncate(&text, TOOL_RESULT_MAX_CHARS)
        )
    }
}

/// At most `max` characters, the last three `...` when cut.
pub(super) fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let prefix: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{prefix}...")
}

/// The title a prompt gives: its first non-blank line after Claude Code's leading control
/// wrappers.
fn title_from_prompt(prompt: &str) -> String {
    let mut rest = prompt.trim_start();
    while let Some(end) = wrapper_end(rest) {
        rest = rest[end..].trim_start();
    }
    let line = rest.lines().map(str::trim).find(|line| !line.is_empty());
    truncate(line.unwrap_or(FALLBACK_TITLE), TITLE_MAX_CHARS)
}

/// Where the (possibly nested) control wrapper `text` starts with ends.
fn wrapper_end(text: &str) -> Option<usize> {
    let opening = |at: &str| {
        CONTROL_WRAPPERS
            .iter()
            .position(|(open, _)| at.starts_with(open))
            .map(|i| (i, CONTROL_WRAPPERS[i].0.len()))
    };
    let closing = |at: &str| {
        CONTROL_WRAPPERS
            .iter()
            .position(|(_, close)| at.starts_with(close))
            .map(|i| (i, CONTROL_WRAPPERS[i].1.len()))
    };
    let (outer, len) = opening(text)?;
    let mut open = vec![outer];
    let mut cursor = len;
    while !open.is_empty() {
        cursor += text.get(cursor..)?.find('<')?;
        let at = text.get(cursor..)?;
        if let Some((tag, len)) = opening(at) {
            open.push(tag);
            cursor += len;
        } else if let Some((tag, len)) = closing(at) {
            if open.last() != Some(&tag) {
                return None;
            }
            open.pop();
            cursor += len;
        } else {
            cursor += 1;
        }
    }
    Some(cursor)
}

/// Unix seconds of an RFC 3339 time (`2026-12-01T10:00:00.000Z`, `…+02:00`).
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|time| time.timestamp())
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
