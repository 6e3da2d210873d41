//! A small JSON-RPC client for an app-server on WebSocket: one JSON message per text frame.
//!
//! Like `client.rs`, a reader task stamps and routes every frame: responses to the request that
//! waits for them, notifications into a queue. Agent-message deltas are the bulk of the traffic
//! (a fleet run delivers a million of them), so they are not parsed: the reader recognises them
//! by their `method` member and only counts them per `threadId`, found by a substring search
//! ([`delta_thread`]). That keeps the reader fast. A server whose per-connection queue fills
//! anyway may merge consecutive deltas into one frame (Weft does, docs/protocol.md §2.5), so a
//! frame counts for the scripted deltas it carries ([`scripted_deltas`]).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use weft_mock_model::MockModel;

use crate::client::{Answer, Note};
use crate::proxy::Proxy;
use crate::target::{EXIT_TIMEOUT, Home, REQUEST_TIMEOUT, Target};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;
type Sink = Arc<tokio::sync::Mutex<SplitSink<Ws, Message>>>;
type PendingMap = Arc<Mutex<HashMap<u64, oneshot::Sender<(Answer, Instant)>>>>;

/// The `method` member of a delta notification, as a compact serializer writes it.
const DELTA_METHOD: &str = r#""method":"item/agentMessage/delta""#;
const THREAD_ID_KEY: &str = r#""threadId":""#;

/// What the reader task shares with the client.
#[derive(Default)]
struct Shared {
    /// Deltas received, per thread id.
    deltas: Mutex<HashMap<String, u64>>,
    /// Deltas received in all.
    total_deltas: AtomicU64,
    /// Frames received in all (responses, notifications, deltas).
    frames: AtomicU64,
    /// Set when the connection ended (close frame, error or EOF).
    ended: AtomicBool,
    /// Set when the bench closed it itself.
    closing: AtomicBool,
}

/// A request sent but not answered yet.
pub struct WsPending {
    rx: oneshot::Receiver<(Answer, Instant)>,
    method: String,
}

impl WsPending {
    /// Wait for the answer and the instant it was read.
    pub async fn answer(self, timeout: Duration) -> Result<(Answer, Instant)> {
        match tokio::time::timeout(timeout, self.rx).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => bail!("the connection ended before {} was answered", self.method),
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

/// One WebSocket connection to an app-server.
pub struct WsClient {
    sink: Sink,
    pending: PendingMap,
    notes: mpsc::UnboundedReceiver<Note>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
}

impl WsClient {
    /// Connect to `url` (`ws://127.0.0.1:PORT`), retrying while nothing listens yet, for at
    /// most `timeout`.
    pub async fn connect(url: &str, timeout: Duration) -> Result<WsClient> {
        let deadline = Instant::now() + timeout;
        let ws = loop {
            match tokio_tungstenite::connect_async(url).await {
                Ok((ws, _)) => break ws,
                Err(err) if Instant::now() >= deadline => {
                    return Err(anyhow!(err).context(format!("connect to {url}")));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        let (sink, stream) = ws.split();
        let sink: Sink = Arc::new(tokio::sync::Mutex::new(sink));
        let pending: PendingMap = Arc::default();
        let shared = Arc::new(Shared::default());
        let (notes_tx, notes) = mpsc::unbounded_channel();
        tokio::spawn(read_loop(
            stream,
            sink.clone(),
            pending.clone(),
            notes_tx,
            shared.clone(),
        ));
        Ok(WsClient {
            sink,
            pending,
            notes,
            shared,
            next_id: AtomicU64::new(1),
        })
    }

    /// Connect and do the handshake (`initialize`, then `initialized`).
    pub async fn connect_initialized(url: &str, timeout: Duration) -> Result<WsClient> {
        let client = WsClient::connect(url, timeout).await?;
        let params = json!({
            "clientInfo": {"name": "weft-bench", "title": "Weft benchmarks", "version": "0.1.0"}
        });
        client.request("initialize", params, timeout).await?;
        client.notify("initialized").await?;
        Ok(client)
    }

    async fn write(&self, text: String) -> Result<()> {
        let mut sink = self.sink.lock().await;
        match tokio::time::timeout(WRITE_TIMEOUT, sink.send(Message::text(text))).await {
            Ok(sent) => sent.context("write a frame"),
            Err(_) => bail!("the server did not read a frame within {WRITE_TIMEOUT:?}"),
        }
    }

    /// Send a request without waiting; returns the pending answer and the instant just before
    /// the frame was written.
    pub async fn send(&self, method: &str, params: Value) -> Result<(WsPending, Instant)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let text = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let sent = Instant::now();
        self.write(text.to_string())
            .await
            .with_context(|| format!("send {method}"))?;
        let pending = WsPending {
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

    /// Send a notification.
    pub async fn notify(&self, method: &str) -> Result<()> {
        self.write(json!({"jsonrpc": "2.0", "method": method}).to_string())
            .await
    }

    /// The next notification other than a delta (deltas are only counted).
    pub async fn next_note(&mut self, timeout: Duration) -> Result<Note> {
        match tokio::time::timeout(timeout, self.notes.recv()).await {
            Ok(Some(note)) => Ok(note),
            Ok(None) => bail!("the connection ended"),
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

    /// Drop notifications already queued.
    pub fn drain_notes(&mut self) {
        while self.notes.try_recv().is_ok() {}
    }

    /// Deltas received so far on `thread_id`.
    pub fn deltas_of(&self, thread_id: &str) -> u64 {
        lock(&self.shared.deltas)
            .get(thread_id)
            .copied()
            .unwrap_or(0)
    }

    /// Deltas received so far, all threads together.
    pub fn total_deltas(&self) -> u64 {
        self.shared.total_deltas.load(Ordering::Relaxed)
    }

    /// Frames received so far.
    pub fn frames(&self) -> u64 {
        self.shared.frames.load(Ordering::Relaxed)
    }

    /// Forget the delta counts (between measurements).
    pub fn reset_deltas(&self) {
        lock(&self.shared.deltas).clear();
        self.shared.total_deltas.store(0, Ordering::Relaxed);
    }

    /// Whether the connection ended without the bench closing it (the server dropped it).
    pub fn dropped(&self) -> bool {
        self.shared.ended.load(Ordering::Relaxed) && !self.shared.closing.load(Ordering::Relaxed)
    }

    /// Send a close frame (best effort).
    pub async fn close(&self) {
        self.shared.closing.store(true, Ordering::Relaxed);
        let mut sink = self.sink.lock().await;
        let _ = tokio::time::timeout(Duration::from_secs(2), sink.close()).await;
    }
}

/// How long one frame may take to write.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The `threadId` of an agent-message delta notification, without parsing it; `None` for any
/// other message. A string member's value cannot contain the unescaped `"threadId":"`, so the
/// first match is the member.
pub fn delta_thread(text: &str) -> Option<&str> {
    if !text.contains(DELTA_METHOD) {
        return None;
    }
    let start = text.find(THREAD_ID_KEY)? + THREAD_ID_KEY.len();
    let len = text[start..].find('"')?;
    Some(&text[start..start + len])
}

/// How many of the bench's scripted deltas (`tokN `, `target::reply_of_deltas`) a delta frame
/// carries: one, or more when the server merged them. Nothing else in the frame can contain
/// `tok` (ids are hexadecimal or `msg_…`); a frame of other text counts as one.
pub fn scripted_deltas(text: &str) -> u64 {
    (text.matches("tok").count() as u64).max(1)
}

async fn read_loop(
    mut stream: SplitStream<Ws>,
    sink: Sink,
    pending: PendingMap,
    notes: mpsc::UnboundedSender<Note>,
    shared: Arc<Shared>,
) {
    while let Some(frame) = stream.next().await {
        let text = match frame {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        shared.frames.fetch_add(1, Ordering::Relaxed);
        if let Some(thread) = delta_thread(text.as_str()) {
            let carried = scripted_deltas(text.as_str());
            let mut deltas = lock(&shared.deltas);
            match deltas.get_mut(thread) {
                Some(count) => *count += carried,
                None => {
                    deltas.insert(thread.to_string(), carried);
                }
            }
            shared.total_deltas.fetch_add(carried, Ordering::Relaxed);
            continue;
        }
        let at = Instant::now();
        let Ok(mut message) = serde_json::from_str::<Value>(text.as_str()) else {
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
                let _ = notes.send(Note {
                    method,
                    params: params.unwrap_or(Value::Null),
                    at,
                });
            }
            (Some(_), Some(id)) => {
                // Server requests (approvals) are not expected with no tools offered.
                let refusal = json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "weft-bench answers no server requests"}});
                let sink = sink.clone();
                tokio::spawn(async move {
                    let _ = sink
                        .lock()
                        .await
                        .send(Message::text(refusal.to_string()))
                        .await;
                });
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
    shared.ended.store(true, Ordering::Relaxed);
    lock(&pending).clear();
}

/// A free TCP port on 127.0.0.1 (bound and released; the server binds it right after).
pub fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("bind 127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

// ---- a server on WebSocket ----

/// A server listening on `ws://127.0.0.1:PORT`, with its own mock and home.
pub struct WsServer {
    child: tokio::process::Child,
    pid: u32,
    pub url: String,
    pub mock: MockModel,
    _proxy: Proxy,
    _home: Home,
}

impl WsServer {
    pub async fn start(target: &Target) -> Result<WsServer> {
        let mock = MockModel::start().await?;
        let proxy = Proxy::start(mock.addr()).await?;
        let home = target.new_home(&proxy.base_url())?;
        let url = format!("ws://127.0.0.1:{}", free_port()?);
        let mut command = target.command(&home)?;
        command
            .arg("--listen")
            .arg(&url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .kill_on_drop(true);
        let child = command
            .spawn()
            .with_context(|| format!("start {}", target.binary.display()))?;
        let pid = child.id().context("the server has no pid")?;
        Ok(WsServer {
            child,
            pid,
            url,
            mock,
            _proxy: proxy,
            _home: home,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// A new initialized connection (waits for the listener for up to a minute: a server under
    /// valgrind starts slowly).
    pub async fn connect(&self) -> Result<WsClient> {
        WsClient::connect_initialized(&self.url, REQUEST_TIMEOUT).await
    }

    /// SIGTERM, then SIGKILL after [`EXIT_TIMEOUT`].
    pub async fn stop(mut self) -> Result<()> {
        let _ = std::process::Command::new("kill")
            .arg(self.pid.to_string())
            .status();
        if tokio::time::timeout(EXIT_TIMEOUT, self.child.wait())
            .await
            .is_err()
        {
            self.child.kill().await?;
            bail!("the server did not exit within {EXIT_TIMEOUT:?} of SIGTERM (killed)");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{delta_thread, scripted_deltas};

    #[test]
    fn a_merged_delta_counts_for_each_scripted_one() {
        let one = r#"{"method":"item/agentMessage/delta","params":{"threadId":"019a-1","turnId":"t","itemId":"msg_1_0","delta":"tok1 "}}"#;
        assert_eq!(scripted_deltas(one), 1);
        let merged = r#"{"method":"item/agentMessage/delta","params":{"threadId":"019a-1","turnId":"t","itemId":"msg_1_0","delta":"tok1 tok2 tok3 "}}"#;
        assert_eq!(scripted_deltas(merged), 3);
    }

    #[test]
    fn finds_the_thread_of_a_delta_only() {
        let delta = r#"{"jsonrpc":"2.0","method":"item/agentMessage/delta","params":{"threadId":"019a-1","turnId":"t","itemId":"i","delta":"tok1 "}}"#;
        assert_eq!(delta_thread(delta), Some("019a-1"));
        // The reference omits `jsonrpc` and may order members differently.
        let delta = r#"{"method":"item/agentMessage/delta","params":{"delta":"x","itemId":"i","threadId":"abc","turnId":"t"}}"#;
        assert_eq!(delta_thread(delta), Some("abc"));
        let other = r#"{"method":"turn/completed","params":{"threadId":"019a-1"}}"#;
        assert_eq!(delta_thread(other), None);
        // An escaped key inside a delta's text is not the member.
        let tricky = r#"{"method":"item/agentMessage/delta","params":{"delta":"\"threadId\":\"no","threadId":"yes"}}"#;
        assert_eq!(delta_thread(tricky), Some("yes"));
    }
}
