//! Issue 5, persistence: rollouts, the SQLite state DB, `thread/resume`, `thread/fork`,
//! `thread/list`, `thread/read`, `thread/archive` / `thread/unarchive`, `thread/name/set`,
//! `thread/unsubscribe`, idle unloading and crash safety, end to end (the real daemon, restarted
//! on the same `$WEFT_HOME`, the scripted mock model). See `docs/protocol.md` §5,
//! §7.3–§7.11, §11.3, §11.5 and §12, and the reference's `resume`, `resume_kill` and `fork`
//! scenarios.
//!
//! Every test owns one mock model and one home; a "restart" stops the daemon (SIGTERM, or
//! `kill -9` for the crash tests) and starts a new one on the same home and transport. Tests
//! wait on notifications and on the mock's request log, never on sleeps.

mod archive;
mod fork;
mod list;
mod pages;
mod recovery;
mod resume;
mod unload;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use weft_mock_model::{Gate, MockModel, RecordedRequest, Reply, Usage};
use weft_test_support::{Client, Daemon, RpcError, TestHome, Transport, mock_model_config};

pub use crate::turns::{
    INVALID_REQUEST, TurnRun, assert_invalid_request, label, read_through,
    read_through_turn_completed, run_turn_on, start_thread_on, str_at, turn_start_params,
    wait_gate,
};

/// A thread id that no test ever creates (a well-formed UUIDv7).
pub const UNKNOWN_ID: &str = "0190f5a4-1b2c-7d3e-8f40-123456789abc";

/// A mock model, a home, a daemon using both, and one initialized client.
pub struct Persist {
    /// The mock model (lives across restarts).
    pub mock: MockModel,
    /// `$WEFT_HOME`; also the cwd of the threads.
    pub home: TestHome,
    /// How the daemon is reached.
    pub transport: Transport,
    /// The running daemon.
    pub daemon: Daemon,
    /// The first connection of the running daemon, initialized.
    pub client: Client,
}

impl Persist {
    /// A daemon with the default configuration.
    pub async fn start(transport: Transport) -> Persist {
        Persist::with_config(transport, "").await
    }

    /// A daemon whose `config.toml` has `top_level` (top-level keys) before the mock provider.
    pub async fn with_config(transport: Transport, top_level: &str) -> Persist {
        let mock = MockModel::start().await.expect("start the mock model");
        let home = TestHome::with_config(&format!(
            "{top_level}\n{}",
            mock_model_config(&mock.base_url(), "responses")
        ));
        let connection = launch(transport, &home).await;
        Persist::on(mock, home, transport, connection)
    }

    /// The harness over a daemon already started on `home` and its first connection.
    pub fn on(
        mock: MockModel,
        home: TestHome,
        transport: Transport,
        (daemon, client): (Daemon, Client),
    ) -> Persist {
        Persist {
            mock,
            home,
            transport,
            daemon,
            client,
        }
    }

    /// The threads' cwd.
    pub fn cwd(&self) -> String {
        self.home.path().display().to_string()
    }

    /// Queue a mock reply (Responses API).
    pub fn push(&self, reply: Reply) {
        self.mock.push(reply.responses());
    }

    /// `thread/start` on the first client; returns the thread id.
    pub async fn start_thread(&mut self) -> String {
        let cwd = self.cwd();
        start_thread_on(&mut self.client, &cwd).await
    }

    /// `thread/start` with these params (it must succeed): the thread id.
    pub async fn start_thread_with(&mut self, params: Value) -> String {
        str_at(
            &ok(&mut self.client, "thread/start", params).await,
            "/thread/id",
        )
    }

    /// One turn on the first client, through `turn/completed`.
    pub async fn run_turn(&mut self, thread: &str, text: &str) -> TurnRun {
        run_turn_on(&mut self.client, thread, text).await
    }

    /// A new thread with one turn on it: `text`, which the model answers with `answer`. The
    /// thread and the run.
    pub async fn thread_with_turn(&mut self, answer: &str, text: &str) -> (String, TurnRun) {
        self.push(Reply::new().text(answer));
        let thread = self.start_thread().await;
        let run = self.run_turn(&thread, text).await;
        (thread, run)
    }

    /// Another initialized connection (WebSocket only).
    pub async fn second_client(&mut self) -> Client {
        self.daemon.initialized_client().await
    }

    /// [`second_client`](Persist::second_client) on WebSocket; none on stdio.
    pub async fn other_client(&mut self) -> Option<Client> {
        match self.transport {
            Transport::Ws => Some(self.second_client().await),
            Transport::Stdio => None,
        }
    }

    /// `turn/start` of `text` on `thread` (it must succeed), not waiting for the turn: its id.
    pub async fn begin_turn(&mut self, thread: &str, text: &str) -> String {
        let started = ok(
            &mut self.client,
            "turn/start",
            turn_start_params(thread, text),
        )
        .await;
        str_at(&started, "/turn/id")
    }

    /// [`begin_turn`](Persist::begin_turn) whose reply is held at `gate`: once the reply has
    /// streamed its first `item/agentMessage/delta` and reached the gate. The turn's id.
    pub async fn begin_held_turn(&mut self, thread: &str, text: &str, gate: &Gate) -> String {
        let turn = self.begin_turn(thread, text).await;
        read_through(&mut self.client, |m| {
            m["method"] == "item/agentMessage/delta"
        })
        .await;
        wait_gate(gate).await;
        turn
    }

    /// Wait for the mock to have seen `n` model requests.
    pub async fn wait_for_requests(&self, n: usize) -> Vec<RecordedRequest> {
        self.mock
            .wait_for_requests(n, weft_test_support::DEFAULT_TIMEOUT)
            .await
            .expect("model requests")
    }

    /// Stop the daemon gracefully (SIGTERM) and wait for it to exit.
    pub async fn stop(&mut self) {
        self.daemon.sigterm();
        let status = self.daemon.wait_exit().await;
        assert!(status.success(), "the daemon exited with {status}");
    }

    /// `kill -9` the daemon and wait for it to be gone.
    pub async fn kill(&mut self) {
        self.daemon.signal("KILL");
        let status = self.daemon.wait_exit().await;
        assert!(!status.success(), "the daemon survived kill -9: {status}");
    }

    /// Start a new daemon on the same home and transport (the old one must be stopped).
    pub async fn start_again(&mut self) {
        let (daemon, client) = launch(self.transport, &self.home).await;
        self.daemon = daemon;
        self.client = client;
    }

    /// [`stop`](Persist::stop), then [`start_again`](Persist::start_again).
    pub async fn restart(&mut self) {
        self.stop().await;
        self.start_again().await;
    }

    /// [`kill`](Persist::kill), then [`start_again`](Persist::start_again).
    pub async fn crash_and_restart(&mut self) {
        self.kill().await;
        self.start_again().await;
    }
}

/// A text reply that reports `input` and `output` tokens of usage.
pub fn answer(text: impl Into<String>, input: i64, output: i64) -> Reply {
    Reply::new().text(text).usage(Usage::new(input, output))
}

/// Start a daemon on `home` and initialize its first connection.
pub async fn launch(transport: Transport, home: &TestHome) -> (Daemon, Client) {
    let mut daemon = Daemon::start(transport, home, &[]).await;
    let client = daemon.initialized_client().await;
    (daemon, client)
}

/// A request that must succeed.
pub async fn ok(client: &mut Client, method: &str, params: Value) -> Value {
    match client.request(method, params).await {
        Ok(result) => result,
        Err(err) => client.fail(&format!("`{method}` failed: {err}")),
    }
}

/// `thread/read`.
pub async fn read(client: &mut Client, thread: &str, include_turns: bool) -> Value {
    ok(
        client,
        "thread/read",
        json!({"threadId": thread, "includeTurns": include_turns}),
    )
    .await["thread"]
        .clone()
}

/// `thread/list` with these params; the whole result.
pub async fn list(client: &mut Client, params: Value) -> Value {
    ok(client, "thread/list", params).await
}

/// The `data` array of a listing's result (or a page's).
pub fn data(result: &Value) -> &[Value] {
    result["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data array in {result}"))
}

/// The `key` of each of `values` as a string (`?` where it is not one), in order.
pub fn strings_at(values: &[Value], key: &str) -> Vec<String> {
    values
        .iter()
        .map(|value| value[key].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// The ids of a `thread/list` (or `thread/loaded/list`) result's `data`, in order.
pub fn ids(result: &Value) -> Vec<String> {
    data(result)
        .iter()
        .map(|entry| {
            entry
                .as_str()
                .or_else(|| entry["id"].as_str())
                .unwrap_or_else(|| panic!("no id in {entry}"))
                .to_owned()
        })
        .collect()
}

/// `thread/list` with these params; the ids of one page.
pub async fn list_ids(client: &mut Client, params: Value) -> Vec<String> {
    ids(&list(client, params).await)
}

/// `thread/loaded/list`; the ids.
pub async fn loaded(client: &mut Client) -> Vec<String> {
    ids(&ok(client, "thread/loaded/list", json!({})).await)
}

/// Check an error answer: `-32600` with exactly `message`.
pub fn assert_error(answer: Result<Value, RpcError>, message: &str) {
    assert_invalid_request(answer, message);
}

/// Check an error answer: `-32600` whose message contains every one of `parts`.
pub fn assert_error_containing(answer: Result<Value, RpcError>, parts: &[&str]) -> String {
    match answer {
        Ok(result) => panic!("expected an error mentioning {parts:?}, got the result {result}"),
        Err(err) => {
            assert_eq!(err.code, INVALID_REQUEST, "unexpected error {err:?}");
            for part in parts {
                assert!(
                    err.message.contains(part),
                    "the error `{}` does not mention `{part}`",
                    err.message
                );
            }
            err.message
        }
    }
}

/// The message texts of `request` for `role`, with the environment-context messages left out
/// (the conversation as a person would read it).
pub fn conversation(request: &RecordedRequest) -> Vec<(String, String)> {
    request
        .inputs_of_type("message")
        .filter_map(|item| {
            let role = item["role"].as_str()?.to_owned();
            if role != "user" && role != "assistant" {
                return None;
            }
            let text: String = item["content"]
                .as_array()?
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect();
            if text.starts_with("<environment_context>") {
                return None;
            }
            Some((role, text))
        })
        .collect()
}

/// Check that a request carries exactly one environment-context message. Resuming or forking
/// a thread changes nothing in its environment, so the reference does not send the context
/// again (the reference's `resume` and `fork`; docs/architecture.md §9.4: the context is re-sent only when it
/// changed or its reference snapshot became invalid).
pub fn assert_one_environment_context(request: &RecordedRequest) {
    let contexts = request
        .message_texts("user")
        .iter()
        .filter(|text| text.starts_with("<environment_context>"))
        .count();
    assert_eq!(
        contexts,
        1,
        "the environment context was sent {contexts} times (expected once, as the \
         reference): {:#?}",
        request.input()
    );
}

/// `("user", text)`.
pub fn user(text: &str) -> (String, String) {
    ("user".to_owned(), text.to_owned())
}

/// `("assistant", text)`.
pub fn assistant(text: &str) -> (String, String) {
    ("assistant".to_owned(), text.to_owned())
}

/// Assert that `request`'s conversation is exactly `[user, assistant, user]`: one earlier
/// exchange, then the new user text.
pub fn assert_follow_up(request: &RecordedRequest, [asked, answered, now]: [&str; 3]) {
    assert_eq!(
        conversation(request),
        [user(asked), assistant(answered), user(now)]
    );
}

/// Whether a text is the interrupted-turn marker.
pub fn is_marker(text: &str) -> bool {
    text.starts_with("<turn_aborted>")
}

/// The rollout file of a thread (its `path`).
pub fn path_of(thread: &Value) -> PathBuf {
    PathBuf::from(str_at(thread, "/path"))
}

/// Every line of a rollout, each checked to be a JSON object; panics on a line that is not.
pub fn rollout_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("read {}: {err}", path.display()));
    assert!(
        text.ends_with('\n'),
        "{} does not end with a newline",
        path.display()
    );
    text.lines()
        .enumerate()
        .map(|(n, line)| match serde_json::from_str::<Value>(line) {
            Ok(value) if value.is_object() => value,
            _ => panic!(
                "line {} of {} is not a JSON object: {line}",
                n + 1,
                path.display()
            ),
        })
        .collect()
}

/// Every rollout file under `$WEFT_HOME/sessions` and `$WEFT_HOME/archived_sessions`.
pub fn rollout_files(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![home.join("sessions"), home.join("archived_sessions")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The `turns` array of a thread (a copy).
pub fn turns(thread: &Value) -> Vec<Value> {
    thread["turns"]
        .as_array()
        .unwrap_or_else(|| panic!("no turns array in {thread}"))
        .clone()
}

/// The types of a turn's items, in order.
pub fn item_types(turn: &Value) -> Vec<String> {
    let items = turn["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items in {turn}"));
    strings_at(items, "type")
}

/// Check that `thread` has one turn, `turn`, cut (`interrupted`), and nothing in progress;
/// that turn.
pub fn assert_one_cut_turn(thread: &Value, turn: &str) -> Value {
    assert_nothing_in_progress(thread);
    let turns = turns(thread);
    assert_eq!(turns.len(), 1, "{thread}");
    assert_eq!(turns[0]["id"], turn);
    assert_eq!(turns[0]["status"], "interrupted");
    turns[0].clone()
}

/// Check that no turn or item of a thread is still `inProgress`.
pub fn assert_nothing_in_progress(thread: &Value) {
    for turn in turns(thread) {
        assert_ne!(
            turn["status"], "inProgress",
            "a turn is in progress: {turn}"
        );
        for item in turn["items"].as_array().into_iter().flatten() {
            assert_ne!(
                item["status"], "inProgress",
                "an item is in progress: {item}"
            );
        }
    }
}
