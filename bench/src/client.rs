//! A small JSON-RPC client for an app-server on stdio: one JSON message per line.
//!
//! A reader task parses every line the server writes, stamps it with the instant it was read,
//! and routes it: responses to the request that waits for them, notifications into one queue.
//! Every wait has a timeout.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};

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
pub type Answer = std::result::Result<Value, Value>;

/// A request sent but not answered yet.
pub struct Pending {
    rx: oneshot::Receiver<(Answer, Instant)>,
    method: String,
}

impl Pending {
    /// Wait for the answer and the instant it was read.
    pub async fn answer(self, timeout: Duration) -> Result<(Answer, Instant)> {
        match tokio::time::timeout(timeout, self.rx).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => bail!("the server exited before answering {}", self.method),
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

type PendingMap = Arc<Mutex<HashMap<u64, oneshot::Sender<(Answer, Instant)>>>>;
type SharedStdin = Arc<tokio::sync::Mutex<Option<BufWriter<ChildStdin>>>>;

/// A running app-server process spoken to over its stdin and stdout.
pub struct Server {
    child: Child,
    pid: u32,
    stdin: SharedStdin,
    pending: PendingMap,
    notes: mpsc::UnboundedReceiver<Note>,
    next_id: AtomicU64,
}

impl Server {
    /// Spawn `command` with piped stdin/stdout (stderr as the command has it) and start reading.
    pub fn spawn(mut command: Command) -> Result<Server> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().context("spawn the app-server")?;
        let pid = child.id().context("the app-server has no pid")?;
        let stdin = child.stdin.take().context("no stdin pipe")?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let pending: PendingMap = Arc::default();
        let stdin: SharedStdin = Arc::new(tokio::sync::Mutex::new(Some(BufWriter::new(stdin))));
        let (notes_tx, notes) = mpsc::unbounded_channel();
        let (requests_tx, requests_rx) = mpsc::unbounded_channel();
        tokio::spawn(read_loop(stdout, pending.clone(), notes_tx, requests_tx));
        tokio::spawn(refuse_server_requests(stdin.clone(), requests_rx));
        Ok(Server {
            child,
            pid,
            stdin,
            pending,
            notes,
            next_id: AtomicU64::new(1),
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    async fn write_line(&self, line: &str) -> Result<()> {
        write_line(&self.stdin, line).await
    }

    /// Send a request without waiting; returns the pending answer and the instant just before
    /// the line was written.
    pub async fn send(&self, method: &str, params: Value) -> Result<(Pending, Instant)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let line = line.to_string();
        let sent = Instant::now();
        self.write_line(&line)
            .await
            .with_context(|| format!("send {method}"))?;
        let pending = Pending {
            rx,
            method: method.to_string(),
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
    ) -> Result<Vec<Answer>> {
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
        self.write_line(&json!({"jsonrpc": "2.0", "method": method}).to_string())
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
            Ok(None) => bail!("the server closed its stdout"),
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

    /// Close stdin and wait for the process to exit; kill it if it does not within `timeout`.
    pub async fn shutdown(mut self, timeout: Duration) -> Result<()> {
        drop(self.stdin.lock().await.take());
        match tokio::time::timeout(timeout, self.child.wait()).await {
            Ok(status) => {
                status?;
                Ok(())
            }
            Err(_) => {
                self.child.kill().await?;
                bail!("the server did not exit within {timeout:?} of stdin EOF (killed)")
            }
        }
    }
}

async fn join_answer(task: tokio::task::JoinHandle<Result<(Answer, Instant)>>) -> Result<Answer> {
    Ok(task.await??.0)
}

/// How long one line may take to write (a server that stops reading fills the pipe).
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

async fn write_line(stdin: &SharedStdin, line: &str) -> Result<()> {
    let write = async {
        let mut stdin = stdin.lock().await;
        let stdin = stdin.as_mut().context("stdin already closed")?;
        stdin.write_all(line.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        Ok(())
    };
    match tokio::time::timeout(WRITE_TIMEOUT, write).await {
        Ok(written) => written,
        Err(_) => bail!("the server did not read a line within {WRITE_TIMEOUT:?}"),
    }
}

/// Server → client requests (approvals …) are not expected with no tools offered; answer any
/// with an error so the server never waits on the bench.
async fn refuse_server_requests(stdin: SharedStdin, mut ids: mpsc::UnboundedReceiver<Value>) {
    while let Some(id) = ids.recv().await {
        let line = json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "weft-bench answers no server requests"}});
        if write_line(&stdin, &line.to_string()).await.is_err() {
            break;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Read lines until EOF; route responses, notifications and server requests.
async fn read_loop(
    stdout: ChildStdout,
    pending: PendingMap,
    notes: mpsc::UnboundedSender<Note>,
    requests: mpsc::UnboundedSender<Value>,
) {
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let at = Instant::now();
        let Ok(mut message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let id = message.get("id").cloned();
        match (method, id) {
            (Some(method), None) => {
                let params = message.get_mut("params").map(Value::take);
                let note = Note {
                    method,
                    params: params.unwrap_or(Value::Null),
                    at,
                };
                let _ = notes.send(note);
            }
            (Some(_), Some(id)) => {
                let _ = requests.send(id);
            }
            (None, Some(id)) => {
                let Some(tx) = id.as_u64().and_then(|id| lock(&pending).remove(&id)) else {
                    continue;
                };
                let answer = match message.get_mut("error") {
                    Some(error) => Err(error.take()),
                    None => Ok(message
                        .get_mut("result")
                        .map(Value::take)
                        .unwrap_or_default()),
                };
                let _ = tx.send((answer, at));
            }
            (None, None) => {}
        }
    }
    // Waiters see their senders dropped: "the server exited before answering".
    lock(&pending).clear();
}
