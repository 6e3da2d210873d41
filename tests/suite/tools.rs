//! Issue 4, tools that act on the machine: `exec_command` / `write_stdin`, `apply_patch`,
//! `update_plan`, approvals and the sandbox, end to end (the real daemon, the scripted mock
//! model). See `docs/architecture.md` §8 and `docs/protocol.md` §6.5, §8 and §9; the orders
//! follow the reference's `tool*`, `patch_approval`, `steer_tool` and `interrupt_exec`
//! scenarios.
//!
//! Every test runs its commands in a fresh workspace (`$WEFT_HOME/ws`) and ends with
//! [`finish`]: the daemon is stopped with SIGTERM (which ends every command session) and no
//! process may be left with its working directory in the workspace.

mod approvals;
mod dynamic;
mod exec;
mod patch;
mod plan;
mod running;
mod sandbox;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use weft_mock_model::{RecordedRequest, Reply};
use weft_test_support::{Client, Transport};

pub use crate::turns::{
    Harness, TurnRun, label, read_through, read_through_turn_completed, read_through_turn_ending,
    str_at,
};

/// A harness (Responses API mock) plus the workspace the thread runs in.
pub struct Tools {
    /// Mock, daemon, first client.
    pub h: Harness,
    /// The thread's cwd (`$WEFT_HOME/ws`, canonical).
    pub ws: PathBuf,
}

impl Tools {
    /// Start the daemon on `transport` with a fresh workspace.
    pub async fn start(transport: Transport) -> Tools {
        let h = Harness::responses(transport).await;
        let ws = h.home.path().join("ws");
        std::fs::create_dir_all(&ws).expect("create the workspace");
        let ws = std::fs::canonicalize(&ws).expect("canonical workspace");
        Tools { h, ws }
    }

    /// `thread/start` in the workspace with this approval policy and sandbox mode.
    pub async fn thread(&mut self, approval: &str, sandbox: &str) -> String {
        let cwd = self.ws.display().to_string();
        start_thread(&mut self.h.client, &cwd, approval, sandbox).await
    }

    /// A new thread with this approval policy and sandbox mode, and one turn on it with
    /// `text`, which must complete.
    pub async fn completed_turn(&mut self, approval: &str, sandbox: &str, text: &str) -> TurnRun {
        let thread = self.thread(approval, sandbox).await;
        let run = self.h.run_turn(&thread, text).await;
        assert_eq!(run.completed_turn()["status"], "completed");
        run
    }

    /// A path in the workspace.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.ws.join(relative)
    }

    /// Check that `value` (a `commandExecution` item, a command approval request's params)
    /// shows the shell running `script` in the workspace.
    pub fn assert_command(&self, value: &Value, script: &str) {
        assert_eq!(value["cwd"], self.ws.display().to_string(), "{value}");
        let command = value["command"].as_str().expect("a command line");
        assert!(command.ends_with(&format!("'{script}'")), "{value}");
    }

    /// The text of the workspace file at `relative`, which must exist.
    pub fn read(&self, relative: &str) -> String {
        let path = self.path(relative);
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
    }

    /// Write the workspace file at `relative`.
    pub fn write(&self, relative: &str, contents: &str) {
        std::fs::write(self.path(relative), contents).expect("write a workspace file");
    }

    /// Queue a mock reply.
    pub fn push(&self, reply: Reply) {
        self.h.push(reply);
    }

    /// Queue a mock reply running the shell `script` through `exec_command`.
    pub fn push_command(&self, call_id: &str, script: &str) {
        self.push(exec_call(call_id, cmd(script)));
    }

    /// A new `never` thread under `sandbox` and a turn on it in which the model applies
    /// `patch` (call `call_id`) and then says `answer`; the turn must complete.
    pub async fn patch_turn(
        &mut self,
        sandbox: &str,
        call_id: &str,
        patch: &str,
        answer: &str,
    ) -> TurnRun {
        self.push(patch_call(call_id, patch));
        self.push(Reply::new().text(answer));
        self.completed_turn("never", sandbox, "apply the patch")
            .await
    }

    /// `turn/start` on `thread` with `text`, and the turn's first `method` approval request.
    pub async fn turn_asking(&mut self, thread: &str, text: &str, method: &str) -> Value {
        self.h.start_turn(thread, text).await;
        wait_request(&mut self.h.client, method).await
    }

    /// Answer the approval `request` with `decision`; then every message through the end of
    /// the turn, which must end `status`.
    pub async fn decide(&mut self, request: &Value, decision: &str, status: &str) -> Vec<Value> {
        answer(&mut self.h.client, request, json!({"decision": decision})).await;
        read_through_turn_ending(&mut self.h.client, status).await
    }

    /// Stop the daemon and check that nothing it started is still running.
    pub async fn finish(self) {
        finish(self.h, &self.ws).await;
    }
}

/// `thread/start` with an approval policy and sandbox mode; waits for `thread/started`.
pub async fn start_thread(client: &mut Client, cwd: &str, approval: &str, sandbox: &str) -> String {
    let result = client
        .request(
            "thread/start",
            json!({"cwd": cwd, "approvalPolicy": approval, "sandbox": sandbox}),
        )
        .await
        .unwrap_or_else(|err| panic!("thread/start failed: {err}"));
    let thread_id = str_at(&result, "/thread/id");
    client
        .wait_for("this thread's `thread/started`", |m| {
            m["method"] == "thread/started" && m["params"]["thread"]["id"] == thread_id.as_str()
        })
        .await;
    thread_id
}

/// SIGTERM the daemon, wait for it, and check that no process is left running in `ws`.
pub async fn finish(mut h: Harness, ws: &Path) {
    h.daemon.sigterm();
    h.daemon.wait_exit().await;
    let left = processes_in(ws);
    assert!(
        left.is_empty(),
        "processes left running in {}: {left:?}",
        ws.display()
    );
}

/// The pids (and command lines) of live processes whose cwd is `dir` or below.
pub fn processes_in(dir: &Path) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if !cwd.starts_with(dir) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X");
        if zombie {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        found.push((pid, cmdline));
    }
    found
}

/// A fresh directory that a `workspace-write` sandbox must not let a command write to: not
/// under `/tmp` or `$TMPDIR` (both writable under that policy) nor under the workspace, which
/// the test's target directory may be (a clone under /tmp). `/var/tmp`, else `$HOME`.
pub fn outside_dir() -> tempfile::TempDir {
    let tmpdir = std::env::var_os("TMPDIR").map(PathBuf::from);
    let bases = [
        Some(PathBuf::from("/var/tmp")),
        std::env::var_os("HOME").map(PathBuf::from),
    ];
    for base in bases.into_iter().flatten() {
        let allowed =
            base.starts_with("/tmp") || tmpdir.as_ref().is_some_and(|t| base.starts_with(t));
        if !allowed
            && base.is_dir()
            && let Ok(dir) = tempfile::Builder::new()
                .prefix("weft-outside-")
                .tempdir_in(&base)
        {
            return dir;
        }
    }
    panic!("no directory outside /tmp and $TMPDIR to test the sandbox with");
}

/// A path `name` in a fresh [`outside_dir`], with the directory (which removes it when
/// dropped).
pub fn outside_file(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = outside_dir();
    let path = dir.path().join(name);
    (dir, path)
}

/// A mock reply calling `exec_command` with these arguments.
pub fn exec_call(call_id: &str, args: Value) -> Reply {
    Reply::new().function_call(call_id, "exec_command", args.to_string())
}

/// A mock reply calling `write_stdin`: `chars` to the command session `session` (its id as
/// the item's `processId` shows it), waiting up to five seconds for its output.
pub fn write_stdin_call(call_id: &str, session: &str, chars: &str) -> Reply {
    let session: u64 = session.parse().expect("a numeric session id");
    let args = json!({"session_id": session, "chars": chars, "yield_time_ms": 5000});
    Reply::new().function_call(call_id, "write_stdin", args.to_string())
}

/// `{"cmd": cmd}`.
pub fn cmd(script: &str) -> Value {
    json!({ "cmd": script })
}

/// A mock reply calling `apply_patch` (function variant).
pub fn patch_call(call_id: &str, patch: &str) -> Reply {
    Reply::new().function_call(
        call_id,
        "apply_patch",
        json!({ "input": patch }).to_string(),
    )
}

/// The text output the model got for `call_id` in `request`.
pub fn output_of(request: &RecordedRequest, call_id: &str) -> String {
    match request.tool_output(call_id) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => panic!(
            "no output for {call_id} in the request: {}",
            serde_json::to_string_pretty(request.input()).unwrap_or_default()
        ),
    }
}

/// The position of the first input item matching `pred` in a Responses request.
pub fn input_position(request: &RecordedRequest, pred: impl Fn(&Value) -> bool) -> Option<usize> {
    request.input().iter().position(pred)
}

/// The `item/started` or `item/completed` notification of item `id`.
pub fn item_event<'a>(messages: &'a [Value], method: &str, id: &str) -> &'a Value {
    messages
        .iter()
        .find(|m| m["method"] == method && m["params"]["item"]["id"] == id)
        .unwrap_or_else(|| {
            let labels: Vec<String> = messages.iter().map(label).collect();
            panic!("no {method} for {id}: {labels:?}")
        })
}

/// The completed item `id`.
pub fn completed_item<'a>(messages: &'a [Value], id: &str) -> &'a Value {
    &item_event(messages, "item/completed", id)["params"]["item"]
}

/// The status of the completed item `id`.
pub fn item_status<'a>(messages: &'a [Value], id: &str) -> &'a Value {
    &completed_item(messages, id)["status"]
}

/// The index of the first message matching `pred`.
pub fn position(messages: &[Value], what: &str, pred: impl Fn(&Value) -> bool) -> usize {
    messages.iter().position(pred).unwrap_or_else(|| {
        let labels: Vec<String> = messages.iter().map(label).collect();
        panic!("no {what}: {labels:?}")
    })
}

/// A model reply calling a namespaced tool (the Responses API's `namespace` member).
pub fn namespaced_call(call_id: &str, namespace: &str, name: &str, arguments: &str) -> Reply {
    let item = json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
                      "namespace": namespace, "name": name, "arguments": arguments,
                      "status": "completed"});
    Reply::new()
        .raw_event(
            json!({"type": "response.output_item.added", "output_index": 0,
                          "item": item.clone()}),
        )
        .raw_event(
            json!({"type": "response.output_item.done", "output_index": 0,
                          "item": item}),
        )
}

/// Answer a server request with this result.
pub async fn answer(client: &mut Client, request: &Value, result: Value) {
    client
        .send_json(json!({"id": request["id"].clone(), "result": result}))
        .await;
}

/// Wait for the next server request with this method.
pub async fn wait_request(client: &mut Client, method: &str) -> Value {
    client
        .wait_for(&format!("a `{method}` request"), |m| {
            m["method"] == method && m.get("id").is_some()
        })
        .await
}

/// Whether the model's view of a command says the sandbox could not be set up on this kernel
/// (no Landlock): then the sandbox tests check the refusal instead.
pub fn sandbox_unavailable(output: &str) -> bool {
    let unavailable = output.contains("sandbox unavailable");
    if unavailable {
        eprintln!("note: this kernel cannot sandbox commands; checking the refusal instead");
    }
    unavailable
}
