//! The real Codex client against Weft (docs/tui-tests.md): the Codex TUI 0.171.0 driven
//! through tmux with `--remote ws://…`, `codex exec --remote …`, and the start-up sequence of
//! an editor extension over stdio. Each test starts its own mock model, Weft daemon (WebSocket,
//! in the client's workspace) and client with a scratch home. The client binary comes from
//! `tests/tui/install.sh` (run by `tests/install.sh`); without it, tmux or bubblewrap the tests
//! fail and say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents;
mod approvals;
mod backtrack;
mod diff;
mod exec;
mod mcp;
mod mention;
mod model;
mod overlay;
mod permissions;
mod plan;
mod resume;
mod review;
mod shell;
mod slash;
mod startup;
mod stdio;
mod turns;
mod unix_remote;

use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{MockModel, RecordedRequest, Reply};
use weft_test_support::{ClientHome, Daemon, TestHome, Tui, mock_model_config};

/// The title the mock gives every thread-title request of the TUI.
pub const MOCK_TITLE: &str = "Mock title";

/// How long a model request may take to arrive.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether a model request is one of the TUI's side requests for a title (a structured-output
/// turn on a temporary thread), which arrive whenever the TUI decides.
pub fn is_title_request(request: &RecordedRequest) -> bool {
    request.body["text"]["format"]["type"] == "json_schema"
        || request
            .message_texts("user")
            .iter()
            .any(|text| text.contains("task title"))
}

/// A mock model, a Weft daemon on WebSocket using it, and a scratch client home whose
/// workspace is the daemon's working directory.
pub struct Session {
    /// The scripted model.
    pub mock: MockModel,
    /// Weft's home (`WEFT_HOME`).
    pub weft: TestHome,
    /// The client's scratch home and workspace.
    pub client: ClientHome,
    /// The daemon.
    pub daemon: Daemon,
}

impl Session {
    /// Weft with `approval_policy = approval` and `sandbox_mode = "workspace-write"`.
    pub async fn start(approval: &str) -> Session {
        Session::start_with(approval, "").await
    }

    /// [`Session::start`] with more `config.toml` after the model's.
    pub async fn start_with(approval: &str, extra: &str) -> Session {
        let mock = MockModel::start().await.expect("start the mock model");
        let title = json!({ "title": MOCK_TITLE }).to_string();
        mock.set_standing_reply(is_title_request, Reply::new().text(title).responses());
        let config = format!(
            "approval_policy = \"{approval}\"\nsandbox_mode = \"workspace-write\"\n{}\n{extra}",
            mock_model_config(&mock.base_url(), "responses")
        );
        let weft = TestHome::with_config(&config);
        let client = ClientHome::new();
        let daemon = Daemon::builder(&weft)
            .listen("ws://127.0.0.1:0")
            .current_dir(client.workspace())
            .start()
            .await;
        Session {
            mock,
            weft,
            client,
            daemon,
        }
    }

    /// `ws://127.0.0.1:PORT` of the daemon.
    pub fn url(&self) -> String {
        self.daemon.ws_url()
    }

    /// Queue a model reply.
    pub fn push(&self, reply: Reply) {
        self.mock.push(reply.responses());
    }

    /// Start `codex ARGS… --remote URL` in tmux (not waiting for anything).
    pub fn tui(&self, args: &[&str]) -> Tui {
        check_bubblewrap(&self.client);
        let url = self.url();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--remote", &url]);
        Tui::start(&self.client, &all)
    }

    /// `codex --remote URL`, once its composer is ready.
    pub async fn ready_tui(&self) -> Tui {
        let tui = self.tui(&[]);
        wait_ready(&tui).await;
        tui
    }

    /// Submit `prompt` in `tui`; the model answers `answer`. The screen once that turn is done.
    pub async fn prompt(&self, tui: &Tui, prompt: &str, answer: &str) -> String {
        self.push(Reply::new().text(answer));
        tui.submit(prompt).await;
        wait_turn_done(tui, answer).await
    }

    /// Wait until `n` queued (non-title) model requests arrived; returns them.
    pub async fn wait_for_requests(&self, n: usize) -> Vec<RecordedRequest> {
        self.mock
            .wait_for_requests(n, REQUEST_TIMEOUT)
            .await
            .unwrap_or_else(|err| panic!("{err}"))
    }

    /// A path in the workspace.
    pub fn path(&self, relative: &str) -> std::path::PathBuf {
        self.client.workspace().join(relative)
    }
}

/// Fail clearly when `bwrap` is not on the client's `PATH`: without it the TUI shows a start-up
/// warning (`⚠ 1 warning`) that the tests would take for one of Weft's (docs/tui-tests.md §1).
fn check_bubblewrap(client: &ClientHome) {
    let path = client
        .env()
        .into_iter()
        .find_map(|(key, value)| (key == "PATH").then_some(value))
        .expect("the client's PATH");
    let found = std::env::split_paths(&path).any(|dir| dir.join("bwrap").is_file());
    assert!(
        found,
        "bubblewrap (`bwrap`) is not on the client's PATH ({path}): the Codex TUI warns on its \
         screen without it. Run tests/install.sh, which installs it (docs/tui-tests.md)"
    );
}

/// Wait until the TUI's start-up is done: the header, the composer and its footer show.
pub async fn wait_ready(tui: &Tui) -> String {
    tui.wait_for_screen("the start-up screen (header and composer footer)", |s| {
        s.contains("OpenAI Codex (v0.171.0)") && s.contains("? for shortcuts")
    })
    .await
}

/// Wait until no turn runs (the composer footer shows and nothing says `esc to interrupt`).
pub async fn wait_idle(tui: &Tui) -> String {
    tui.wait_for_screen("an idle composer", |s| {
        s.contains("? for shortcuts") && !s.contains("esc to interrupt")
    })
    .await
}

/// Wait until the turn that ends with `answer` is over: the answer shows and, below it, the
/// TUI's `Worked for …` line that closes a finished turn.
pub async fn wait_turn_done(tui: &Tui, answer: &str) -> String {
    tui.wait_for_screen(&format!("`{answer}` and the end of its turn"), |s| {
        let Some(at) = s.rfind(answer) else {
            return false;
        };
        s[at..]
            .lines()
            .any(|l| l.trim_start().starts_with("Worked for"))
            && !s.contains("esc to interrupt")
    })
    .await
}

/// A model reply calling `tool` in `namespace` (a Responses API namespaced call).
pub fn namespaced_call(call_id: &str, namespace: &str, tool: &str, arguments: Value) -> Reply {
    let item = json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
                      "namespace": namespace, "name": tool,
                      "arguments": arguments.to_string(), "status": "completed"});
    Reply::new()
        .raw_event(
            json!({"type": "response.output_item.added", "output_index": 0,
                          "item": item.clone()}),
        )
        .raw_event(json!({"type": "response.output_item.done", "output_index": 0, "item": item}))
}

/// A mock reply calling `exec_command` with `{"cmd": cmd}`.
pub fn exec_call(call_id: &str, cmd: &str) -> Reply {
    Reply::new().function_call(call_id, "exec_command", json!({ "cmd": cmd }).to_string())
}

/// A mock reply calling `apply_patch` with this patch.
pub fn patch_call(call_id: &str, patch: &str) -> Reply {
    Reply::new().function_call(
        call_id,
        "apply_patch",
        json!({ "input": patch }).to_string(),
    )
}

/// Problems the TUI reports on its screen (errors and warnings).
pub fn screen_problems(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter(|line| {
            let lower = line.to_lowercase();
            line.contains('⚠') || lower.contains("error") || lower.contains("warning")
        })
        .map(|line| line.trim().to_owned())
        .collect()
}
