//! The bench's layer over the test suite's JSON-RPC transport
//! (`weft_test_support::client::transport`, the one the e2e [`Client`] reads and writes
//! through): request ids, the answers waited for, the notification queue, and a reader task
//! that stamps every message with the instant it was read.
//!
//! The e2e client reads when a test asks and validates every message against the schemas; a
//! benchmark needs reads that go on while it sends (windows of requests in flight, many
//! connections at once), the instant each message arrived, and no validation in the way (the
//! reference's messages are measured too). So the transport's two halves are shared: the
//! [`Writer`] behind a lock for every sender, the [`Reader`] in one task ([`read_loop`]) that
//! hands each message to [`Router::route`], which sends responses to the request that waits
//! for them and notifications into one queue. Every wait has a timeout. `client.rs` spawns a
//! server on stdio, `ws_client.rs` connects over WebSocket.
//!
//! [`Client`]: weft_test_support::Client

use std::collections::{HashMap, VecDeque};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use weft_test_support::client::transport::{Raw, Reader, Writer};

/// A server notification and when it was read.
#[derive(Debug)]
pub struct Note {
    pub method: String,
    pub params: Value,
    pub at: Instant,
}

impl Note {
    /// `params.threadId`, if any.
    pub fn thread_id(&self) -> Option<&str> {
        self.params.get("threadId").and_then(Value::as_str)
    }
}

/// The answer to a request: its result, or the JSON-RPC error object.
pub type RequestResult = std::result::Result<Value, Value>;

/// How long one message may take to write (a server that stops reading fills the pipe or the
/// socket).
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// What a transport says when the server went away, in the errors the waits return.
#[derive(Debug, Clone, Copy)]
pub struct Ended {
    /// Before a request was answered (followed by the method).
    pub before_answer: &'static str,
    /// While notifications were awaited.
    pub notes: &'static str,
}

/// The sending half, shared by every sender and the reader task (which refuses server
/// requests).
pub type SharedWriter = Arc<tokio::sync::Mutex<Writer>>;

/// Write one message (a line on stdio, a text frame on WebSocket), bounded by
/// [`WRITE_TIMEOUT`].
pub async fn write(writer: &SharedWriter, text: &str) -> Result<()> {
    let mut writer = writer.lock().await;
    writer
        .send_text(text, WRITE_TIMEOUT)
        .await
        .map_err(|problem| anyhow!(problem))
}

/// Read messages until the connection ends. Each one's text goes to `tap` first, which keeps
/// it to itself by returning `true` (the WebSocket client counts deltas without parsing them);
/// the others are stamped with the instant they were read and routed. Server requests are
/// refused.
pub async fn read_loop(
    mut reader: Reader,
    writer: SharedWriter,
    router: Router,
    mut tap: impl FnMut(&str) -> bool,
) {
    loop {
        let text = match reader.next().await {
            Ok(Raw::Text(text)) => text,
            Ok(Raw::Pong(_)) => continue,
            Err(_) => break,
        };
        if tap(&text) {
            continue;
        }
        let at = Instant::now();
        if let Some(id) = router.route(&text, at) {
            let writer = writer.clone();
            tokio::spawn(async move {
                let _ = write(&writer, &refusal(id)).await;
            });
        }
    }
    router.end();
}

/// A request sent but not answered yet.
pub struct Pending {
    rx: oneshot::Receiver<(RequestResult, Instant)>,
    method: String,
    ended: Ended,
}

impl Pending {
    /// Wait for the answer and the instant it was read.
    pub async fn answer(self, timeout: Duration) -> Result<(RequestResult, Instant)> {
        match tokio::time::timeout(timeout, self.rx).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => bail!("{} {}", self.ended.before_answer, self.method),
            Err(_) => bail!("no answer to {} within {timeout:?}", self.method),
        }
    }

    /// Wait for a successful result.
    pub async fn result(self, timeout: Duration) -> Result<Value> {
        let method = self.method.clone();
        match self.answer(timeout).await?.0 {
            Ok(result) => Ok(result),
            Err(error) => bail!("{method} failed: {error}"),
        }
    }
}

type PendingMap = Mutex<HashMap<u64, oneshot::Sender<(RequestResult, Instant)>>>;

/// The reader task's half: routes each message read.
pub struct Router {
    pending: Arc<PendingMap>,
    notes: mpsc::UnboundedSender<Note>,
}

impl Router {
    /// Route one message read at `at`: a response to its waiting request, a notification
    /// into the queue. A server request (approvals …) is not expected with no tools offered:
    /// its id is returned so the transport answers it with [`refusal`]. Text that is not JSON
    /// is dropped.
    pub fn route(&self, text: &str, at: Instant) -> Option<Value> {
        let mut message = serde_json::from_str::<Value>(text).ok()?;
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let id = message.get("id").cloned();
        match (method, id) {
            (Some(method), None) => {
                let params = message.get_mut("params").map(Value::take);
                let _ = self.notes.send(Note {
                    method,
                    params: params.unwrap_or(Value::Null),
                    at,
                });
                None
            }
            (Some(_), Some(id)) => Some(id),
            (None, Some(id)) => {
                let tx = id.as_u64().and_then(|id| lock(&self.pending).remove(&id))?;
                let answer = match message.get_mut("error") {
                    Some(error) => Err(error.take()),
                    None => Ok(message
                        .get_mut("result")
                        .map(Value::take)
                        .unwrap_or_default()),
                };
                let _ = tx.send((answer, at));
                None
            }
            (None, None) => None,
        }
    }

    /// The connection ended: waiters see their senders dropped.
    pub fn end(&self) {
        lock(&self.pending).clear();
    }
}

/// The error answer to a server request: the bench answers none, so the server never waits on
/// it.
pub fn refusal(id: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": -32601, "message": "weft-bench answers no server requests"}})
    .to_string()
}

/// A connection: the client's half ([`Rpc`], reached through `Deref`) and what its transport
/// keeps beside it (the server process on stdio, the delta counts on WebSocket).
pub struct Connection<T> {
    rpc: Rpc,
    side: T,
}

impl<T> Connection<T> {
    pub fn new(rpc: Rpc, side: T) -> Connection<T> {
        Connection { rpc, side }
    }

    /// What the transport keeps.
    pub fn side(&self) -> &T {
        &self.side
    }

    pub fn side_mut(&mut self) -> &mut T {
        &mut self.side
    }
}

impl<T> Deref for Connection<T> {
    type Target = Rpc;
    fn deref(&self) -> &Rpc {
        &self.rpc
    }
}

impl<T> DerefMut for Connection<T> {
    fn deref_mut(&mut self) -> &mut Rpc {
        &mut self.rpc
    }
}

/// The client's half over one connection.
pub struct Rpc {
    writer: SharedWriter,
    pending: Arc<PendingMap>,
    notes: mpsc::UnboundedReceiver<Note>,
    next_id: AtomicU64,
    ended: Ended,
}

impl Rpc {
    /// A client writing through `writer`, and the router its reader task feeds.
    pub fn new(writer: SharedWriter, ended: Ended) -> (Rpc, Router) {
        let pending: Arc<PendingMap> = Arc::default();
        let (notes_tx, notes) = mpsc::unbounded_channel();
        let router = Router {
            pending: pending.clone(),
            notes: notes_tx,
        };
        let rpc = Rpc {
            writer,
            pending,
            notes,
            next_id: AtomicU64::new(1),
            ended,
        };
        (rpc, router)
    }

    /// The sending half.
    pub fn writer(&self) -> &SharedWriter {
        &self.writer
    }

    /// Send a request without waiting; returns the pending answer and the instant just before
    /// the message was written.
    pub async fn send(&self, method: &str, params: Value) -> Result<(Pending, Instant)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let text = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let text = text.to_string();
        let sent = Instant::now();
        write(&self.writer, &text)
            .await
            .with_context(|| format!("send {method}"))?;
        let pending = Pending {
            rx,
            method: method.to_string(),
            ended: self.ended,
        };
        Ok((pending, sent))
    }

    /// Send a request and wait for its successful result.
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value> {
        let (pending, _) = self.send(method, params).await?;
        pending.result(timeout).await
    }

    /// Send one request per element of `params`, at most `window` unanswered at a time (so a
    /// server's bounded request queue is not flooded); returns the answers in order.
    pub async fn send_all(
        &self,
        method: &str,
        params: impl IntoIterator<Item = Value>,
        window: usize,
        timeout: Duration,
    ) -> Result<Vec<RequestResult>> {
        let mut in_flight = VecDeque::new();
        let mut answers = Vec::new();
        for params in params {
            if in_flight.len() >= window.max(1)
                && let Some(task) = in_flight.pop_front()
            {
                answers.push(join_answer(task).await?);
            }
            let (pending, _) = self.send(method, params).await?;
            in_flight.push_back(tokio::spawn(pending.answer(timeout)));
        }
        for task in in_flight {
            answers.push(join_answer(task).await?);
        }
        Ok(answers)
    }

    /// Send a notification.
    pub async fn notify(&self, method: &str) -> Result<()> {
        write(
            &self.writer,
            &json!({"jsonrpc": "2.0", "method": method}).to_string(),
        )
        .await
    }

    /// The `initialize` request (returns the instant its answer was read) and `initialized`.
    pub async fn initialize(&self, timeout: Duration) -> Result<Instant> {
        let params = json!({
            "clientInfo": {"name": "weft-bench", "title": "Weft benchmarks", "version": "0.1.0"}
        });
        let (pending, _) = self.send("initialize", params).await?;
        let (answer, at) = pending.answer(timeout).await?;
        answer.map_err(|error| anyhow!("initialize failed: {error}"))?;
        self.notify("initialized").await?;
        Ok(at)
    }

    /// The next notification.
    pub async fn next_note(&mut self, timeout: Duration) -> Result<Note> {
        match tokio::time::timeout(timeout, self.notes.recv()).await {
            Ok(Some(note)) => Ok(note),
            Ok(None) => bail!("{}", self.ended.notes),
            Err(_) => bail!("no notification within {timeout:?}"),
        }
    }

    /// Drop notifications until one matches; `deadline` bounds the whole wait.
    pub async fn wait_note(
        &mut self,
        what: &str,
        deadline: Instant,
        mut matches: impl FnMut(&Note) -> bool,
    ) -> Result<Note> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let note = self
                .next_note(left)
                .await
                .with_context(|| format!("waiting for {what}"))?;
            if matches(&note) {
                return Ok(note);
            }
        }
    }

    /// Wait for `turn/completed` on `thread_id`.
    pub async fn wait_turn_completed(
        &mut self,
        thread_id: &str,
        timeout: Duration,
    ) -> Result<Note> {
        let deadline = Instant::now() + timeout;
        self.wait_note("turn/completed", deadline, |note| {
            note.method == "turn/completed" && note.thread_id() == Some(thread_id)
        })
        .await
    }

    /// Drop notifications already queued.
    pub fn drain_notes(&mut self) {
        while self.notes.try_recv().is_ok() {}
    }
}

async fn join_answer(
    task: tokio::task::JoinHandle<Result<(RequestResult, Instant)>>,
) -> Result<RequestResult> {
    Ok(task.await??.0)
}

/// Lock a mutex, also after a panic elsewhere (the data stays usable: counters and maps).
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
