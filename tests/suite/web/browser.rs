//! The web client in a real browser: Debian's chromium, driven by playwright-core
//! (tests/web/browser.mjs, pinned by tests/web/package-lock.json), against the real daemon over
//! its WebSocket port and the scripted mock model. Each test scripts the model, starts one
//! scenario of browser.mjs and meets it at its `ask NAME` lines. Screenshots of the main
//! views go to target/web-screenshots (docs/web.md shows them).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};
use weft_mock_model::{Gate, Reasoning, Reply};
use weft_test_support::Transport;

use crate::agents::{spawn_call, task_says};
use crate::mcp::{Mcp, weft_call};
use crate::modes::user_input::ask_call;
use crate::tools::{cmd, exec_call, patch_call, start_thread};
use crate::turns::{Harness, Setup};

/// How long one step of a scenario may take (a cold chromium start included).
const STEP: Duration = Duration::from_secs(90);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One run of tests/web/browser.mjs.
struct Browser {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    scenario: &'static str,
}

impl Browser {
    async fn start(scenario: &'static str, h: &Harness, env: &[(&str, String)]) -> Browser {
        h.daemon.wait_for_stderr("web client at").await;
        let sign_in = std::fs::read_to_string(h.home.path().join("web-sign-in.url")).unwrap();
        let modules = repo().join("target/web-tests/node_modules");
        assert!(
            modules.join("playwright-core").exists(),
            "playwright-core is not installed: run tests/install.sh (tests/web/install.sh)"
        );
        let shots = repo().join("target/web-screenshots");
        std::fs::create_dir_all(&shots).unwrap();
        let mut command = tokio::process::Command::new("node");
        command
            .arg(repo().join("tests/web/browser.mjs"))
            .arg(scenario)
            .env("WEFT_SIGN_IN_URL", sign_in.trim())
            .env("WEFT_WEB_NODE_MODULES", modules)
            .env("WEFT_WEB_SCREENSHOTS", shots)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("node starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Browser {
            child,
            stdin,
            stdout,
            scenario,
        }
    }

    /// The next line the scenario prints; `None` once it has ended.
    async fn line(&mut self) -> Option<String> {
        match tokio::time::timeout(STEP, self.stdout.next_line()).await {
            Ok(line) => line.unwrap(),
            Err(_) => panic!("{}: no progress in {STEP:?}", self.scenario),
        }
    }

    /// Wait for the scenario's `ask name`.
    async fn asked(&mut self, name: &str) {
        let wanted = format!("ask {name}");
        loop {
            match self.line().await {
                Some(line) if line == wanted => return,
                Some(_) => {}
                None => self.failed(&format!("ended before `{wanted}`")).await,
            }
        }
    }

    /// Let the scenario go on after an `ask`.
    async fn go_on(&mut self) {
        self.stdin.write_all(b"ok\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Wait for the scenario to pass; the lines it printed.
    async fn passes(mut self) -> Vec<String> {
        let mut lines = Vec::new();
        while let Some(line) = self.line().await {
            lines.push(line);
        }
        let status = tokio::time::timeout(STEP, self.child.wait()).await;
        let done = lines.last().is_some_and(|line| line == "done");
        if !done || !matches!(status, Ok(Ok(status)) if status.success()) {
            self.failed("failed").await;
        }
        lines
    }

    async fn failed(&mut self, what: &str) -> ! {
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = tokio::time::timeout(STEP, pipe.read_to_string(&mut stderr)).await;
        }
        panic!("browser scenario {}: {what}\n{stderr}", self.scenario);
    }
}

/// A daemon on WebSocket with a workspace, and a thread in it (`approval`, `sandbox`).
async fn thread_in_workspace(approval: &str, sandbox: &str) -> (Harness, PathBuf, String) {
    let mut h = Harness::responses(Transport::Ws).await;
    let ws = h.home.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws = std::fs::canonicalize(&ws).unwrap();
    let thread = start_thread(&mut h.client, &ws.display().to_string(), approval, sandbox).await;
    (h, ws, thread)
}

/// Check that the model's last request carries `needle` (an answer, an input, a tool output).
fn the_model_saw(mock: &weft_mock_model::MockModel, needle: &str, what: &str) {
    let requests = mock.requests();
    let last = serde_json::to_string(&requests.last().expect("a model request").body).unwrap();
    assert!(last.contains(needle), "{what}: {needle:?} not in {last}");
}

/// Run `scenario` on `thread` to its end; it must pass.
async fn passes_on(scenario: &'static str, h: &Harness, thread: &str) {
    Browser::start(scenario, h, &thread_env(thread))
        .await
        .passes()
        .await;
}

/// [`thread_in_workspace`] with the model's replies queued.
async fn scripted(
    approval: &str,
    sandbox: &str,
    replies: impl IntoIterator<Item = Reply>,
) -> (Harness, PathBuf, String) {
    let (h, ws, thread) = thread_in_workspace(approval, sandbox).await;
    for reply in replies {
        h.push(reply);
    }
    (h, ws, thread)
}

fn thread_env(thread: &str) -> Vec<(&'static str, String)> {
    vec![("WEFT_THREAD", thread.to_string())]
}

#[tokio::test]
async fn a_streamed_turn_renders_reasoning_command_output_and_text() {
    let (h, _ws, thread) = scripted(
        "never",
        "danger-full-access",
        [
            exec_call("call_echo", cmd("echo hello-from-command"))
                .reasoning(Reasoning::new().summary_deltas(["Thinking about ", "the command"])),
            Reply::new().text_deltas(["All done: ", "streamed answer"]),
        ],
    )
    .await;
    passes_on("stream", &h, &thread).await;
}

#[tokio::test]
async fn a_command_approval_is_accepted_and_another_refused() {
    let (h, ws, thread) = scripted(
        "untrusted",
        "danger-full-access",
        [
            exec_call("call_first", cmd("touch first.txt")),
            Reply::new().text("first done"),
            exec_call("call_second", cmd("touch second.txt")),
        ],
    )
    .await;
    passes_on("approvals", &h, &thread).await;
    assert!(ws.join("first.txt").exists(), "the accepted command ran");
    assert!(
        !ws.join("second.txt").exists(),
        "the refused command did not"
    );
}

#[tokio::test]
async fn an_agent_message_renders_as_markdown() {
    let (h, _ws, thread) = scripted(
        "never",
        "read-only",
        [Reply::new().text(
            "Some **bold**, `inline` code and [a link](https://example.com).\n\n\
         ```rust\nfn main() {}\n```\n",
        )],
    )
    .await;
    passes_on("markdown", &h, &thread).await;
}

#[tokio::test]
async fn a_plan_mode_question_is_answered_in_a_form() {
    let (h, _ws, thread) = scripted(
        "never",
        "read-only",
        [ask_call("call_ask"), Reply::new().text("SQLite it is.")],
    )
    .await;
    passes_on("plan_question", &h, &thread).await;
    the_model_saw(
        &h.mock,
        "SQLite (Recommended)",
        "the answer reached the model",
    );
    let requests = h.mock.requests();
    let modes: Vec<String> = requests[0]
        .message_texts("developer")
        .into_iter()
        .filter(|text| text.starts_with("<collaboration_mode>"))
        .collect();
    assert!(
        modes
            .iter()
            .any(|text| text.starts_with("<collaboration_mode># Weft collaboration mode: Plan")),
        "the turn ran in Plan mode: {modes:?}"
    );
}

#[tokio::test]
async fn a_long_turn_draws_in_batches_and_a_long_thread_through_a_window() {
    let (h, _ws, thread) = scripted(
        "never",
        "read-only",
        [
            Reply::new().text_deltas((1..=10_000).map(|n| format!("d{n} "))),
            (1..=5_000).fold(Reply::new(), |reply, n| reply.text(format!("item {n}"))),
        ],
    )
    .await;
    passes_on("long", &h, &thread).await;
}

#[tokio::test]
async fn an_attached_image_reaches_the_model() {
    let (h, _ws, thread) = scripted("never", "read-only", [Reply::new().text("a dot")]).await;
    passes_on("image", &h, &thread).await;
    the_model_saw(
        &h.mock,
        "data:image/png;base64,iVBORw0KGgo",
        "the image reached the model",
    );
}

#[tokio::test]
async fn an_mcp_servers_question_is_answered_in_a_form() {
    let extra = "default_tools_approval_mode = \"approve\"";
    let mut t = Mcp::start_with(Transport::Ws, extra, "").await;
    t.script(
        [weft_call(
            "call_ask",
            "ask_user",
            json!({"question": "Which colour?"}),
        )],
        "asked",
    );
    let thread = t.thread("on-request").await;
    passes_on("elicitation", &t.h, &thread).await;
    the_model_saw(&t.h.mock, "teal", "the server's answer reached the model");
}

#[tokio::test]
async fn a_failed_turn_shows_its_error() {
    let (h, _ws, thread) = scripted(
        "never",
        "read-only",
        [Reply::new().failed("server_error", "the model broke down")],
    )
    .await;
    passes_on("failure", &h, &thread).await;
}

#[tokio::test]
async fn a_patch_is_shown_as_a_diff() {
    let (h, ws, thread) = thread_in_workspace("never", "workspace-write").await;
    let patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello from the patch\n*** End Patch";
    h.push(patch_call("call_patch", patch));
    h.push(Reply::new().text("patched"));
    passes_on("patch", &h, &thread).await;
    assert_eq!(
        std::fs::read_to_string(ws.join("hello.txt")).unwrap(),
        "hello from the patch\n"
    );
}

#[tokio::test]
async fn the_plan_shows_and_a_patch_asks_first() {
    let plan = json!({"explanation": "Starting.", "plan": [
        {"step": "Read the parser", "status": "completed"},
        {"step": "Fix the bug", "status": "in_progress"}
    ]});
    let add = "*** Begin Patch\n*** Add File: hello.txt\n+hello from apply_patch\n*** End Patch\n";
    let (h, ws, thread) = scripted(
        "on-request",
        "read-only",
        [
            Reply::new().function_call("call_plan", "update_plan", plan.to_string()),
            patch_call("call_patch", add),
            Reply::new().text("Patched."),
        ],
    )
    .await;
    passes_on("plan_and_patch", &h, &thread).await;
    assert!(ws.join("hello.txt").exists(), "the approved patch applied");
}

#[tokio::test]
async fn a_sub_agent_opens_from_its_parent() {
    let mut h = crate::agents::harness(Transport::Ws, "").await;
    let cwd = h.home.path().display().to_string();
    let thread = start_thread(&mut h.client, &cwd, "never", "read-only").await;
    task_says(&h, "Say hi.", Reply::new().text("hi from the child"));
    h.push(spawn_call("call_spawn_1", "Say hi."));
    h.push(Reply::new().text("spawned"));
    passes_on("subagent", &h, &thread).await;
}

#[tokio::test]
async fn escape_interrupts_the_running_turn() {
    let (h, _ws, thread) = thread_in_workspace("never", "read-only").await;
    let gate = Gate::new();
    h.push(
        Reply::new()
            .text_deltas(["working"])
            .gate(&gate)
            .text("never seen"),
    );
    let mut browser = Browser::start("interrupt", &h, &thread_env(&thread)).await;
    browser.asked("running").await;
    gate.wait_reached(STEP).await.unwrap();
    browser.go_on().await;
    browser.passes().await;
}

#[tokio::test]
async fn enter_while_a_turn_runs_steers_it() {
    let (h, _ws, thread) = thread_in_workspace("never", "read-only").await;
    let gate = Gate::new();
    h.push(exec_call("call_wait", cmd("true")).gate(&gate));
    h.push(Reply::new().text("after steer"));
    let mut browser = Browser::start("steer", &h, &thread_env(&thread)).await;
    browser.asked("running").await;
    gate.wait_reached(STEP).await.unwrap();
    browser.go_on().await;
    browser.asked("steered").await;
    // The steer is in once the daemon has answered it; the browser sent it before asking.
    gate.release();
    browser.go_on().await;
    browser.passes().await;
    the_model_saw(&h.mock, "also this", "the steered text reached the model");
}

#[tokio::test]
async fn a_reload_mid_turn_shows_the_turn_going_on() {
    let (h, _ws, thread) = thread_in_workspace("never", "read-only").await;
    // One message streamed slowly (10 s), so that the page reloads while it streams.
    h.push(
        Reply::new()
            .text_deltas((1..=40).map(|n| format!("w{n} ")))
            .event_delay(Duration::from_millis(250)),
    );
    passes_on("reload", &h, &thread).await;
}

#[tokio::test]
async fn a_dropped_connection_comes_back_and_the_turn_goes_on() {
    // One message streamed slowly (10 s), so that the connection drops while it streams.
    let slow = Reply::new()
        .text_deltas((1..=40).map(|n| format!("w{n} ")))
        .event_delay(Duration::from_millis(250));
    let (h, _ws, thread) = scripted("never", "read-only", [slow]).await;
    passes_on("drop", &h, &thread).await;
}

#[tokio::test]
async fn two_tabs_on_one_thread_answer_an_approval_once() {
    let (h, ws, thread) = scripted(
        "untrusted",
        "danger-full-access",
        [
            exec_call("call_touch", cmd("echo x >> once.txt")),
            Reply::new().text("created once"),
        ],
    )
    .await;
    passes_on("two_tabs", &h, &thread).await;
    assert_eq!(std::fs::read_to_string(ws.join("once.txt")).unwrap(), "x\n");
}

#[tokio::test]
async fn a_stored_thread_opens_on_its_newest_page() {
    let (mut h, _ws, thread) = thread_in_workspace("never", "read-only").await;
    for n in 1..=25 {
        h.push(Reply::new().text(format!("answer {n}")));
        let run = h.run_turn(&thread, &format!("question {n}")).await;
        assert_eq!(run.completed_turn()["status"], "completed");
    }
    passes_on("history", &h, &thread).await;
}

#[tokio::test]
async fn markup_in_a_model_message_renders_as_inert_text() {
    let (h, _ws, thread) = scripted(
        "never",
        "read-only",
        [Reply::new().text(
            "<script>window.__weftXss = 1</script> <img src=x onerror=\"window.__weftXss = 2\"> \
         [click](javascript:window.__weftXss=3) <a href=\"javascript:window.__weftXss=4\">a</a> \
         <!-- hidden --> <iframe src=\"/\"></iframe>",
        )],
    )
    .await;
    passes_on("xss", &h, &thread).await;
}

#[tokio::test]
async fn threads_are_started_renamed_forked_and_archived_from_the_page() {
    let mut h = Harness::responses(Transport::Ws).await;
    let cwd = std::fs::canonicalize(h.home.path()).unwrap();
    h.push(Reply::new().text("hi there"));
    let env = [("WEFT_CWD", cwd.display().to_string())];
    let lines = Browser::start("manage", &h, &env).await.passes().await;
    let said = |key: &str| {
        let prefix = format!("{key} ");
        let line = lines.iter().find(|line| line.starts_with(&prefix));
        line.unwrap_or_else(|| panic!("the scenario did not say its {key}: {lines:?}"))
            [prefix.len()..]
            .to_string()
    };
    let (model, original, forked) = (said("model"), said("original"), said("forked"));
    let archived = h
        .client
        .request("thread/list", json!({"archived": true}))
        .await
        .unwrap();
    let listed = &archived["data"].as_array().unwrap();
    let thread = listed.iter().find(|t| t["id"] == original.as_str());
    let thread = thread.unwrap_or_else(|| panic!("{original} is not archived: {archived}"));
    assert_eq!(thread["name"], "Renamed thread");
    assert_eq!(thread["cwd"], cwd.display().to_string());
    let read = h
        .client
        .request("thread/read", json!({"threadId": forked}))
        .await
        .unwrap();
    assert_eq!(read["thread"]["forkedFromId"], original.as_str(), "{read}");
    // The archived thread cannot be resumed; its fork has its settings.
    let resumed = h
        .client
        .request("thread/resume", json!({"threadId": forked}))
        .await
        .unwrap();
    assert_eq!(resumed["model"], model.as_str());
    assert_eq!(resumed["approvalPolicy"], "never");
    assert_eq!(resumed["sandbox"]["type"], "readOnly", "{resumed}");
}

/// A free port on 127.0.0.1 (bound and released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn a_page_on_an_allowed_origin_connects_and_a_foreign_one_cannot() {
    let (allowed, foreign) = (free_port(), free_port());
    let origins = json!([format!("http://localhost:{allowed}")]);
    let setup = Setup::new(Transport::Ws).config(&format!("[web]\nallowed_origins = {origins}\n"));
    let h = Harness::start(setup).await;
    let env = [
        ("WEFT_ALLOWED_PORT", allowed.to_string()),
        ("WEFT_FOREIGN_PORT", foreign.to_string()),
    ];
    Browser::start("origins", &h, &env).await.passes().await;
}
