//! Runtime-level tests of the tools: items, deltas, approvals and the sandbox, against a sink
//! that records events and answers approval requests from a script.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use weft_protocol::{
    AskForApproval, CommandExecutionSource, CommandExecutionStatus, DynamicToolCallParams,
    PatchApplyStatus, SandboxPolicy, ThreadActiveFlag, ThreadId, ThreadItemDetails, ThreadStatus,
    TurnId,
};

use super::context::{ToolCall, ToolInput, ToolTurn};
use super::offer::ToolOffer;
use super::runtime::ToolRuntime;
use super::{COMMAND_REJECTED, PATCH_REJECTED};
use crate::events::{EventSink, ServerRequestOutcome, ServerRequestParams, ThreadEvent};
use crate::model::{ResponseItem, ToolOutput};

mod approvals;
mod commands;
mod dispatch;
mod patches;
mod plan;

/// What the sink saw, in order: events and requests.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub(super) enum Seen {
    Event(ThreadEvent),
    Request(ServerRequestParams),
}

/// The tools' tests' sink (the dynamic and goal tools' tests too): records every event and
/// request, answers requests from a script and cancels those past its end.
#[derive(Default)]
pub(super) struct ScriptedSink {
    seen: Mutex<Vec<Seen>>,
    answers: Mutex<VecDeque<Option<ServerRequestOutcome>>>,
}

impl ScriptedSink {
    pub(super) fn answer(&self, outcome: ServerRequestOutcome) {
        self.answers.lock().push_back(Some(outcome));
    }

    /// The next request never gets an answer.
    pub(super) fn never_answer(&self) {
        self.answers.lock().push_back(None);
    }

    pub(super) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().clone()
    }

    pub(super) fn events(&self) -> Vec<ThreadEvent> {
        self.seen()
            .into_iter()
            .filter_map(|s| match s {
                Seen::Event(event) => Some(event),
                Seen::Request(_) => None,
            })
            .collect()
    }

    /// The items started and completed, in order.
    pub(super) fn items(&self) -> Vec<ThreadItemDetails> {
        self.events()
            .into_iter()
            .filter_map(|event| match event {
                ThreadEvent::ItemStarted { item, .. } | ThreadEvent::ItemCompleted { item, .. } => {
                    Some(item.details)
                }
                _ => None,
            })
            .collect()
    }

    /// The dynamic tool calls asked of the client.
    pub(super) fn dynamic_requests(&self) -> Vec<DynamicToolCallParams> {
        self.seen()
            .into_iter()
            .filter_map(|s| match s {
                Seen::Request(ServerRequestParams::DynamicToolCall(params)) => Some(params),
                _ => None,
            })
            .collect()
    }

    pub(super) fn requests(&self) -> usize {
        self.seen()
            .iter()
            .filter(|s| matches!(s, Seen::Request(_)))
            .count()
    }

    pub(super) fn completed(&self) -> Vec<ThreadItemDetails> {
        self.seen()
            .into_iter()
            .filter_map(|s| match s {
                Seen::Event(ThreadEvent::ItemCompleted { item, .. }) => Some(item.details),
                _ => None,
            })
            .collect()
    }

    pub(super) fn labels(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| match s {
                Seen::Request(ServerRequestParams::CommandApproval(_)) => {
                    "request:command".to_string()
                }
                Seen::Request(ServerRequestParams::FileChangeApproval(_)) => {
                    "request:fileChange".to_string()
                }
                Seen::Request(ServerRequestParams::DynamicToolCall(_)) => {
                    "request:dynamicTool".to_string()
                }
                Seen::Request(ServerRequestParams::UserInput(_)) => "request:userInput".to_string(),
                Seen::Request(ServerRequestParams::McpElicitation(_)) => {
                    "request:mcpElicitation".to_string()
                }
                Seen::Event(event) => match event {
                    ThreadEvent::StatusChanged(ThreadStatus::Active { active_flags }) => {
                        if active_flags.contains(&ThreadActiveFlag::WaitingOnApproval) {
                            "status:waiting".to_string()
                        } else {
                            "status:active".to_string()
                        }
                    }
                    ThreadEvent::ItemStarted { item, .. } => {
                        format!("started:{}", item.item_type())
                    }
                    ThreadEvent::ItemCompleted { item, .. } => {
                        format!("completed:{}", item.item_type())
                    }
                    ThreadEvent::CommandOutputDelta { .. } => "delta".to_string(),
                    ThreadEvent::TurnDiffUpdated { .. } => "diff".to_string(),
                    ThreadEvent::PlanUpdated { .. } => "plan".to_string(),
                    other => format!("{other:?}"),
                },
            })
            .collect()
    }
}

impl EventSink for ScriptedSink {
    fn emit<'a>(&'a self, _thread: &'a ThreadId, event: ThreadEvent) -> BoxFuture<'a, ()> {
        self.seen.lock().push(Seen::Event(event));
        Box::pin(async {})
    }

    fn request<'a>(
        &'a self,
        _thread: &'a ThreadId,
        params: ServerRequestParams,
    ) -> BoxFuture<'a, ServerRequestOutcome> {
        self.seen.lock().push(Seen::Request(params));
        let answer = self.answers.lock().pop_front();
        Box::pin(async move {
            match answer {
                Some(Some(outcome)) => outcome,
                Some(None) => futures::future::pending().await,
                None => ServerRequestOutcome::Cancelled,
            }
        })
    }
}

struct Fixture {
    runtime: Arc<ToolRuntime>,
    sink: Arc<ScriptedSink>,
    dir: tempfile::TempDir,
    cancel: CancellationToken,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            runtime: ToolRuntime::new(),
            sink: Arc::new(ScriptedSink::default()),
            dir: tempfile::tempdir().unwrap(),
            cancel: CancellationToken::new(),
        }
    }

    fn cwd(&self) -> &Path {
        self.dir.path()
    }

    fn turn(&self, policy: AskForApproval, sandbox: SandboxPolicy) -> ToolTurn {
        ToolTurn {
            cwd: self.dir.path().to_path_buf(),
            approval_policy: policy,
            sandbox,
            ..plain_turn(self.sink.clone(), "turn", self.cancel.clone())
        }
    }

    /// Run one call with the built-in tools only.
    fn handle(
        &self,
        call: ToolCall,
        turn: &ToolTurn,
    ) -> impl std::future::Future<Output = ResponseItem> + 'static {
        let turn = turn.clone();
        self.runtime
            .tool_set(&ToolOffer::default(), &turn)
            .handle(call, turn)
    }

    /// What the model is shown with the built-in tools only.
    fn specs(&self, turn: &ToolTurn) -> Vec<Value> {
        self.runtime.tool_set(&ToolOffer::default(), turn).specs()
    }

    async fn call(&self, turn: &ToolTurn, id: &str, name: &str, args: Value) -> String {
        let call = tool_call(id, name, ToolInput::Function(args.to_string()));
        output_text(self.handle(call, turn).await)
    }

    async fn custom(&self, turn: &ToolTurn, id: &str, name: &str, input: &str) -> String {
        let call = tool_call(id, name, ToolInput::Custom(input.to_string()));
        output_text(self.handle(call, turn).await)
    }

    /// `exec_command` of `cmd` ([`exec_args`]).
    async fn exec(&self, turn: &ToolTurn, id: &str, cmd: &str) -> String {
        output_text(self.handle(exec_call(id, cmd), turn).await)
    }

    /// `apply_patch` of `patch` (function-style arguments).
    async fn patch(&self, turn: &ToolTurn, id: &str, patch: &str) -> String {
        self.call(turn, id, "apply_patch", json!({ "input": patch }))
            .await
    }
}

/// A call of a built-in tool (no namespace).
pub(super) fn tool_call(id: &str, name: &str, input: ToolInput) -> ToolCall {
    ToolCall {
        call_id: id.to_string(),
        name: name.to_string(),
        namespace: None,
        input,
    }
}

/// An `exec_command` call of `cmd`.
fn exec_call(id: &str, cmd: &str) -> ToolCall {
    tool_call(
        id,
        "exec_command",
        ToolInput::Function(exec_args(cmd).to_string()),
    )
}

/// Turn `turn_id` of thread `thread`, reporting to `sink`: never asks, full access, in the
/// temporary directory.
pub(super) fn plain_turn(
    sink: Arc<ScriptedSink>,
    turn_id: &str,
    cancel: CancellationToken,
) -> ToolTurn {
    ToolTurn {
        thread_id: ThreadId::from("thread"),
        turn_id: TurnId::from(turn_id),
        sink,
        cancel,
        cwd: std::env::temp_dir(),
        approval_policy: AskForApproval::Never,
        sandbox: SandboxPolicy::DangerFullAccess,
        reviewer: None,
        ghost: None,
    }
}

fn output_text(item: ResponseItem) -> String {
    match item {
        ResponseItem::FunctionCallOutput { output, .. }
        | ResponseItem::CustomToolCallOutput { output, .. } => match output {
            ToolOutput::Text(text) => text,
            other => panic!("unexpected output {other:?}"),
        },
        other => panic!("not an output: {other:?}"),
    }
}

fn full_access() -> SandboxPolicy {
    SandboxPolicy::DangerFullAccess
}

fn workspace_write() -> SandboxPolicy {
    SandboxPolicy::WorkspaceWrite {
        writable_roots: Vec::new(),
        network_access: false,
        exclude_tmpdir_env_var: true,
        exclude_slash_tmp: true,
    }
}

fn exec_args(cmd: &str) -> Value {
    json!({"cmd": cmd, "shell": "/bin/bash", "login": false})
}

fn command(details: &ThreadItemDetails) -> &weft_protocol::CommandExecutionItem {
    match details {
        ThreadItemDetails::CommandExecution(item) => item,
        other => panic!("not a command: {other:?}"),
    }
}

fn file_change(details: &ThreadItemDetails) -> &weft_protocol::FileChangeItem {
    match details {
        ThreadItemDetails::FileChange(item) => item,
        other => panic!("not a file change: {other:?}"),
    }
}

fn accept(decision: &str) -> ServerRequestOutcome {
    ServerRequestOutcome::Answered(json!({ "decision": decision }))
}
