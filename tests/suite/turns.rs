//! Issue 3, threads and turns: the thread actor, the turn loop, streaming, steer, interrupt,
//! stop hooks, retries and the item notifications, driven end to end against the scripted mock
//! model (`weft-mock-model`). See `docs/protocol.md` §6–§8 and §10 and
//! `docs/architecture.md` §5–§6; the expected orders follow the reference's recorded scenarios
//! (one example of every message is in `tests/reference/codex-transcripts/message_catalog.json`).
//!
//! Every test starts its own mock model and daemon; the daemon is configured through
//! `$WEFT_HOME/config.toml` with a `[model_providers.mock]` pointing at the mock. Tests wait on
//! notifications and on the mock's request log, never on sleeps.

mod context;
mod errors;
mod failures;
mod hooks;
mod interrupt;
mod listing;
mod replies;
mod steer;
mod streaming;
mod subscribers;

use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{MockModel, RecordedRequest, Reply, Script, WireApi};
use weft_test_support::{Client, DEFAULT_TIMEOUT, Daemon, RpcError, TestHome, Transport};

pub use replies::{gated_message, partial_message, wait_gate};

/// `-32600`.
pub const INVALID_REQUEST: i64 = -32600;

/// How the daemon's `config.toml` is written: a `[model_providers.mock]` table pointing at the
/// mock model, plus whatever a test needs.
#[derive(Debug, Clone)]
pub struct Setup {
    /// `stdio://` or `ws://127.0.0.1:0`.
    pub transport: Transport,
    /// The provider's `wire_api`.
    pub wire_api: WireApi,
    /// `request_max_retries` (default 0: failures show at once).
    pub request_max_retries: u32,
    /// `stream_max_retries` (default 0).
    pub stream_max_retries: u32,
    /// `stream_idle_timeout_ms` (default 10 s).
    pub stream_idle_timeout_ms: u64,
    /// `env_key` of the provider.
    pub env_key: Option<String>,
    /// `initialize` params of the first client (default: plain `weft-e2e`).
    pub init_params: Option<Value>,
    /// Stop hooks: (name, shell script); each is written to `$WEFT_HOME/hooks/<name>.sh` and
    /// configured as `[[hooks.stop]] command = ["sh", <path>]`, in this order.
    pub stop_hooks: Vec<(String, String)>,
    /// More `config.toml`, appended as written (e.g. `[mcp_servers.*]` tables).
    pub extra_toml: String,
    /// Variables set in the daemon's environment.
    pub env: Vec<(String, String)>,
}

impl Setup {
    /// A Responses-API mock with retries off.
    pub fn new(transport: Transport) -> Setup {
        Setup {
            transport,
            wire_api: WireApi::Responses,
            request_max_retries: 0,
            stream_max_retries: 0,
            stream_idle_timeout_ms: 10_000,
            env_key: None,
            init_params: None,
            stop_hooks: Vec::new(),
            extra_toml: String::new(),
            env: Vec::new(),
        }
    }

    /// Set a variable in the daemon's environment.
    pub fn daemon_env(mut self, key: &str, value: &str) -> Setup {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Append this to `config.toml`.
    pub fn config(mut self, toml: &str) -> Setup {
        self.extra_toml.push('\n');
        self.extra_toml.push_str(toml);
        self
    }

    /// Use this wire API.
    pub fn wire_api(mut self, wire_api: WireApi) -> Setup {
        self.wire_api = wire_api;
        self
    }

    /// Set `request_max_retries` and `stream_max_retries`.
    pub fn retries(mut self, request: u32, stream: u32) -> Setup {
        self.request_max_retries = request;
        self.stream_max_retries = stream;
        self
    }

    /// Set `stream_idle_timeout_ms`.
    pub fn idle_timeout_ms(mut self, millis: u64) -> Setup {
        self.stream_idle_timeout_ms = millis;
        self
    }

    /// Set the provider's `env_key`.
    pub fn env_key(mut self, name: &str) -> Setup {
        self.env_key = Some(name.to_owned());
        self
    }

    /// Add a stop hook running `sh $WEFT_HOME/hooks/<name>.sh` with this script.
    pub fn stop_hook(mut self, name: &str, script: &str) -> Setup {
        self.stop_hooks.push((name.to_owned(), script.to_owned()));
        self
    }

    /// `initialize` params for the first client.
    pub fn init_params(mut self, params: Value) -> Setup {
        self.init_params = Some(params);
        self
    }

    pub fn config_toml(&self, base_url: &str, home: &TestHome) -> String {
        let wire_api = match self.wire_api {
            WireApi::Responses => "responses",
            WireApi::Chat => "chat",
        };
        let mut toml = format!(
            "model = \"mock-model\"\n\
             model_provider = \"mock\"\n\
             \n\
             [model_providers.mock]\n\
             name = \"Mock model\"\n\
             base_url = {}\n\
             wire_api = \"{wire_api}\"\n\
             request_max_retries = {}\n\
             stream_max_retries = {}\n\
             stream_idle_timeout_ms = {}\n",
            toml_string(base_url),
            self.request_max_retries,
            self.stream_max_retries,
            self.stream_idle_timeout_ms,
        );
        if let Some(env_key) = &self.env_key {
            toml.push_str(&format!("env_key = {}\n", toml_string(env_key)));
        }
        toml.push('\n');
        for (name, script) in &self.stop_hooks {
            let path = home.write_file(&format!("hooks/{name}.sh"), script);
            toml.push_str(&format!(
                "\n[[hooks.stop]]\ncommand = [\"sh\", {}]\ntimeout = 10\n",
                toml_string(&path.display().to_string())
            ));
        }
        toml.push_str(&self.extra_toml);
        toml
    }
}

/// A TOML basic string (JSON string escaping is valid TOML for what tests put in).
pub fn toml_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// A mock model, a daemon configured to use it, and one initialized client.
pub struct Harness {
    /// The mock model (its request log, scripts).
    pub mock: MockModel,
    /// `$WEFT_HOME`; also the threads' cwd.
    pub home: TestHome,
    /// The daemon.
    pub daemon: Daemon,
    /// The first connection, initialized.
    pub client: Client,
    /// The provider's wire API (for rendering replies).
    pub wire_api: WireApi,
}

impl Harness {
    /// Start everything per `setup`.
    pub async fn start(setup: Setup) -> Harness {
        let mock = MockModel::start().await.expect("start the mock model");
        let home = TestHome::new();
        home.write_config(&setup.config_toml(&mock.base_url(), &home));
        // A daemon never inherits a key for the mock's `env_key`.
        let mut builder = Daemon::builder(&home).listen(setup.transport.listen_url());
        if let Some(env_key) = &setup.env_key {
            builder = builder.env_remove(env_key);
        }
        for (key, value) in &setup.env {
            builder = builder.env(key, value);
        }
        let mut daemon = builder.start().await;
        let mut client = daemon.client().await;
        match &setup.init_params {
            Some(params) => {
                client.initialize_with(params.clone()).await;
            }
            None => {
                client.initialize().await;
            }
        }
        Harness {
            mock,
            home,
            daemon,
            client,
            wire_api: setup.wire_api,
        }
    }

    /// A Responses-API harness with retries off.
    pub async fn responses(transport: Transport) -> Harness {
        Harness::start(Setup::new(transport)).await
    }

    /// Queue a reply rendered for this harness's wire API.
    pub fn push(&self, reply: Reply) {
        self.mock.push(reply.render(self.wire_api));
    }

    /// Queue a raw script (HTTP errors).
    pub fn push_script(&self, script: Script) {
        self.mock.push(script);
    }

    /// Another connection (WebSocket only), initialized.
    pub async fn second_client(&mut self) -> Client {
        self.daemon.initialized_client().await
    }

    /// `thread/start` (cwd = the home folder, approval `never`, sandbox `read-only`, as in the
    /// reference transcripts); waits for `thread/started` and returns the thread id.
    pub async fn start_thread(&mut self) -> String {
        let cwd = self.home.path().display().to_string();
        start_thread_on(&mut self.client, &cwd).await
    }

    /// `turn/start` with one text input; returns the turn id from the response.
    pub async fn start_turn(&mut self, thread_id: &str, text: &str) -> String {
        let result = self
            .client
            .request("turn/start", turn_start_params(thread_id, text))
            .await
            .unwrap_or_else(|err| panic!("turn/start failed: {err}"));
        assert_eq!(result["turn"]["status"], "inProgress", "{result}");
        str_at(&result, "/turn/id")
    }

    /// `turn/start`, then every message up to and including `turn/completed` (the response
    /// included, in arrival order).
    pub async fn run_turn(&mut self, thread_id: &str, text: &str) -> TurnRun {
        run_turn_on(&mut self.client, thread_id, text).await
    }

    /// `turn/start` with these params, then every message through `turn/completed` (see
    /// [`run_turn_with_on`]).
    pub async fn run_turn_with(&mut self, params: Value) -> TurnRun {
        run_turn_with_on(&mut self.client, params).await
    }

    /// A new thread with one turn on it: `text`, which the model answers with `answer`. The
    /// thread and the run.
    pub async fn thread_with_turn(&mut self, answer: &str, text: &str) -> (String, TurnRun) {
        self.push(Reply::new().text(answer));
        let thread = self.start_thread().await;
        let run = self.run_turn(&thread, text).await;
        (thread, run)
    }

    /// The text output the model got for `call_id` in its `n`th request (1-based), waiting
    /// for that request.
    pub async fn output_in(&self, n: usize, call_id: &str) -> String {
        let requests = self.wait_for_requests(n).await;
        crate::tools::output_of(&requests[n - 1], call_id)
    }

    /// Wait for the mock to have seen `n` model requests.
    pub async fn wait_for_requests(&self, n: usize) -> Vec<RecordedRequest> {
        model_requests(&self.mock, n).await
    }
}

/// Wait for `mock` to have seen `n` model requests; returns them.
pub async fn model_requests(mock: &MockModel, n: usize) -> Vec<RecordedRequest> {
    mock.wait_for_requests(n, DEFAULT_TIMEOUT)
        .await
        .expect("model requests")
}

/// `thread/start` on any client; waits for `thread/started` and returns the thread id.
pub async fn start_thread_on(client: &mut Client, cwd: &str) -> String {
    crate::tools::start_thread(client, cwd, "never", "read-only").await
}

/// The index of the first `wanted` in `list`; fails naming the list when it is not there.
pub fn index_of(list: &[String], wanted: &str) -> usize {
    list.iter()
        .position(|item| item == wanted)
        .unwrap_or_else(|| panic!("no {wanted}: {list:?}"))
}

/// The `id`s of a list answer's `data` (`model/list`'s models, say).
pub fn ids(result: &Value) -> Vec<&str> {
    result["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|m| m["id"].as_str().expect("id"))
        .collect()
}

/// `turn/start` params with one text input.
pub fn turn_start_params(thread_id: &str, text: &str) -> Value {
    json!({"threadId": thread_id, "input": [text_input(text)]})
}

/// A `text` user input.
pub fn text_input(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// What one turn produced, as one client saw it.
pub struct TurnRun {
    /// The id from the `turn/start` response.
    pub turn_id: String,
    /// Every message from the response through `turn/completed`, in arrival order.
    pub messages: Vec<Value>,
}

impl TurnRun {
    /// The `turn/completed` params' turn.
    pub fn completed_turn(&self) -> &Value {
        &self
            .messages
            .last()
            .expect("turn/completed is the last message")["params"]["turn"]
    }

    /// The completed turn's error message (empty if it has none), checking the turn failed.
    pub fn failure_message(&self) -> String {
        let turn = self.completed_turn();
        assert_eq!(turn["status"], "failed", "{turn}");
        turn["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The notifications with this method.
    pub fn notifications(&self, method: &str) -> Vec<&Value> {
        notifications(&self.messages, method)
    }

    /// The completed items (`item/completed` params' `item`) in order.
    pub fn completed_items(&self) -> Vec<&Value> {
        self.notifications("item/completed")
            .into_iter()
            .map(|m| &m["params"]["item"])
            .collect()
    }

    /// The completed items of this type.
    pub fn completed_items_of(&self, kind: &str) -> Vec<&Value> {
        self.completed_items()
            .into_iter()
            .filter(|item| item["type"] == kind)
            .collect()
    }

    /// One label per message (see [`label`]).
    pub fn labels(&self) -> Vec<String> {
        self.messages.iter().map(label).collect()
    }
}

/// `turn/start` on `client`, then read through `turn/completed`.
pub async fn run_turn_on(client: &mut Client, thread_id: &str, text: &str) -> TurnRun {
    run_turn_with_on(client, turn_start_params(thread_id, text)).await
}

/// `turn/start` on `client` with these params, which must succeed, then read through
/// `turn/completed`, which must be that turn's.
pub async fn run_turn_with_on(client: &mut Client, params: Value) -> TurnRun {
    let id = client.send_request("turn/start", params).await;
    let messages = read_through_turn_completed(client).await;
    let response = messages
        .iter()
        .find(|m| m.get("method").is_none() && m.get("id") == Some(&id))
        .unwrap_or_else(|| panic!("no turn/start response before turn/completed: {messages:?}"));
    assert!(
        response.get("error").is_none(),
        "turn/start failed: {response}"
    );
    let turn_id = str_at(response, "/result/turn/id");
    let completed = messages.last().expect("at least turn/completed");
    assert_eq!(
        completed["params"]["turn"]["id"],
        turn_id.as_str(),
        "turn/completed of another turn"
    );
    TurnRun { turn_id, messages }
}

/// Every message up to and including the next `turn/completed`.
pub async fn read_through_turn_completed(client: &mut Client) -> Vec<Value> {
    let mut messages = Vec::new();
    loop {
        let msg = client.next_message().await;
        let done = msg["method"] == "turn/completed";
        messages.push(msg);
        if done {
            return messages;
        }
    }
}

/// [`read_through_turn_completed`], checking the turn ended with `status`.
pub async fn read_through_turn_ending(client: &mut Client, status: &str) -> Vec<Value> {
    let messages = read_through_turn_completed(client).await;
    let turn = &messages.last().expect("turn/completed")["params"]["turn"];
    assert_eq!(turn["status"], status);
    messages
}

/// Every message up to and including the first one matching `pred`.
pub async fn read_through(client: &mut Client, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut messages = Vec::new();
    loop {
        let msg = client.next_message().await;
        let done = pred(&msg);
        messages.push(msg);
        if done {
            return messages;
        }
    }
}

/// The notifications with this method.
pub fn notifications<'a>(messages: &'a [Value], method: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m.get("id").is_none() && m["method"] == method)
        .collect()
}

/// A short label for a message, for order assertions: `response` / `error-response` for answers,
/// `thread/status/changed:<type>`, `item/started:<item type>`, `item/completed:<item type>`,
/// and the method for other notifications.
pub fn label(msg: &Value) -> String {
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        return if msg.get("error").is_some() {
            "error-response".into()
        } else {
            "response".into()
        };
    };
    match method {
        "thread/status/changed" => {
            format!(
                "{method}:{}",
                msg["params"]["status"]["type"].as_str().unwrap_or("?")
            )
        }
        "item/started" | "item/completed" => {
            format!(
                "{method}:{}",
                msg["params"]["item"]["type"].as_str().unwrap_or("?")
            )
        }
        _ => method.to_owned(),
    }
}

/// The [`label`]s a `turn/start` run opens with, through the user's message.
pub const TURN_OPENING: &[&str] = &[
    "response",
    "thread/status/changed:active",
    "turn/started",
    "item/started:userMessage",
    "item/completed:userMessage",
];

/// The [`label`]s of an agent message streamed as one delta.
pub const AGENT_MESSAGE: &[&str] = &[
    "item/started:agentMessage",
    "item/agentMessage/delta",
    "item/completed:agentMessage",
];

/// The [`label`]s a completed turn closes with.
pub const TURN_CLOSING: &[&str] = &[
    "thread/tokenUsage/updated",
    "thread/status/changed:idle",
    "turn/completed",
];

/// Labels with runs of the same label collapsed into one (`label×n` for n > 1).
pub fn collapse(labels: &[String]) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for label in labels {
        match out.last_mut() {
            Some((last, n)) if last == label => *n += 1,
            _ => out.push((label.clone(), 1)),
        }
    }
    out.into_iter()
        .map(|(label, n)| {
            if n == 1 {
                label
            } else {
                format!("{label}×{n}")
            }
        })
        .collect()
}

/// The string at a JSON pointer; panics if absent.
pub fn str_at(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {value}"))
        .to_owned()
}

/// Unwrap an error answer and check it is `-32600` with exactly this message.
pub fn assert_invalid_request(answer: Result<Value, RpcError>, message: &str) {
    match answer {
        Ok(result) => panic!("expected the error `{message}`, got the result {result}"),
        Err(err) => assert_eq!(
            (err.code, err.message.as_str()),
            (INVALID_REQUEST, message),
            "unexpected error {err:?}"
        ),
    }
}

/// The texts of the user messages a model request carried (either wire API).
pub fn user_texts(request: &RecordedRequest) -> Vec<String> {
    role_texts(request, "user")
}

/// The texts of the assistant messages a model request carried (either wire API).
pub fn assistant_texts(request: &RecordedRequest) -> Vec<String> {
    role_texts(request, "assistant")
}

fn role_texts(request: &RecordedRequest, role: &str) -> Vec<String> {
    if !request.input().is_empty() {
        return request.message_texts(role);
    }
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == role)
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<String>(),
            _ => String::new(),
        })
        .collect()
}

/// A short pause budget for "nothing else arrives" checks.
pub const QUIET: Duration = weft_test_support::QUIET_PERIOD;
