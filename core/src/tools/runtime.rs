//! The per-thread tool dispatcher: which tools a step advertises, and how one call runs.
//!
//! The turn loop starts [`ToolRuntime::handle`] as soon as the model's call item is complete
//! (not after the stream ends), keeps the futures in call order, and records their outputs in
//! that order once the response is over.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use weft_protocol::{AskForApproval, SandboxPolicy, ThreadId, TurnId};

use crate::events::SharedSink;
use crate::model::ResponseItem;

/// One tool call from the model.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The call id (also the id of the item it produces).
    pub call_id: String,
    /// The tool name.
    pub name: String,
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
                arguments,
                ..
            } => Some(ToolCall {
                call_id: call_id.clone(),
                name: name.clone(),
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
                input: ToolInput::Custom(input.clone()),
            }),
            _ => None,
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
    /// What commands and patches may touch.
    pub sandbox: SandboxPolicy,
}

/// The tools of one thread. Shared by its turns; state that outlives a turn (background
/// command sessions, approvals granted for the session) lives here.
#[derive(Debug, Default)]
pub struct ToolRuntime {}

impl ToolRuntime {
    /// A runtime for a new thread.
    pub fn new() -> Arc<ToolRuntime> {
        Arc::new(ToolRuntime::default())
    }

    /// The tool definitions a step advertises (Responses API format). None yet: tools that act
    /// on the machine arrive with their approvals and sandbox.
    pub fn specs(&self, _turn: &ToolTurn) -> Vec<serde_json::Value> {
        Vec::new()
    }

    /// Run one call and return the output item for the model.
    pub async fn handle(self: Arc<Self>, call: ToolCall, _turn: ToolTurn) -> ResponseItem {
        call.output(format!(
            "unsupported call: no tool named `{}` is available",
            call.name
        ))
    }

    /// End everything the thread's tools keep running (background command sessions).
    pub async fn shutdown(&self) {}
}
