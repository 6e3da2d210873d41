//! A JSON-RPC client for the daemon, over stdio (one message per line) or WebSocket (one
//! message per text frame).
//!
//! Every read has a timeout ([`crate::DEFAULT_TIMEOUT`] unless changed with
//! [`Client::set_timeout`]); a test never hangs. Every message received is validated (see
//! [`crate::schema`]) before a test sees it, and logged; the log is printed if the test panics.
//! Messages that arrive while the client waits for something else are kept, in order, and
//! handed out by later reads.

mod failure;
mod receive;
pub mod transport;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::process::{ChildStdin, ChildStdout};
use weft_protocol::Method;

use crate::{DEFAULT_TIMEOUT, clip};
pub use transport::WsHandshakeError;
use transport::{Reader, Writer};

/// A JSON-RPC error object returned by the daemon.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// `error.code`.
    pub code: i64,
    /// `error.message`.
    pub message: String,
    /// `error.data`, if present.
    pub data: Option<Value>,
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for RpcError {}

impl RpcError {
    fn from_error_object(error: &Value) -> RpcError {
        RpcError {
            code: error["code"].as_i64().unwrap_or_default(),
            message: error["message"].as_str().unwrap_or_default().to_owned(),
            data: error.get("data").cloned(),
        }
    }
}

/// The outcome of one read with [`Client::recv`].
#[derive(Debug, Clone, PartialEq)]
pub enum Recv {
    /// A message (already validated).
    Message(Value),
    /// The daemon closed the connection (stdout EOF, WebSocket close or error); the text says
    /// how.
    Closed(String),
    /// Nothing arrived in time.
    TimedOut,
}

/// A JSON-RPC connection to the daemon.
pub struct Client {
    label: String,
    writer: Writer,
    reader: Reader,
    timeout: Duration,
    next_id: i64,
    /// Requests sent and not yet answered: id (as JSON text, so `1` and `"1"` differ) → methods.
    in_flight: HashMap<String, VecDeque<String>>,
    /// Received but not yet consumed, in arrival order.
    queue: VecDeque<Value>,
    log: Vec<Value>,
    closed: Option<String>,
    /// Payloads of WebSocket pongs received.
    pongs: Vec<Vec<u8>>,
    /// Set by [`Client::fail`], whose panic message already holds the log.
    failed: std::cell::Cell<bool>,
}

impl Client {
    /// A client over a daemon's stdin/stdout.
    pub fn stdio(stdin: ChildStdin, stdout: ChildStdout) -> Client {
        Client::new("stdio".into(), transport::stdio(stdin, stdout))
    }

    /// Connect to a WebSocket URL (`ws://127.0.0.1:PORT`); panics if the upgrade fails.
    pub async fn connect_ws(url: &str) -> Client {
        match Client::connect_ws_with_headers(url, &[]).await {
            Ok(client) => client,
            Err(err) => panic!("WebSocket connection to {url} failed: {err}"),
        }
    }

    /// Connect to the `unix://` control socket at `path`; panics if the upgrade fails.
    pub async fn connect_unix(path: &std::path::Path) -> Client {
        match transport::connect_unix(path, DEFAULT_TIMEOUT).await {
            Ok(halves) => Client::new(format!("unix {}", path.display()), halves),
            Err(err) => panic!("connection to unix://{} failed: {err}", path.display()),
        }
    }

    /// A WebSocket connection over any byte stream (e.g. a `weft app-server proxy`'s stdio),
    /// labelled `label`; panics if the upgrade fails.
    pub async fn connect_ws_over<S>(label: &str, stream: S) -> Client
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        match transport::connect_over(stream, DEFAULT_TIMEOUT).await {
            Ok(halves) => Client::new(label.to_owned(), halves),
            Err(err) => panic!("WebSocket over {label} failed: {err}"),
        }
    }

    /// Connect with extra upgrade-request headers (`Authorization`, `Origin`, …).
    pub async fn connect_ws_with_headers(
        url: &str,
        headers: &[(&str, &str)],
    ) -> Result<Client, WsHandshakeError> {
        let halves = transport::connect_ws(url, headers, DEFAULT_TIMEOUT).await?;
        Ok(Client::new(format!("ws {url}"), halves))
    }

    fn new(label: String, (writer, reader): (Writer, Reader)) -> Client {
        Client {
            label,
            writer,
            reader,
            timeout: DEFAULT_TIMEOUT,
            next_id: 1,
            in_flight: HashMap::new(),
            queue: VecDeque::new(),
            log: Vec::new(),
            closed: None,
            pongs: Vec::new(),
            failed: std::cell::Cell::new(false),
        }
    }

    /// Change the per-read timeout.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Every message received so far, in order.
    pub fn log(&self) -> &[Value] {
        &self.log
    }

    // ---- sending ------------------------------------------------------------------------

    /// Send one raw message: a line on stdio (a `\n` is added), a text frame on WebSocket.
    /// If the text is a request (`id` + `method`), its id is remembered so the response can be
    /// validated against that method's schema.
    pub async fn send_raw(&mut self, text: &str) {
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            self.remember_request(&value);
        }
        if let Err(problem) = self.writer.send_text(text, self.timeout).await {
            self.fail(&problem);
        }
    }

    /// Send a JSON value as one message (compact).
    pub async fn send_json(&mut self, value: Value) {
        self.send_raw(&value.to_string()).await;
    }

    /// Send a request with the next integer id and return that id without waiting.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send_json(json!({"id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Send a request and wait for its answer; notifications and other messages that arrive
    /// meanwhile are kept for later reads.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.send_request(method, params).await;
        self.response_to(&id).await
    }

    /// [`Client::request`] for a request that must succeed: its result (an error answer fails
    /// the test).
    pub async fn request_ok(&mut self, method: &str, params: Value) -> Value {
        match self.request(method, params).await {
            Ok(result) => result,
            Err(err) => self.fail(&format!("`{method}` failed: {err}")),
        }
    }

    /// [`Client::request`] for a request that must fail: its error (a result fails the test).
    pub async fn request_err(&mut self, method: &str, params: Value) -> RpcError {
        match self.request(method, params).await {
            Ok(result) => self.fail(&format!("`{method}` succeeded with {result}")),
            Err(err) => err,
        }
    }

    /// Typed request: `client.call::<methods::ThreadStart>(params)` sends `M::NAME` with the
    /// serialized params and decodes the result as `M::Response` (a result that does not
    /// decode fails the test).
    pub async fn call<M: Method>(&mut self, params: M::Params) -> Result<M::Response, RpcError> {
        let params = serde_json::to_value(params).expect("serialize params");
        let result = self.request(M::NAME, params).await?;
        match serde_json::from_value(result.clone()) {
            Ok(typed) => Ok(typed),
            Err(err) => self.fail(&format!(
                "the `{}` result does not decode as the protocol type: {err}\nresult: {}",
                M::NAME,
                clip(&result.to_string(), 2000)
            )),
        }
    }

    /// Wait for a notification and decode its `params` as `T`.
    pub async fn wait_for_notification_as<T: DeserializeOwned>(&mut self, method: &str) -> T {
        let msg = self.wait_for_notification(method).await;
        match serde_json::from_value(msg["params"].clone()) {
            Ok(params) => params,
            Err(err) => self.fail(&format!(
                "`{method}` params do not decode: {err}\nmessage: {}",
                clip(&msg.to_string(), 2000)
            )),
        }
    }

    /// Send a request with an explicit id (any JSON value) and wait for its answer.
    pub async fn request_with_id(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        self.send_json(json!({"id": id, "method": method, "params": params}))
            .await;
        self.response_to(&id).await
    }

    /// WebSocket only: send a ping and wait for the pong with the same payload (messages that
    /// arrive meanwhile are kept).
    pub async fn ping(&mut self, payload: &[u8]) {
        if let Err(problem) = self.writer.ping(payload, self.timeout).await {
            self.fail(&problem);
        }
        let deadline = tokio::time::Instant::now() + self.timeout;
        while !self.pongs.iter().any(|p| p == payload) {
            let now = tokio::time::Instant::now();
            if now >= deadline {
                self.fail("no pong to our ping");
            }
            match self.read_new_or_pong(deadline - now, true).await {
                Recv::Message(msg) => self.queue.push_back(msg),
                Recv::Closed(how) => self.fail(&format!("closed ({how}) while waiting for a pong")),
                Recv::TimedOut => {}
            }
        }
    }

    /// Send a notification (no id).
    pub async fn notify(&mut self, method: &str, params: Option<Value>) {
        let mut msg = json!({"method": method});
        if let Some(params) = params {
            msg["params"] = params;
        }
        self.send_json(msg).await;
    }

    /// The standard handshake: `initialize` (client `weft-e2e`, default capabilities), then
    /// the `initialized` notification. Returns the `initialize` result.
    pub async fn initialize(&mut self) -> Value {
        self.initialize_with(json!({
            "clientInfo": {"name": "weft-e2e", "title": "Weft e2e tests", "version": "0.1.0"}
        }))
        .await
    }

    /// The handshake as the Codex TUI makes it: capabilities `experimentalApi: true` and
    /// `requiredHumanApproval: true` (for experimental methods and params). Returns the
    /// `initialize` result.
    pub async fn initialize_experimental(&mut self) -> Value {
        self.initialize_with(json!({
            "clientInfo": {"name": "weft-e2e", "title": "Weft e2e tests", "version": "0.1.0"},
            "capabilities": {"experimentalApi": true, "requiredHumanApproval": true}
        }))
        .await
    }

    /// The handshake with explicit `initialize` params; panics if `initialize` fails.
    pub async fn initialize_with(&mut self, params: Value) -> Value {
        let result = match self.request("initialize", params).await {
            Ok(result) => result,
            Err(err) => self.fail(&format!("initialize failed: {err}")),
        };
        self.notify("initialized", None).await;
        result
    }

    /// Send bytes as they are: on stdio, without adding a newline (to cut a message short);
    /// on WebSocket, as one binary frame.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        if let Err(problem) = self.writer.send_bytes(bytes, self.timeout).await {
            self.fail(&problem);
        }
    }

    /// Close our side: stdio closes the daemon's stdin (EOF); WebSocket sends a close frame.
    pub async fn close(&mut self) {
        self.writer.close(self.timeout).await;
    }

    /// Like [`Client::send_raw`] but returns an error instead of panicking when the daemon
    /// has gone away (for tests that expect a disconnect).
    pub async fn try_send_raw(&mut self, text: &str) -> Result<(), String> {
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            self.remember_request(&value);
        }
        self.writer.send_text(text, self.timeout).await
    }
}
