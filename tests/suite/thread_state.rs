//! Issue 12, per-thread state the Codex TUI uses: `thread/list`'s sort keys and filters with
//! `readStates` and `backwardsCursor`, read receipts (`thread/readState/update`,
//! `thread/readState/changed`), goals (`thread/goal/*`) and background terminals
//! (`thread/backgroundTerminals/*`), and the pursuit of goals (the model's goal tools,
//! continuation turns, accounting). See docs/protocol.md §7.5 and §7.26.
//!
//! Every test's client makes the TUI's handshake (`experimentalApi: true`).

mod goal_pursuit;
mod goal_turns;
mod goals;
mod list_keys;
mod read_state;
mod terminals;

use serde_json::{Value, json};
use weft_mock_model::{MockModel, Reply};
use weft_test_support::{Client, Daemon, RpcError, TestHome, Transport, mock_model_config};

pub use crate::turns::{TurnRun, run_turn_on, start_thread_on, str_at};

/// A mock model, a home, a daemon and one experimental client.
pub struct Tui {
    /// The mock model.
    pub mock: MockModel,
    /// `$WEFT_HOME`, also the threads' cwd.
    pub home: TestHome,
    /// How the daemon is reached.
    pub transport: Transport,
    /// The daemon.
    pub daemon: Daemon,
    /// The client (TUI handshake).
    pub client: Client,
}

impl Tui {
    /// A daemon with the default configuration.
    pub async fn start(transport: Transport) -> Tui {
        Tui::start_with(transport, "").await
    }

    /// A daemon whose `config.toml` also has `extra` (TOML tables).
    pub async fn start_with(transport: Transport, extra: &str) -> Tui {
        let mock = MockModel::start().await.expect("start the mock model");
        let config = format!(
            "{}\n{extra}",
            mock_model_config(&mock.base_url(), "responses")
        );
        let home = TestHome::with_config(&config);
        let (daemon, client) = launch(transport, &home).await;
        Tui {
            mock,
            home,
            transport,
            daemon,
            client,
        }
    }

    /// Stop the daemon and start a new one on the same home, with a new client.
    pub async fn restart(&mut self) {
        self.daemon.sigterm();
        let status = self.daemon.wait_exit().await;
        assert!(status.success(), "the daemon exited with {status}");
        let (daemon, client) = launch(self.transport, &self.home).await;
        self.daemon = daemon;
        self.client = client;
    }

    /// Queue a mock reply.
    pub fn push(&self, reply: Reply) {
        self.mock.push(reply.responses());
    }

    /// `thread/start` (cwd = the home); the thread id.
    pub async fn thread(&mut self) -> String {
        let cwd = self.home.path().display().to_string();
        start_thread_on(&mut self.client, &cwd).await
    }

    /// `thread/start` with these params and cwd = the home; the thread id.
    pub async fn thread_with(&mut self, params: Value) -> String {
        let mut params = params;
        params["cwd"] = json!(self.home.path().display().to_string());
        let started = self.ok("thread/start", params).await;
        str_at(&started, "/thread/id")
    }

    /// One turn answered with `text`, through `turn/completed`.
    pub async fn turn(&mut self, thread: &str, text: &str) -> TurnRun {
        self.push(Reply::new().text(text));
        run_turn_on(&mut self.client, thread, "hello").await
    }

    /// A request that must succeed.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        self.client.request_ok(method, params).await
    }

    /// A request that must fail.
    pub async fn err(&mut self, method: &str, params: Value) -> RpcError {
        self.client.request_err(method, params).await
    }
}

async fn launch(transport: Transport, home: &TestHome) -> (Daemon, Client) {
    let mut daemon = Daemon::start(transport, home, &[]).await;
    let mut client = daemon.client().await;
    client.initialize_experimental().await;
    (daemon, client)
}

/// The methods of a message list, notifications by method, answers as `response`.
pub fn labels(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m.get("method").and_then(Value::as_str) {
            Some(method) if m.get("id").is_none() => method.to_string(),
            _ => "response".to_string(),
        })
        .collect()
}

/// Every message up to and including the answer to request `id`.
pub async fn through_answer(client: &mut Client, id: &Value) -> Vec<Value> {
    crate::turns::read_through(client, |m| {
        m.get("method").is_none() && m.get("id") == Some(id)
    })
    .await
}

/// `{"threadId": thread}`.
pub fn thread_param(thread: &str) -> Value {
    json!({ "threadId": thread })
}
