//! What every tool takes: the call the model made ([`ToolCall`]) and what the turn it runs in
//! gives it ([`ToolTurn`]). What a turn *offers* (which families of tools, with their own
//! context) is [`super::offer::ToolOffer`]; each tool keeps its own part of it.

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;
use weft_protocol::{AskForApproval, SandboxPolicy, ThreadId, ThreadItem, TurnId};

use crate::events::{SharedSink, ThreadEvent};
use crate::model::{ResponseItem, ToolOutput};

/// One tool call from the model.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The call id (also the id of the item it produces).
    pub call_id: String,
    /// The tool name.
    pub name: String,
    /// The tool's namespace, when the model named one.
    pub namespace: Option<String>,
    /// The arguments.
    pub input: ToolInput,
}

/// How the model passed its arguments.
#[derive(Debug, Clone)]
pub enum ToolInput {
    /// A function call: a JSON-encoded arguments object.
    Function(String),
    /// A custom (freeform) tool call: raw text.
    Custom(String),
}

impl ToolCall {
    /// The call from a history item, if it is one.
    pub fn from_item(item: &ResponseItem) -> Option<ToolCall> {
        match item {
            ResponseItem::FunctionCall {
                call_id,
                name,
                namespace,
                arguments,
                ..
            } => Some(ToolCall {
                call_id: call_id.clone(),
                name: name.clone(),
                namespace: namespace.clone(),
                input: ToolInput::Function(arguments.clone()),
            }),
            ResponseItem::CustomToolCall {
                call_id,
                name,
                input,
                ..
            } => Some(ToolCall {
                call_id: call_id.clone(),
                name: name.clone(),
                namespace: None,
                input: ToolInput::Custom(input.clone()),
            }),
            _ => None,
        }
    }

    /// The raw arguments: the JSON of a function call, the text of a custom one.
    pub fn arguments(&self) -> &str {
        match &self.input {
            ToolInput::Function(arguments) | ToolInput::Custom(arguments) => arguments,
        }
    }

    /// Whether the model called it as a function (not as a custom tool).
    pub fn is_function(&self) -> bool {
        matches!(self.input, ToolInput::Function(_))
    }

    /// The output item answering this call with `output`, of the matching kind.
    pub fn answer(&self, output: ToolOutput) -> ResponseItem {
        match self.input {
            ToolInput::Function(_) => ResponseItem::function_call_output(&self.call_id, output),
            ToolInput::Custom(_) => ResponseItem::custom_tool_call_output(&self.call_id, output),
        }
    }

    /// The output item answering this call, of the matching kind.
    pub fn output(&self, text: impl Into<String>) -> ResponseItem {
        let text = text.into();
        match self.input {
            ToolInput::Function(_) => ResponseItem::function_call_output(&self.call_id, text),
            ToolInput::Custom(_) => ResponseItem::custom_tool_call_output(&self.call_id, text),
        }
    }
}

/// What a tool call may need from the turn it runs in (frozen with the turn context).
#[derive(Clone)]
pub struct ToolTurn {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// Where events (items, deltas, server requests) go.
    pub sink: SharedSink,
    /// Cancelled by `turn/interrupt`: a running tool answers with its aborted output.
    pub cancel: CancellationToken,
    /// Working directory.
    pub cwd: PathBuf,
    /// When to ask before acting.
    pub approval_policy: AskForApproval,
    /// What commands and patches may touch (read-only in Plan mode).
    pub sandbox: SandboxPolicy,
    /// The guardian, when approval questions go to it instead of the user
    /// (`approvalsReviewer: auto_review`, docs/protocol.md §9.8).
    pub reviewer: Option<std::sync::Arc<crate::guardian::Guardian>>,
    /// The turn's ghost snapshot, which mutating calls wait for (none where no snapshot is
    /// taken: an ephemeral thread, a read-only turn, `[snapshots] enabled = false`).
    pub ghost: Option<std::sync::Arc<crate::task::GhostSnapshotTask>>,
}

impl ToolTurn {
    /// Puts an approval question to the guardian when the thread has one (docs/protocol.md
    /// §9.8); `None` when approvals go to the user.
    pub async fn guardian_review(
        &self,
        request: crate::guardian::ReviewRequest,
    ) -> Option<crate::guardian::Verdict> {
        let guardian = self.reviewer.as_ref()?;
        let site = crate::guardian::ReviewSite {
            sink: &self.sink,
            thread_id: &self.thread_id,
            turn_id: &self.turn_id,
            cancel: &self.cancel,
        };
        Some(guardian.review(site, request).await)
    }

    /// `item/started` for an item of this turn.
    pub async fn item_started(&self, item: ThreadItem) {
        let turn_id = self.turn_id.clone();
        self.sink
            .emit(&self.thread_id, ThreadEvent::ItemStarted { turn_id, item })
            .await;
    }

    /// `item/completed` for an item of this turn.
    pub async fn item_completed(&self, item: ThreadItem) {
        let turn_id = self.turn_id.clone();
        self.sink
            .emit(
                &self.thread_id,
                ThreadEvent::ItemCompleted { turn_id, item },
            )
            .await;
    }
}
