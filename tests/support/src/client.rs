//! A JSON-RPC client for the daemon, over stdio (one message per line) or WebSocket (one
//! message per text frame).
//!
//! Every read has a timeout ([`crate::DEFAULT_TIMEOUT`] unless changed with
//! [`Client::set_timeout`]); a test never hangs. Every message received is validated (see
//! [`crate::schema`]) before a test sees it, and logged; the log is printed if the test panics.
//! Messages that arrive while the client waits for something else are kept, in order, and
//! handed out by later reads.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::{ChildStdin, ChildStdout};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use weft_protocol::Method;

use crate::{DEFAULT_TIMEOUT, clip, schema};

type WsStream = WebSocketStream<MaybeTlsStream<TcpStream>>;

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

/// Why a WebSocket upgrade failed.
#[derive(Debug)]
pub enum WsHandshakeError {
    /// The server answered the upgrade with this HTTP status (and body).
    Status(u16, String),
    /// Any other failure (connection refused, protocol error, timeout).
    Other(String),
}

impl WsHandshakeError {
    /// The HTTP status, if the server answered with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            WsHandshakeError::Status(status, _) => Some(*status),
            WsHandshakeError::Other(_) => None,
        }
    }
}

impl fmt::Display for WsHandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WsHandshakeError::Status(status, body) => {
                write!(f, "upgrade refused with HTTP {status}: {body}")
            }
            WsHandshakeError::Other(err) => write!(f, "upgrade failed: {err}"),
        }
    }
}

enum Conn {
    Stdio {
        stdin: Option<ChildStdin>,
        stdout: ChildStdout,
        /// Bytes read but not yet split into lines. Kept across reads so that a read cut short
        /// by a timeout loses nothing.
        pending: Vec<u8>,
        eof: bool,
    },
    Ws(Box<WsStream>),
}

/// A JSON-RPC connection to the daemon.
pub struct Client {
    label: String,
    conn: Conn,
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
        Client::new(
            "stdio".into(),
            Conn::Stdio {
                stdin: Some(stdin),
                stdout,
                pending: Vec::new(),
                eof: false,
            },
        )
    }

    /// Connect to a WebSocket URL (`ws://127.0.0.1:PORT`); panics if the upgrade fails.
    pub async fn connect_ws(url: &str) -> Client {
        match Client::connect_ws_with_headers(url, &[]).await {
            Ok(client) => client,
            Err(err) => panic!("WebSocket connection to {url} failed: {err}"),
        }
    }

    /// Connect with extra upgrade-request headers (`Authorization`, `Origin`, …).
    pub async fn connect_ws_with_headers(
        url: &str,
        headers: &[(&str, &str)],
    ) -> Result<Client, WsHandshakeError> {
        let mut request = url
            .into_client_request()
            .map_err(|err| WsHandshakeError::Other(err.to_string()))?;
        for (name, value) in headers {
            let name: tungstenite::http::HeaderName = name
                .parse()
                .map_err(|_| WsHandshakeError::Other(format!("bad header name {name}")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| WsHandshakeError::Other(format!("bad header value {value}")))?;
            request.headers_mut().insert(name, value);
        }
        let connect = tokio_tungstenite::connect_async(request);
        match tokio::time::timeout(DEFAULT_TIMEOUT, connect).await {
            Err(_) => Err(WsHandshakeError::Other("timed out".into())),
            Ok(Err(tungstenite::Error::Http(response))) => {
                let body = response
                    .body()
                    .as_deref()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default();
                Err(WsHandshakeError::Status(response.status().as_u16(), body))
            }
            Ok(Err(err)) => Err(WsHandshakeError::Other(err.to_string())),
            Ok(Ok((stream, _response))) => {
                Ok(Client::new(format!("ws {url}"), Conn::Ws(Box::new(stream))))
            }
        }
    }

    fn new(label: String, conn: Conn) -> Client {
        Client {
            label,
            conn,
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
        match &mut self.conn {
            Conn::Stdio { .. } => {
                let mut line = Vec::with_capacity(text.len() + 1);
                line.extend_from_slice(text.as_bytes());
                line.push(b'\n');
                self.write_stdin(&line).await;
            }
            Conn::Ws(_) => self.send_ws(Message::text(text)).await,
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
        self.send_ws(Message::Ping(payload.to_vec().into())).await;
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
        match &mut self.conn {
            Conn::Stdio { .. } => self.write_stdin(bytes).await,
            Conn::Ws(_) => self.send_ws(Message::binary(bytes.to_vec())).await,
        }
    }

    /// Close our side: stdio closes the daemon's stdin (EOF); WebSocket sends a close frame.
    pub async fn close(&mut self) {
        match &mut self.conn {
            Conn::Stdio { stdin, .. } => {
                if let Some(mut stdin) = stdin.take() {
                    let _ = stdin.shutdown().await;
                }
            }
            Conn::Ws(stream) => {
                let _ = tokio::time::timeout(self.timeout, SinkExt::close(stream)).await;
            }
        }
    }

    async fn write_stdin(&mut self, bytes: &[u8]) {
        let timeout = self.timeout;
        let Conn::Stdio { stdin, .. } = &mut self.conn else {
            unreachable!("write_stdin on a WebSocket client");
        };
        let Some(stdin) = stdin.as_mut() else {
            self.fail("write after close()");
        };
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => self.fail(&format!("writing to the daemon's stdin failed: {err}")),
            Err(_) => self.fail("writing to the daemon's stdin timed out"),
        }
    }

    async fn send_ws(&mut self, message: Message) {
        let timeout = self.timeout;
        let Conn::Ws(stream) = &mut self.conn else {
            unreachable!("send_ws on a stdio client");
        };
        match tokio::time::timeout(timeout, stream.send(message)).await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => self.fail(&format!("WebSocket send failed: {err}")),
            Err(_) => self.fail("WebSocket send timed out"),
        }
    }

    /// Like [`Client::send_raw`] but returns an error instead of panicking when the daemon
    /// has gone away (for tests that expect a disconnect).
    pub async fn try_send_raw(&mut self, text: &str) -> Result<(), String> {
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            self.remember_request(&value);
        }
        let timeout = self.timeout;
        match &mut self.conn {
            Conn::Stdio { stdin, .. } => {
                let stdin = stdin.as_mut().ok_or("closed")?;
                let write = async {
                    stdin.write_all(text.as_bytes()).await?;
                    stdin.write_all(b"\n").await?;
                    stdin.flush().await
                };
                tokio::time::timeout(timeout, write)
                    .await
                    .map_err(|_| "timed out".to_owned())?
                    .map_err(|e| e.to_string())
            }
            Conn::Ws(stream) => tokio::time::timeout(timeout, stream.send(Message::text(text)))
                .await
                .map_err(|_| "timed out".to_owned())?
                .map_err(|e| e.to_string()),
        }
    }

    fn remember_request(&mut self, value: &Value) {
        if let (Some(id), Some(method)) = (value.get("id"), value.get("method")) {
            let method = method.as_str().unwrap_or("<non-string method>").to_owned();
            self.in_flight
                .entry(id.to_string())
                .or_default()
                .push_back(method);
        }
    }

    // ---- receiving ----------------------------------------------------------------------

    /// The next message (kept ones first); panics on timeout or close.
    pub async fn next_message(&mut self) -> Value {
        match self.recv(self.timeout).await {
            Recv::Message(msg) => msg,
            Recv::Closed(how) => self.fail(&format!("connection closed ({how})")),
            Recv::TimedOut => self.fail(&format!("no message within {:?}", self.timeout)),
        }
    }

    /// The next message (kept ones first), a close, or a timeout after `timeout`.
    pub async fn recv(&mut self, timeout: Duration) -> Recv {
        if let Some(msg) = self.queue.pop_front() {
            return Recv::Message(msg);
        }
        self.read_new(timeout).await
    }

    /// Wait for a message matching `pred`; others are kept for later. Panics on timeout or
    /// close, naming `what`.
    pub async fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(pos) = self.queue.iter().position(&pred) {
            return self.queue.remove(pos).expect("position is in range");
        }
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.read_new(left).await {
                Recv::Message(msg) if pred(&msg) => return msg,
                Recv::Message(msg) => self.queue.push_back(msg),
                Recv::Closed(how) => self.fail(&format!(
                    "connection closed ({how}) while waiting for {what}"
                )),
                Recv::TimedOut => self.fail(&format!(
                    "timed out after {:?} waiting for {what}",
                    self.timeout
                )),
            }
        }
    }

    /// The answer (result or error) to the request with this id.
    pub async fn response_to(&mut self, id: &Value) -> Result<Value, RpcError> {
        let what = format!("the response to request id {id}");
        let msg = self
            .wait_for(&what, |m| {
                m.get("method").is_none()
                    && m.get("id") == Some(id)
                    && (m.get("result").is_some() || m.get("error").is_some())
            })
            .await;
        match msg.get("error") {
            Some(error) => Err(RpcError::from_error_object(error)),
            None => Ok(msg["result"].clone()),
        }
    }

    /// Wait for a server notification with this method; returns the whole message
    /// (`method`, `params`, `emittedAtMs`, …).
    pub async fn wait_for_notification(&mut self, method: &str) -> Value {
        let what = format!("a `{method}` notification");
        self.wait_for(&what, |m| {
            m.get("id").is_none() && m.get("method").and_then(Value::as_str) == Some(method)
        })
        .await
    }

    /// Assert that nothing arrives within `within` (keep it short: this is the one
    /// time-based check, for "no reply" rules).
    pub async fn expect_no_message_within(&mut self, within: Duration) {
        if let Some(msg) = self.queue.front().cloned() {
            self.fail(&format!("expected no message, but one was pending: {msg}"));
        }
        match self.read_new(within).await {
            Recv::TimedOut => {}
            Recv::Message(msg) => self.fail(&format!(
                "expected no message within {within:?}, got {}",
                clip(&msg.to_string(), 2000)
            )),
            Recv::Closed(how) => self.fail(&format!(
                "expected no message within {within:?}, but the connection closed ({how})"
            )),
        }
    }

    /// Read until the daemon closes the connection; returns the messages that came first.
    /// Panics if the connection stays open longer than the timeout after the last message.
    pub async fn read_until_closed(&mut self) -> Vec<Value> {
        let mut messages: Vec<Value> = self.queue.drain(..).collect();
        loop {
            match self.read_new(self.timeout).await {
                Recv::Message(msg) => messages.push(msg),
                Recv::Closed(_) => return messages,
                Recv::TimedOut => self.fail(&format!(
                    "the connection stayed open for {:?} after {} messages",
                    self.timeout,
                    messages.len()
                )),
            }
        }
    }

    /// Read and validate one new message from the transport.
    async fn read_new(&mut self, timeout: Duration) -> Recv {
        self.read_new_or_pong(timeout, false).await
    }

    /// Like [`Client::read_new`]; with `stop_on_pong`, a pong ends the read early (reported
    /// as `TimedOut`, the pong itself is recorded in `pongs`).
    async fn read_new_or_pong(&mut self, timeout: Duration, stop_on_pong: bool) -> Recv {
        if let Some(how) = &self.closed {
            return Recv::Closed(how.clone());
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let raw = loop {
            match tokio::time::timeout_at(deadline, read_raw(&mut self.conn)).await {
                Err(_) => return Recv::TimedOut,
                Ok(Err(how)) => {
                    self.closed = Some(how.clone());
                    return Recv::Closed(how);
                }
                Ok(Ok(Raw::Pong(payload))) => {
                    self.pongs.push(payload);
                    if stop_on_pong {
                        return Recv::TimedOut;
                    }
                }
                Ok(Ok(Raw::Text(raw))) => break raw,
            }
        };
        let msg: Value = match serde_json::from_str(&raw) {
            Ok(msg) => msg,
            Err(err) => self.fail(&format!(
                "the daemon sent something that is not JSON ({err}): {}",
                clip(&raw, 2000)
            )),
        };
        let method = self.answered_method(&msg);
        if let Err(problem) = schema::validate_message(&msg, method.as_deref()) {
            let context = match &method {
                Some(method) => format!(" (answer to a `{method}` request)"),
                None => String::new(),
            };
            self.fail(&format!(
                "invalid message from the daemon{context}: {problem}\nmessage: {}",
                clip(&raw, 4000)
            ));
        }
        self.log.push(msg.clone());
        Recv::Message(msg)
    }

    /// For a response or error, the method of the request it answers (consumed).
    fn answered_method(&mut self, msg: &Value) -> Option<String> {
        if msg.get("method").is_some() {
            return None;
        }
        let key = msg.get("id")?.to_string();
        let methods = self.in_flight.get_mut(&key)?;
        let method = methods.pop_front();
        if methods.is_empty() {
            self.in_flight.remove(&key);
        }
        method
    }

    /// Panic with a message, this client's label and its recent log.
    pub fn fail(&self, problem: &str) -> ! {
        self.failed.set(true);
        panic!(
            "[{}] {problem}\n--- last messages received ---\n{}",
            self.label,
            self.recent_log()
        );
    }

    fn recent_log(&self) -> String {
        let skip = self.log.len().saturating_sub(20);
        let lines: Vec<String> = self.log[skip..]
            .iter()
            .map(|m| clip(&m.to_string(), 500))
            .collect();
        if lines.is_empty() {
            "(none)".into()
        } else {
            lines.join("\n")
        }
    }
}

/// What the transport produced.
enum Raw {
    /// One message's text.
    Text(String),
    /// A WebSocket pong with its payload.
    Pong(Vec<u8>),
}

/// One message's text (or a pong) from the transport; `Err` describes a close.
async fn read_raw(conn: &mut Conn) -> Result<Raw, String> {
    match conn {
        Conn::Stdio {
            stdout,
            pending,
            eof,
            ..
        } => loop {
            if let Some(pos) = pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = pending.drain(..=pos).collect();
                let line = &line[..line.len() - 1];
                // A line that is not UTF-8 is returned as text that fails JSON parsing.
                return Ok(Raw::Text(String::from_utf8(line.to_vec()).unwrap_or_else(
                    |_| format!("<not UTF-8: {}>", String::from_utf8_lossy(line)),
                )));
            }
            if *eof {
                return Err(if pending.is_empty() {
                    "stdout closed".into()
                } else {
                    format!(
                        "stdout closed after a partial line: {}",
                        clip(&String::from_utf8_lossy(pending), 500)
                    )
                });
            }
            // `read` is cancel safe: a timeout never loses bytes, they stay in `pending`.
            let mut chunk = vec![0u8; 64 * 1024];
            match stdout.read(&mut chunk).await {
                Ok(0) => *eof = true,
                Ok(n) => pending.extend_from_slice(&chunk[..n]),
                Err(err) => return Err(format!("reading stdout failed: {err}")),
            }
        },
        Conn::Ws(stream) => loop {
            match stream.next().await {
                None => return Err("WebSocket stream ended".into()),
                Some(Err(err)) => return Err(format!("WebSocket error: {err}")),
                Some(Ok(Message::Text(text))) => return Ok(Raw::Text(text.as_str().to_owned())),
                Some(Ok(Message::Binary(bytes))) => {
                    // Weft sends text frames only; surface a binary frame as a bad message.
                    return Ok(Raw::Text(format!(
                        "<binary frame of {} bytes: {}>",
                        bytes.len(),
                        String::from_utf8_lossy(&bytes)
                    )));
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(format!("WebSocket close frame {frame:?}"));
                }
                Some(Ok(Message::Pong(payload))) => return Ok(Raw::Pong(payload.to_vec())),
                // tungstenite answers pings by itself.
                Some(Ok(Message::Ping(_) | Message::Frame(_))) => {}
            }
        },
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if std::thread::panicking() && !self.failed.get() && !self.log.is_empty() {
            eprintln!(
                "--- [{}] messages received ({} in all, last 20) ---\n{}",
                self.label,
                self.log.len(),
                self.recent_log()
            );
        }
    }
}
