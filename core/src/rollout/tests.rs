use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use weft_protocol::{
    AgentMessageItem, AskForApproval, CodexErrorInfo, ReasoningEffort, SandboxMode, SandboxPolicy,
    SessionSource, ThreadId, ThreadItem, ThreadItemDetails, ThreadStatus, ThreadTokenUsage,
    TokenUsageBreakdown, TurnError, TurnId, TurnItemsView, TurnStatus, UserInput, UserMessageItem,
};

use super::*;
use crate::model::{ResponseItem, Role};
use crate::time::{new_thread_id, new_turn_id, now_secs, utc_parts};

mod damaged;
mod files;
mod history;
mod large;
mod read_write;
mod record;
mod truncate;

/// A session header (the state DB and index tests start from it too).
pub(crate) fn meta(id: &ThreadId, created_at: i64) -> SessionMeta {
    SessionMeta {
        id: id.clone(),
        created_at,
        cwd: "/work/project".into(),
        model: "gpt-test".into(),
        model_provider: "mock".into(),
        source: SessionSource::Vscode,
        originator: Some("test-client".into()),
        cli_version: "0.1.0".into(),
        forked_from_id: None,
        ephemeral: false,
        base_instructions: None,
        developer_instructions: Some("be brief".into()),
        approval_policy: AskForApproval::Never,
        sandbox_policy: SandboxPolicy::from_mode(SandboxMode::ReadOnly),
        reasoning_effort: Some(ReasoningEffort::new("low")),
        reasoning_summary: None,
        thread_source: None,
        git_info: None,
        dynamic_tools: Vec::new(),
    }
}

pub(crate) fn context(model: &str) -> TurnContextRecord {
    TurnContextRecord {
        model: model.into(),
        model_provider: "mock".into(),
        cwd: "/work/project".into(),
        approval_policy: AskForApproval::OnRequest,
        sandbox_policy: SandboxPolicy::from_mode(SandboxMode::WorkspaceWrite),
        effort: Some(ReasoningEffort::new("high")),
        summary: None,
        collaboration_mode: None,
        permission_profile: None,
        approvals_reviewer: None,
    }
}

/// A completed user message of one text input.
pub(crate) fn user_item(id: &str, text: &str) -> ThreadItem {
    ThreadItem::new(UserMessageItem {
        id: id.into(),
        client_id: None,
        content: vec![UserInput::Text {
            text: text.into(),
            text_elements: Vec::new(),
        }],
    })
}

pub(crate) fn agent_item(id: &str, text: &str) -> ThreadItem {
    ThreadItem::new(AgentMessageItem::new(id, text))
}

fn usage(total: i64) -> ThreadTokenUsage {
    ThreadTokenUsage {
        total: TokenUsageBreakdown {
            total_tokens: total,
            ..Default::default()
        },
        last: TokenUsageBreakdown::default(),
        model_context_window: Some(1000),
    }
}

/// The records of one turn, the way the runtime writes them; `end` = `None` leaves it open.
fn write_turn(
    writer: &RolloutWriter,
    turn_id: &TurnId,
    user: &str,
    answer: &str,
    end: Option<TurnStatus>,
) {
    writer.append(RolloutRecord::TurnStarted {
        turn_id: turn_id.clone(),
        started_at: now_secs(),
        context: context("gpt-test"),
    });
    writer.append(RolloutRecord::ResponseItem(ResponseItem::user_text(user)));
    writer.append(RolloutRecord::ItemCompleted {
        turn_id: turn_id.clone(),
        item: user_item(&format!("u-{turn_id}"), user),
    });
    writer.append(RolloutRecord::ResponseItem(ResponseItem::text_message(
        Role::Assistant,
        answer,
    )));
    writer.append(RolloutRecord::ItemCompleted {
        turn_id: turn_id.clone(),
        item: agent_item(&format!("m-{turn_id}"), answer),
    });
    writer.append(RolloutRecord::TokenUsage(usage(42)));
    if let Some(status) = end {
        if status == TurnStatus::Interrupted {
            writer.append(RolloutRecord::ResponseItem(ResponseItem::user_text(
                TURN_ABORTED_MARKER,
            )));
        }
        writer.append(RolloutRecord::TurnEnded {
            turn_id: turn_id.clone(),
            status,
            error: (status == TurnStatus::Failed)
                .then(|| TurnError::new("boom", Some(CodexErrorInfo::Other))),
            completed_at: now_secs(),
            duration_ms: Some(5),
        });
    }
}

/// Writes one turn with a new id (see [`write_turn`]); returns the id.
fn new_turn(writer: &RolloutWriter, user: &str, answer: &str, end: Option<TurnStatus>) -> TurnId {
    let turn_id = new_turn_id();
    write_turn(writer, &turn_id, user, answer, end);
    turn_id
}

async fn new_writer(home: &Path) -> (RolloutWriter, ThreadId) {
    let id = new_thread_id();
    let writer = RolloutWriter::create(home, meta(&id, now_secs()))
        .await
        .unwrap();
    (writer, id)
}

/// A rollout with only its header, closed; returns its path and thread.
async fn closed_rollout(home: &Path) -> (PathBuf, ThreadId) {
    let (writer, id) = new_writer(home).await;
    let path = writer.path().to_path_buf();
    writer.close().await.unwrap();
    (path, id)
}

/// Appends raw bytes (a torn or unterminated line) to a rollout file.
pub(crate) fn append_bytes(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

fn texts(history: &[ResponseItem]) -> Vec<String> {
    history
        .iter()
        .map(|i| i.message_text().unwrap_or_default())
        .collect()
}
