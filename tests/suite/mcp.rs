//! Issue 13, MCP servers as tools (docs/mcp.md), end to end against real MCP servers that
//! nobody here wrote: the official Python SDK's FastMCP (`tests/mcp/servers/weft_test_server.py`)
//! over stdio and streamable HTTP, and `@modelcontextprotocol/server-everything`, both
//! installed by `tests/mcp/install.sh` from pinned lockfiles. Shapes and texts follow the
//! reference's `mcp_*` scenarios.

mod approvals;
mod calls;
mod client_methods;
mod limits;
mod oauth;
mod pool;
mod questions;
mod tool_names;
pub mod tool_search;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{RecordedRequest, Reply, WireApi};
use weft_test_support::mcp::toml_string;
use weft_test_support::{Client, Transport, mcp_servers};

use crate::agents::experimental_init;

pub use crate::tools::{
    answer, completed_item, item_event, namespaced_call, output_of, start_thread, wait_request,
};
pub use crate::turns::{Harness, Setup, read_through_turn_completed, str_at};

/// The method of a question to the client (a server's own, or an approval).
pub const ELICITATION: &str = "mcpServer/elicitation/request";

/// A daemon whose config has the FastMCP test server as `weft`, plus a workspace and the
/// server's events file (`start <pid>` per process, `cancelled slow`, …).
pub struct Mcp {
    /// Mock, daemon, first client.
    pub h: Harness,
    /// The threads' cwd.
    pub ws: PathBuf,
    /// The test server's `WEFT_TEST_EVENTS` file.
    pub events: PathBuf,
    /// Holds the events file (removed on drop).
    _scratch: tempfile::TempDir,
}

impl Mcp {
    /// Start with the test server's entry extended by `extra` TOML lines and `more` config.
    pub async fn start_with(transport: Transport, extra: &str, more: &str) -> Mcp {
        Mcp::start_on(transport, WireApi::Responses, extra, more).await
    }

    /// [`Mcp::start_with`] with `more` config and variables in the daemon's environment.
    pub async fn start_with_env(transport: Transport, more: &str, env: &[(&str, &str)]) -> Mcp {
        Mcp::start_full(transport, WireApi::Responses, "", more, env).await
    }

    /// [`Mcp::start_with`] on this wire API.
    pub async fn start_on(transport: Transport, wire_api: WireApi, extra: &str, more: &str) -> Mcp {
        Mcp::start_full(transport, wire_api, extra, more, &[]).await
    }

    /// The general form: wire API, the test server's extra lines, more config, daemon variables.
    pub async fn start_full(
        transport: Transport,
        wire_api: WireApi,
        extra: &str,
        more: &str,
        env: &[(&str, &str)],
    ) -> Mcp {
        let scratch = tempfile::tempdir().expect("scratch dir");
        let events = scratch.path().join("events.log");
        let server = mcp_servers().test_server_toml(
            "weft",
            &format!(
                "env = {{ WEFT_TEST_EVENTS = {} }}\n{extra}",
                toml_string(&events.display().to_string())
            ),
        );
        let mut setup = Setup::new(transport)
            .wire_api(wire_api)
            .init_params(experimental_init())
            .config(&server)
            .config(more);
        for (key, value) in env {
            setup = setup.daemon_env(key, value);
        }
        let h = Harness::start(setup).await;
        let ws = h.home.path().join("ws");
        std::fs::create_dir_all(&ws).expect("create the workspace");
        let ws = std::fs::canonicalize(&ws).expect("canonical workspace");
        Mcp {
            h,
            ws,
            events,
            _scratch: scratch,
        }
    }

    /// Start with the test server as configured by default (`auto` approvals).
    pub async fn start(transport: Transport) -> Mcp {
        Mcp::start_with(transport, "", "").await
    }

    /// `thread/start` with this approval policy (read-only sandbox), then wait until the
    /// thread was told the `weft` server is ready.
    pub async fn thread(&mut self, approval: &str) -> String {
        let cwd = self.ws.display().to_string();
        let thread = start_thread(&mut self.h.client, &cwd, approval, "read-only").await;
        wait_startup(&mut self.h.client, &thread, "weft", "ready").await;
        thread
    }

    /// `thread/start` with approvals `never` (read-only sandbox), without waiting for any
    /// server; then `server`'s `failed` status for it. The thread and that notification.
    pub async fn thread_failing(&mut self, server: &str) -> (String, Value) {
        let cwd = self.ws.display().to_string();
        let thread = start_thread(&mut self.h.client, &cwd, "never", "read-only").await;
        let failed = wait_startup(&mut self.h.client, &thread, server, "failed").await;
        (thread, failed)
    }

    /// Queue a mock reply.
    pub fn push(&self, reply: Reply) {
        self.h.push(reply);
    }

    /// Queue a turn's model replies: `calls`, one a reply, then the text `then`.
    pub fn script(&self, calls: impl IntoIterator<Item = Reply>, then: &str) {
        for reply in calls {
            self.push(reply);
        }
        self.push(Reply::new().text(then));
    }

    /// `turn/start` of `text` on `thread`, then every message through its `turn/completed`.
    pub async fn turn(&mut self, thread: &str, text: &str) -> Vec<Value> {
        self.h.start_turn(thread, text).await;
        read_through_turn_completed(&mut self.h.client).await
    }

    /// A [`thread`](Mcp::thread) under `approval` with one [`turn`](Mcp::turn) of `text`:
    /// the thread and the turn's messages.
    pub async fn thread_turn(&mut self, approval: &str, text: &str) -> (String, Vec<Value>) {
        let thread = self.thread(approval).await;
        let messages = self.turn(&thread, text).await;
        (thread, messages)
    }

    /// The lines of the events file.
    pub fn event_lines(&self) -> Vec<String> {
        event_lines(&self.events)
    }

    /// How many server processes were started.
    pub fn starts(&self) -> usize {
        self.event_lines()
            .iter()
            .filter(|line| line.starts_with("start "))
            .count()
    }
}

/// The lines of a test server's events file (none before it exists).
pub fn event_lines(events: &Path) -> Vec<String> {
    std::fs::read_to_string(events)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Poll `check` (every 100 ms, for ten seconds) until it holds; panics naming `what`.
pub async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..100 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting until {what}");
}

/// Run a Python MCP test server `script` over streamable HTTP (`--http 0` and `args`, with
/// `env`): the URL it says it listens on (its stderr line `<script stem>: listening on URL`),
/// and its process (killed on drop; the rest of its stderr is drained).
pub async fn serve_http(
    script: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
) -> (String, tokio::process::Child) {
    use tokio::io::AsyncBufReadExt;
    let mut command = tokio::process::Command::new(&mcp_servers().python);
    command.arg(script).args(["--http", "0"]).args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|err| panic!("start {} over HTTP: {err}", script.display()));
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let stem = script.file_stem().unwrap_or_default().to_string_lossy();
    let listening = format!("{stem}: listening on ");
    let mut url = None;
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(rest) = line.strip_prefix(&listening) {
            url = Some(rest.trim().to_string());
            break;
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (url.expect("the HTTP server's address"), child)
}

/// Answer a question to the client ([`ELICITATION`]) with `action`, no content, no `_meta`.
pub async fn answer_with(client: &mut Client, request: &Value, action: &str) {
    let result = json!({"action": action, "content": null, "_meta": null});
    answer(client, request, result).await;
}

/// `mcpServerStatus/list` with these params, which must succeed.
pub async fn status(client: &mut Client, params: Value) -> Value {
    client
        .request("mcpServerStatus/list", params)
        .await
        .unwrap_or_else(|err| panic!("mcpServerStatus/list failed: {err}"))
}

/// The tools a request offers in the namespace `namespace` (none when it is not offered).
pub fn namespace_tools(request: &RecordedRequest, namespace: &str) -> Vec<Value> {
    request
        .tools()
        .iter()
        .find(|tool| tool["name"] == namespace)
        .and_then(|ns| ns["tools"].as_array().cloned())
        .unwrap_or_default()
}

/// The names of `tools` (a request's, or a namespace's).
pub fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().filter_map(|t| t["name"].as_str()).collect()
}

/// Waits for `mcpServer/startupStatus/updated` of `server` with `status` for `thread`.
pub async fn wait_startup(client: &mut Client, thread: &str, server: &str, status: &str) -> Value {
    client
        .wait_for(&format!("`{server}` {status} for {thread}"), |m| {
            m["method"] == "mcpServer/startupStatus/updated"
                && m["params"]["threadId"] == thread
                && m["params"]["name"] == server
                && m["params"]["status"] == status
        })
        .await
}

/// A model reply calling `tool` of the `weft` server.
pub fn weft_call(call_id: &str, tool: &str, arguments: Value) -> Reply {
    namespaced_call(call_id, "mcp__weft", tool, &arguments.to_string())
}

/// Whether a model output starts with the wall-time line and continues with `rest`.
pub fn assert_wall_time_output(output: &str, rest: &str) {
    let (head, tail) = output
        .split_once("\nOutput:\n")
        .unwrap_or_else(|| panic!("no `Output:` line in {output:?}"));
    let secs = head
        .strip_prefix("Wall time: ")
        .and_then(|s| s.strip_suffix(" seconds"))
        .unwrap_or_else(|| panic!("no wall-time line in {output:?}"));
    assert!(secs.parse::<f64>().is_ok(), "wall time {secs:?}");
    assert_eq!(tail, rest, "in {output:?}");
}

/// The completed item of `call_id` among `messages`, checked to have completed.
pub fn completed_call<'a>(messages: &'a [Value], call_id: &str) -> &'a Value {
    let item = completed_item(messages, call_id);
    assert_eq!(item["status"], "completed", "{item}");
    item
}

/// [`assert_failure_output`] of the output of `call_id` that `request` carries.
pub fn assert_call_failed(request: &RecordedRequest, call_id: &str, message: &str) {
    let output = request
        .tool_output(call_id)
        .unwrap_or_else(|| panic!("no output of {call_id}"));
    assert_failure_output(output, message);
}

/// The two-part failure output the model gets: the wall-time line, then the message.
pub fn assert_failure_output(output: &Value, message: &str) {
    let parts = output
        .as_array()
        .unwrap_or_else(|| panic!("not a content array: {output}"));
    assert_eq!(parts.len(), 2, "{output}");
    let head = parts[0]["text"].as_str().unwrap_or_default();
    assert!(
        head.starts_with("Wall time: ") && head.ends_with(" seconds\nOutput:"),
        "{head:?}"
    );
    assert_eq!(parts[0]["type"], "input_text");
    assert_eq!(parts[1], json!({"type": "input_text", "text": message}));
}
