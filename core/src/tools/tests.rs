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
    AskForApproval, CommandExecutionSource, CommandExecutionStatus, PatchApplyStatus,
    SandboxPolicy, ThreadActiveFlag, ThreadId, ThreadItemDetails, ThreadStatus, TurnId,
};

use super::context::{ToolCall, ToolInput, ToolTurn};
use super::runtime::ToolRuntime;
use super::{COMMAND_REJECTED, PATCH_REJECTED};
use crate::events::{EventSink, ServerRequestOutcome, ServerRequestParams, ThreadEvent};
use crate::model::{ResponseItem, ToolOutput};

/// What the sink saw, in order: events and requests.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
enum Seen {
    Event(ThreadEvent),
    Request(ServerRequestParams),
}

#[derive(Default)]
struct ScriptedSink {
    seen: Mutex<Vec<Seen>>,
    answers: Mutex<VecDeque<Option<ServerRequestOutcome>>>,
}

impl ScriptedSink {
    fn answer(&self, outcome: ServerRequestOutcome) {
        self.answers.lock().push_back(Some(outcome));
    }

    /// The next request never gets an answer.
    fn never_answer(&self) {
        self.answers.lock().push_back(None);
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().clone()
    }

    fn requests(&self) -> usize {
        self.seen()
            .iter()
            .filter(|s| matches!(s, Seen::Request(_)))
            .count()
    }

    fn completed(&self) -> Vec<ThreadItemDetails> {
        self.seen()
            .into_iter()
            .filter_map(|s| match s {
                Seen::Event(ThreadEvent::ItemCompleted { item, .. }) => Some(item.details),
                _ => None,
            })
            .collect()
    }

    fn labels(&self) -> Vec<String> {
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
            thread_id: ThreadId::from("thread".to_string()),
            turn_id: TurnId::from("turn".to_string()),
            sink: self.sink.clone(),
            cancel: self.cancel.clone(),
            cwd: self.dir.path().to_path_buf(),
            approval_policy: policy,
            sandbox,
            dynamic_tools: Default::default(),
            plan_mode: false,
            user_input: false,
            mcp: crate::mcp::McpPool::empty(),
            goals: Default::default(),
            agents: None,
        }
    }

    async fn call(&self, turn: &ToolTurn, id: &str, name: &str, args: Value) -> String {
        let call = ToolCall {
            call_id: id.to_string(),
            name: name.to_string(),
            namespace: None,
            input: ToolInput::Function(args.to_string()),
        };
        output_text(self.runtime.clone().handle(call, turn.clone()).await)
    }

    async fn custom(&self, turn: &ToolTurn, id: &str, name: &str, input: &str) -> String {
        let call = ToolCall {
            call_id: id.to_string(),
            name: name.to_string(),
            namespace: None,
            input: ToolInput::Custom(input.to_string()),
        };
        output_text(self.runtime.clone().handle(call, turn.clone()).await)
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

#[tokio::test]
async fn exec_command_streams_and_completes() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let text = f
        .call(&turn, "c1", "exec_command", exec_args("echo hi"))
        .await;
    assert!(text.contains("Process exited with code 0\n"), "{text}");
    assert!(text.ends_with("Output:\nhi\n"), "{text}");
    assert_eq!(
        f.sink.labels(),
        [
            "started:commandExecution",
            "delta",
            "completed:commandExecution"
        ]
    );
    let completed = f.sink.completed();
    let item = command(&completed[0]);
    assert_eq!(item.id.as_str(), "c1");
    assert_eq!(item.status, CommandExecutionStatus::Completed);
    assert_eq!(item.exit_code, Some(0));
    assert_eq!(item.aggregated_output.as_deref(), Some("hi\n"));
    assert_eq!(item.source, CommandExecutionSource::UnifiedExecStartup);
    assert_eq!(item.command, "/bin/bash -c 'echo hi'");
    assert!(item.duration_ms.is_some());
    f.runtime.shutdown().await;
}

#[tokio::test]
async fn a_failing_command_fails_its_item() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let text = f
        .call(&turn, "c1", "exec_command", exec_args("exit 3"))
        .await;
    assert!(text.contains("Process exited with code 3\n"), "{text}");
    let completed = f.sink.completed();
    assert_eq!(
        command(&completed[0]).status,
        CommandExecutionStatus::Failed
    );
    assert_eq!(command(&completed[0]).exit_code, Some(3));
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    assert_eq!(
        f.call(&turn, "c1", "nope", json!({})).await,
        "unsupported call: nope"
    );
    assert_eq!(
        f.custom(&turn, "c2", "nope", "x").await,
        "unsupported custom tool call: nope"
    );
    let text = f.call(&turn, "c3", "exec_command", json!({"cmd": 1})).await;
    assert!(
        text.starts_with("failed to parse function arguments:"),
        "{text}"
    );
    let text = f.call(&turn, "c4", "apply_patch", json!({})).await;
    assert!(
        text.starts_with("failed to parse function arguments:"),
        "{text}"
    );
    assert!(f.sink.labels().is_empty(), "{:?}", f.sink.labels());
}

#[tokio::test]
async fn background_sessions_and_write_stdin() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let mut args = exec_args("read line; echo \"got $line\"");
    args["yield_time_ms"] = json!(250);
    let text = f.call(&turn, "c1", "exec_command", args).await;
    assert!(
        text.contains("Process running with session ID 1\n"),
        "{text}"
    );
    let completed = f.sink.completed();
    let item = command(&completed[0]);
    assert_eq!(item.status, CommandExecutionStatus::Completed);
    assert_eq!(item.exit_code, None);
    assert_eq!(item.process_id.as_deref(), Some("1"));

    let text = f
        .call(
            &turn,
            "c2",
            "write_stdin",
            json!({"session_id": 1, "chars": "hello\n", "yield_time_ms": 5000}),
        )
        .await;
    assert!(text.contains("Process exited with code 0\n"), "{text}");
    assert!(text.ends_with("got hello\n"), "{text}");
    let completed = f.sink.completed();
    let item = command(&completed[1]);
    assert_eq!(item.id.as_str(), "c2");
    assert_eq!(item.source, CommandExecutionSource::UnifiedExecInteraction);
    assert_eq!(item.process_id.as_deref(), Some("1"));
    assert_eq!(item.aggregated_output.as_deref(), Some("got hello\n"));
    assert_eq!(item.exit_code, Some(0));

    // The session is gone: no item, the model is told.
    let before = f.sink.seen().len();
    let text = f
        .call(&turn, "c3", "write_stdin", json!({"session_id": 1}))
        .await;
    assert!(text.contains("Unknown session ID 1"), "{text}");
    assert_eq!(f.sink.seen().len(), before);
}

#[tokio::test]
async fn interrupting_a_command_fails_its_item() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let cancel = f.cancel.clone();
    let runtime = f.runtime.clone();
    let call = ToolCall {
        call_id: "c1".into(),
        name: "exec_command".into(),
        namespace: None,
        input: ToolInput::Function(exec_args("echo started; sleep 30").to_string()),
    };
    let task = tokio::spawn(runtime.handle(call, turn.clone()));
    // Wait for the first output, then interrupt.
    for _ in 0..200 {
        if f.sink.labels().contains(&"delta".to_string()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let interrupted = std::time::Instant::now();
    cancel.cancel();
    let text = output_text(
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .unwrap()
            .unwrap(),
    );
    assert!(interrupted.elapsed() < Duration::from_secs(1));
    assert!(text.ends_with("\naborted by user"), "{text}");
    assert!(text.starts_with("Wall time: "), "{text}");
    let completed = f.sink.completed();
    let item = command(&completed[0]);
    assert_eq!(item.status, CommandExecutionStatus::Failed);
    assert_eq!(item.aggregated_output.as_deref(), Some("started\n"));
    assert!(f.runtime.exec.pids().is_empty());
}

#[tokio::test]
async fn untrusted_asks_before_writing_commands() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Untrusted, full_access());
    // A read-only command runs without asking.
    f.call(&turn, "c0", "exec_command", exec_args("ls")).await;
    assert_eq!(f.sink.requests(), 0);

    f.sink.answer(accept("accept"));
    let text = f
        .call(
            &turn,
            "c1",
            "exec_command",
            exec_args("touch made && echo created"),
        )
        .await;
    assert!(text.ends_with("created\n"), "{text}");
    assert!(f.cwd().join("made").exists());
    let labels = f.sink.labels();
    assert_eq!(
        labels[2..],
        [
            "status:waiting",
            "started:commandExecution",
            "request:command",
            "status:active",
            "delta",
            "completed:commandExecution"
        ],
        "{labels:?}"
    );
    let Seen::Request(ServerRequestParams::CommandApproval(params)) = &f.sink.seen()[4] else {
        panic!("no request");
    };
    assert_eq!(params.item_id.as_str(), "c1");
    assert_eq!(
        params.command.as_deref(),
        Some("/bin/bash -c 'touch made && echo created'")
    );
    assert_eq!(params.environment_id.as_deref(), Some("local"));
}

#[tokio::test]
async fn declined_cancelled_and_failed_approvals() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Untrusted, full_access());
    f.sink.answer(accept("decline"));
    let text = f
        .call(&turn, "c1", "exec_command", exec_args("touch declined"))
        .await;
    assert_eq!(text, COMMAND_REJECTED);
    assert!(!f.cwd().join("declined").exists());
    assert_eq!(
        command(&f.sink.completed()[0]).status,
        CommandExecutionStatus::Declined
    );
    assert_eq!(
        f.sink.labels(),
        [
            "status:waiting",
            "started:commandExecution",
            "request:command",
            "completed:commandExecution",
            "status:active"
        ]
    );
    assert!(!f.cancel.is_cancelled());

    f.sink
        .answer(ServerRequestOutcome::Failed("client error".into()));
    let text = f
        .call(&turn, "c2", "exec_command", exec_args("touch failed"))
        .await;
    assert!(
        text.contains("approval request failed (client error)"),
        "{text}"
    );
    assert_eq!(
        command(&f.sink.completed()[1]).status,
        CommandExecutionStatus::Failed
    );
    f.sink
        .answer(ServerRequestOutcome::Answered(json!({"decision": "maybe"})));
    let text = f
        .call(&turn, "c3", "exec_command", exec_args("touch failed"))
        .await;
    assert!(text.contains("unparsable approval response"), "{text}");
    assert!(!f.cwd().join("failed").exists());
    assert!(!f.cancel.is_cancelled());

    f.sink.answer(accept("cancel"));
    let text = f
        .call(&turn, "c4", "exec_command", exec_args("touch cancelled"))
        .await;
    assert_eq!(text, COMMAND_REJECTED);
    assert!(f.cancel.is_cancelled());
    assert_eq!(
        command(&f.sink.completed()[3]).status,
        CommandExecutionStatus::Declined
    );
}

#[tokio::test]
async fn accept_for_session_is_remembered_for_that_command() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Untrusted, full_access());
    f.sink.answer(accept("acceptForSession"));
    f.call(&turn, "c1", "exec_command", exec_args("touch a"))
        .await;
    assert_eq!(f.sink.requests(), 1);
    f.call(&turn, "c2", "exec_command", exec_args("touch a"))
        .await;
    assert_eq!(f.sink.requests(), 1, "the same command does not ask again");
    f.sink.answer(accept("accept"));
    f.call(&turn, "c3", "exec_command", exec_args("touch b"))
        .await;
    assert_eq!(f.sink.requests(), 2, "another command asks");
    f.sink.answer(accept("accept"));
    f.call(&turn, "c4", "exec_command", exec_args("touch b"))
        .await;
    assert_eq!(f.sink.requests(), 3, "accept is for one run only");
}

#[tokio::test]
async fn an_interrupt_while_waiting_for_approval_withdraws_it() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Untrusted, full_access());
    f.sink.never_answer();
    let runtime = f.runtime.clone();
    let call = ToolCall {
        call_id: "c1".into(),
        name: "exec_command".into(),
        namespace: None,
        input: ToolInput::Function(exec_args("touch x").to_string()),
    };
    let task = tokio::spawn(runtime.handle(call, turn.clone()));
    for _ in 0..200 {
        if f.sink.requests() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    f.cancel.cancel();
    let text = output_text(
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .unwrap()
            .unwrap(),
    );
    assert_eq!(text, COMMAND_REJECTED);
    assert_eq!(
        command(&f.sink.completed()[0]).status,
        CommandExecutionStatus::Declined
    );
    assert_eq!(
        f.sink.labels().last().map(String::as_str),
        Some("status:active")
    );
}

#[tokio::test]
async fn on_request_escalation_asks_and_runs_unconfined() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escalated");
    let turn = f.turn(AskForApproval::OnRequest, workspace_write());
    let mut args = exec_args(&format!("touch {}", target.display()));
    // Sandboxed without asking: the write outside the workspace is denied (where the kernel can
    // sandbox), and the model is told how to escalate.
    let text = f.call(&turn, "c1", "exec_command", args.clone()).await;
    assert_eq!(f.sink.requests(), 0);
    assert!(!target.exists());
    if crate::sandbox::sandbox_support().landlock_abi.is_some() {
        assert!(
            text.contains("Warning: the command may have been blocked by the sandbox"),
            "{text}"
        );
        assert!(text.contains("require_escalated"), "{text}");
    } else {
        assert!(text.contains("sandbox unavailable"), "{text}");
    }
    args["sandbox_permissions"] = json!("require_escalated");
    args["justification"] = json!("needs to write outside");
    f.sink.answer(accept("accept"));
    let text = f.call(&turn, "c2", "exec_command", args).await;
    assert!(text.contains("Process exited with code 0"), "{text}");
    assert!(target.exists());
    let Seen::Request(ServerRequestParams::CommandApproval(params)) = f
        .sink
        .seen()
        .into_iter()
        .find(|s| matches!(s, Seen::Request(_)))
        .unwrap()
    else {
        panic!("no command request");
    };
    assert_eq!(params.reason.as_deref(), Some("needs to write outside"));
}

#[tokio::test]
async fn never_refuses_escalation() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, workspace_write());
    let mut args = exec_args("true");
    args["sandbox_permissions"] = json!("require_escalated");
    let text = f.call(&turn, "c1", "exec_command", args).await;
    assert!(text.contains("approval policy is `never`"), "{text}");
    assert!(f.sink.labels().is_empty());
}

const ADD_PATCH: &str = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n";

#[tokio::test]
async fn apply_patch_items_and_the_turn_diff() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, workspace_write());
    let text = f
        .call(&turn, "p1", "apply_patch", json!({"input": ADD_PATCH}))
        .await;
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value["output"],
        "Success. Updated the following files:\nA hello.txt\n"
    );
    assert_eq!(value["metadata"]["exit_code"], 0);
    assert_eq!(
        std::fs::read_to_string(f.cwd().join("hello.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        f.sink.labels(),
        ["started:fileChange", "completed:fileChange", "diff"]
    );
    let item = file_change(&f.sink.completed()[0]).clone();
    assert_eq!(item.status, PatchApplyStatus::Completed);
    assert_eq!(item.changes.len(), 1);
    assert_eq!(item.changes[0].diff, "hello\n");

    // A second patch (freeform) in the same turn: the diff covers both.
    let update = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello world\n*** Add File: b.txt\n+b\n*** End Patch";
    let text = f.custom(&turn, "p2", "apply_patch", update).await;
    assert!(
        text.starts_with("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA b.txt\nM hello.txt\n"),
        "{text}"
    );
    let diff = f
        .sink
        .seen()
        .into_iter()
        .rev()
        .find_map(|s| match s {
            Seen::Event(ThreadEvent::TurnDiffUpdated { diff, .. }) => Some(diff),
            _ => None,
        })
        .unwrap();
    assert!(diff.contains("diff --git a/b.txt b/b.txt"), "{diff}");
    assert!(
        diff.contains("diff --git a/hello.txt b/hello.txt"),
        "{diff}"
    );
    assert!(diff.contains("+hello world"), "{diff}");
}

#[tokio::test]
async fn a_patch_that_fails_verification_writes_nothing() {
    let f = Fixture::new();
    std::fs::write(f.cwd().join("a.txt"), "one\n").unwrap();
    let turn = f.turn(AskForApproval::Never, full_access());
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: a.txt\n@@\n-missing\n+y\n*** End Patch";
    let text = f
        .call(&turn, "p1", "apply_patch", json!({"input": patch}))
        .await;
    assert!(
        text.starts_with("apply_patch verification failed: Failed to find expected lines"),
        "{text}"
    );
    assert!(!f.cwd().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(f.cwd().join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(f.sink.labels().is_empty());
}

#[tokio::test]
async fn patches_outside_the_roots() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("out.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch",
        target.display()
    );
    // never: refused, nothing asked, nothing written.
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, workspace_write());
    let text = f
        .call(&turn, "p1", "apply_patch", json!({"input": patch}))
        .await;
    assert!(
        text.starts_with("patch rejected: writing outside of the sandbox's writable roots"),
        "{text}"
    );
    assert!(!target.exists());
    // on-request: asks; decline writes nothing; acceptForSession writes and is remembered.
    let turn = f.turn(AskForApproval::OnRequest, workspace_write());
    f.sink.answer(accept("decline"));
    let text = f
        .call(&turn, "p2", "apply_patch", json!({"input": patch}))
        .await;
    assert_eq!(text, PATCH_REJECTED);
    assert!(!target.exists());
    assert_eq!(
        f.sink.labels(),
        [
            "started:fileChange",
            "status:waiting",
            "request:fileChange",
            "status:active",
            "completed:fileChange"
        ]
    );
    assert_eq!(
        file_change(&f.sink.completed()[0]).status,
        PatchApplyStatus::Declined
    );
    f.sink.answer(accept("acceptForSession"));
    f.call(&turn, "p3", "apply_patch", json!({"input": patch}))
        .await;
    assert!(target.exists());
    assert_eq!(f.sink.requests(), 2);
    std::fs::remove_file(&target).unwrap();
    f.call(&turn, "p4", "apply_patch", json!({"input": patch}))
        .await;
    assert!(target.exists());
    assert_eq!(f.sink.requests(), 2, "approved for the session");
    // Inside the workspace nothing is asked under on-request.
    f.call(&turn, "p5", "apply_patch", json!({"input": ADD_PATCH}))
        .await;
    assert_eq!(f.sink.requests(), 2);
    // untrusted asks for every patch.
    let turn = f.turn(AskForApproval::Untrusted, workspace_write());
    f.sink.answer(accept("cancel"));
    let text = f
        .call(&turn, "p6", "apply_patch", json!({"input": ADD_PATCH}))
        .await;
    assert_eq!(text, PATCH_REJECTED);
    assert!(f.cancel.is_cancelled());
}

#[tokio::test]
async fn update_plan_reports_the_plan() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let text = f
        .call(
            &turn,
            "u1",
            "update_plan",
            json!({"explanation": "Start", "plan": [
                {"step": "Read", "status": "completed"},
                {"step": "Write", "status": "in_progress"}
            ]}),
        )
        .await;
    assert_eq!(text, "Plan updated");
    assert_eq!(f.sink.labels(), ["started:plan", "plan", "completed:plan"]);
    let plan = f
        .sink
        .seen()
        .into_iter()
        .find_map(|s| match s {
            Seen::Event(ThreadEvent::PlanUpdated {
                plan, explanation, ..
            }) => Some((plan, explanation)),
            _ => None,
        })
        .unwrap();
    assert_eq!(plan.1.as_deref(), Some("Start"));
    assert_eq!(plan.0.len(), 2);
    let text = f
        .call(&turn, "u2", "update_plan", json!({"plan": "nope"}))
        .await;
    assert!(
        text.starts_with("failed to parse function arguments"),
        "{text}"
    );
}

#[tokio::test]
async fn specs_offer_escalation_only_on_request() {
    let f = Fixture::new();
    let names = |turn: &ToolTurn| -> Vec<String> {
        f.runtime
            .specs(turn)
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    let never = f.turn(AskForApproval::Never, workspace_write());
    assert_eq!(
        names(&never),
        ["exec_command", "write_stdin", "apply_patch", "update_plan"]
    );
    let escalation = |turn: &ToolTurn| {
        f.runtime.specs(turn)[0]["parameters"]["properties"]
            .get("sandbox_permissions")
            .is_some()
    };
    assert!(!escalation(&never));
    assert!(escalation(
        &f.turn(AskForApproval::OnRequest, workspace_write())
    ));
}
