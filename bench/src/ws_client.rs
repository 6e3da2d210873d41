//! WebSocket connections through the bench's JSON-RPC layer ([`crate::rpc`]) over the test
//! suite's WebSocket transport (one JSON message per text frame), and a server listening on one.
//!
//! The reader task stamps and routes every frame ([`crate::rpc::read_loop`]). Agent-message deltas are the
//! bulk of the traffic (a fleet run delivers a million of them), so they are not parsed: the
//! reader recognises them by their `method` member and only counts them per `threadId`, found
//! by a substring search ([`delta_thread`]). That keeps the reader fast. A server whose
//! per-connection queue fills anyway may merge consecutive deltas into one frame (Weft does,
//! docs/protocol.md §2.5), so a frame counts for the scripted deltas it carries
//! ([`scripted_deltas`]).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use weft_mock_model::MockModel;
use weft_test_support::client::transport;

use crate::proxy::Proxy;
use crate::rpc::{Connection, Ended, Rpc, lock, read_loop};
use crate::target::{EXIT_TIMEOUT, Home, REQUEST_TIMEOUT, Target};

pub use crate::rpc::Pending as WsPending;

const ENDED: Ended = Ended {
    before_answer: "the connection ended before answering",
    notes: "the connection ended",
};

/// The `method` member of a delta notification, as a compact serializer writes it.
const DELTA_METHOD: &str = r#""method":"item/agentMessage/delta""#;
const THREAD_ID_KEY: &str = r#""threadId":""#;

/// What the reader task shares with the client.
#[derive(Default)]
pub struct Shared {
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

impl Shared {
    /// Count a frame, and a delta frame's deltas by thread; `true` for a delta frame, which is
    /// then not routed.
    fn count(&self, text: &str) -> bool {
        self.frames.fetch_add(1, Ordering::Relaxed);
        let Some(thread) = delta_thread(text) else {
            return false;
        };
        let carried = scripted_deltas(text);
        let mut deltas = lock(&self.deltas);
        match deltas.get_mut(thread) {
            Some(count) => *count += carried,
            None => {
                deltas.insert(thread.to_string(), carried);
            }
        }
        self.total_deltas.fetch_add(carried, Ordering::Relaxed);
        true
    }
}

/// One WebSocket connection to an app-server; the requests and notifications other than deltas
/// are [`Rpc`]'s (through `Deref`), the deltas are only counted.
pub type WsClient = Connection<Arc<Shared>>;

impl WsClient {
    /// Connect to `url` (`ws://127.0.0.1:PORT`), retrying while nothing listens yet, for at
    /// most `timeout`.
    pub async fn connect(url: &str, timeout: Duration) -> Result<WsClient> {
        let deadline = Instant::now() + timeout;
        let (writer, reader) = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match transport::connect_ws(url, &[], left).await {
                Ok(halves) => break halves,
                Err(err) if Instant::now() >= deadline => {
                    return Err(anyhow!(err).context(format!("connect to {url}")));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        let writer = Arc::new(tokio::sync::Mutex::new(writer));
        let shared = Arc::new(Shared::default());
        let (rpc, router) = Rpc::new(writer.clone(), ENDED);
        let tap = shared.clone();
        tokio::spawn(async move {
            read_loop(reader, writer, router, |text| tap.count(text)).await;
            tap.ended.store(true, Ordering::Relaxed);
        });
        Ok(Connection::new(rpc, shared))
    }

    /// Connect and do the handshake (`initialize`, then `initialized`).
    pub async fn connect_initialized(url: &str, timeout: Duration) -> Result<WsClient> {
        let client = WsClient::connect(url, timeout).await?;
        client.initialize(timeout).await?;
        Ok(client)
    }

    /// Deltas received so far on `thread_id`.
    pub fn deltas_of(&self, thread_id: &str) -> u64 {
        lock(&self.side().deltas)
            .get(thread_id)
            .copied()
            .unwrap_or(0)
    }

    /// Deltas received so far, all threads together.
    pub fn total_deltas(&self) -> u64 {
        self.side().total_deltas.load(Ordering::Relaxed)
    }

    /// Frames received so far.
    pub fn frames(&self) -> u64 {
        self.side().frames.load(Ordering::Relaxed)
    }

    /// Forget the delta counts (between measurements).
    pub fn reset_deltas(&self) {
        lock(&self.side().deltas).clear();
        self.side().total_deltas.store(0, Ordering::Relaxed);
    }

    /// Whether the connection ended without the bench closing it (the server dropped it).
    pub fn dropped(&self) -> bool {
        self.side().ended.load(Ordering::Relaxed) && !self.side().closing.load(Ordering::Relaxed)
    }

    /// Send a close frame (best effort).
    pub async fn close(&self) {
        self.side().closing.store(true, Ordering::Relaxed);
        let mut writer = self.writer().lock().await;
        writer.close(Duration::from_secs(2)).await;
    }
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
