//! Issue 24 #4–#5, outbound backpressure (docs/protocol.md §2.5): a client that reads slowly
//! loses nothing and is never dropped (deltas of one item are merged while its queue is full),
//! one that stops reading is dropped after `limits.outbound_stall_secs`, and in both cases the
//! daemon's memory stays bounded and the other connections are served as before. Memory is
//! the daemon's `VmRSS`, sampled from `/proc`; the bounds are generous and nothing is timed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use weft_mock_model::Reply;
use weft_test_support::{DEFAULT_TIMEOUT, Transport};

use crate::mcp::{Mcp, weft_call};
use crate::turns::{Harness, Setup};

/// Deltas in the streamed turn.
const DELTAS: usize = 10_000;
/// Bytes per delta: 8 MB in all, more than the kernel buffers of a connection that does not
/// read can hold, so its outbound queue must fill.
const DELTA_BYTES: usize = 800;

/// Delta `i`: numbered, so that order and loss both show.
fn piece(i: usize) -> String {
    let mut text = format!("<{i:05}>");
    while text.len() < DELTA_BYTES {
        text.push_str("abcdefghij");
    }
    text.truncate(DELTA_BYTES);
    text
}

fn full_text() -> String {
    (0..DELTAS).map(piece).collect()
}

/// A harness whose own client does not take deltas (it starts threads and turns), with `toml`
/// appended to the config.
async fn harness(toml: &str) -> Harness {
    let params = json!({
        "clientInfo": {"name": "weft-e2e", "version": "0.1.0"},
        "capabilities": {"optOutNotificationMethods": ["item/agentMessage/delta"]}
    });
    Harness::start(Setup::new(Transport::Ws).init_params(params).config(toml)).await
}

/// A bare WebSocket subscriber that reads only when told to; with `small_buffer` its socket's
/// receive buffer is 4 KiB, so what it does not read piles up in the daemon.
struct Subscriber {
    ws: WebSocketStream<TcpStream>,
    next_id: i64,
}

impl Subscriber {
    async fn join(addr: SocketAddr, thread: &str, small_buffer: bool) -> Subscriber {
        let socket = TcpSocket::new_v4().expect("socket");
        if small_buffer {
            socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
        }
        let stream = socket.connect(addr).await.expect("connect");
        let (ws, _) = tokio_tungstenite::client_async(format!("ws://{addr}"), stream)
            .await
            .expect("upgrade");
        let mut subscriber = Subscriber { ws, next_id: 1 };
        let init = json!({"clientInfo": {"name": "weft-e2e", "version": "0.1.0"}});
        subscriber.request("initialize", init).await;
        subscriber.send(json!({"method": "initialized"})).await;
        subscriber
            .request("thread/resume", json!({"threadId": thread}))
            .await;
        subscriber
    }

    async fn send(&mut self, message: Value) {
        self.ws
            .send(Message::text(message.to_string()))
            .await
            .expect("send");
    }

    /// Send a request and wait for its result, keeping nothing else.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self
                .next()
                .await
                .unwrap_or_else(|| panic!("closed while waiting for the answer to {method}"));
            if message.get("method").is_none() && message["id"] == id {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// The next message, or `None` once the daemon has closed the connection.
    async fn next(&mut self) -> Option<Value> {
        loop {
            let frame = tokio::time::timeout(DEFAULT_TIMEOUT, self.ws.next())
                .await
                .expect("no message from the daemon in time");
            match frame {
                Some(Ok(Message::Text(text))) => {
                    return Some(serde_json::from_str(text.as_str()).expect("JSON"));
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return None,
                Some(Ok(_)) => {}
            }
        }
    }
}

/// What one subscriber saw of the turn.
struct Seen {
    /// `item/agentMessage/delta` frames received.
    frames: usize,
    /// The deltas concatenated.
    text: String,
    /// Whether each frame was exactly the next scripted delta (nothing merged).
    exact: bool,
    /// The completed agent message's text.
    completed: Option<String>,
}

/// Read through `turn/completed`; `pause` every 256 messages.
async fn read_turn(subscriber: &mut Subscriber, pause: Duration) -> Seen {
    let mut seen = Seen {
        frames: 0,
        text: String::with_capacity(DELTAS * DELTA_BYTES),
        exact: true,
        completed: None,
    };
    let mut count = 0usize;
    loop {
        let message = subscriber
            .next()
            .await
            .expect("a reading subscriber was disconnected during the turn");
        count += 1;
        if count.is_multiple_of(256) && !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        match message["method"].as_str() {
            Some("item/agentMessage/delta") => {
                let delta = message["params"]["delta"].as_str().expect("delta");
                seen.exact &= seen.frames < DELTAS && delta == piece(seen.frames);
                seen.frames += 1;
                seen.text.push_str(delta);
            }
            Some("item/completed") if message["params"]["item"]["type"] == "agentMessage" => {
                seen.completed = message["params"]["item"]["text"]
                    .as_str()
                    .map(str::to_owned);
            }
            Some("turn/completed") => return seen,
            _ => {}
        }
    }
}

/// Same text, without printing 8 MB when it is not.
fn assert_same_text(what: &str, got: &str, want: &str) {
    if got != want {
        let at = got
            .bytes()
            .zip(want.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        panic!(
            "{what}: {} bytes instead of {}, first difference at byte {at}",
            got.len(),
            want.len()
        );
    }
}

/// The daemon's resident set, KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Samples a process's `VmRSS` every 20 ms until stopped (or the process is gone).
struct RssSampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl RssSampler {
    fn start(pid: u32) -> RssSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let stop = stop.clone();
            move || {
                let mut peak = 0;
                while !stop.load(Ordering::Relaxed) {
                    match rss_kib(pid) {
                        Some(kib) => peak = peak.max(kib),
                        None => break,
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                peak
            }
        });
        RssSampler { stop, thread }
    }

    /// The highest `VmRSS` seen, KiB.
    fn peak(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("sampler")
    }
}

/// Issue 24 #5: ten subscribers of one thread over WebSocket, one of which reads nothing until
/// the nine others have the whole 10,000-delta turn and then reads slowly. The nine are not
/// held up by it and get every delta, in order (each delta is numbered, so the text shows
/// loss and order; a reader that falls 4,096 messages behind the daemon gets some merged, as
/// designed); the slow one gets the same text in fewer frames (its queue filled and its
/// deltas were merged); nobody is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_subscriber_gets_the_same_text_merged_and_nobody_is_dropped() {
    let mut h = harness("").await;
    let thread = h.start_thread().await;
    let addr = h.daemon.ws_addr();
    let mut fast = Vec::new();
    for _ in 0..9 {
        fast.push(Subscriber::join(addr, &thread, false).await);
    }
    let mut slow = Subscriber::join(addr, &thread, true).await;
    h.push(Reply::new().text_deltas((0..DELTAS).map(piece)));
    h.start_turn(&thread, "stream a long answer").await;

    let readers: Vec<_> = fast
        .into_iter()
        .map(|mut subscriber| {
            tokio::spawn(async move {
                let seen = read_turn(&mut subscriber, Duration::ZERO).await;
                (subscriber, seen)
            })
        })
        .collect();
    let full = full_text();
    let mut fast = Vec::new();
    for (i, reader) in readers.into_iter().enumerate() {
        let (subscriber, seen) = reader.await.expect("reader");
        eprintln!(
            "subscriber {i}: {} frames for {DELTAS} deltas (one frame each: {})",
            seen.frames, seen.exact
        );
        assert_same_text(&format!("subscriber {i}'s deltas"), &seen.text, &full);
        let completed = seen.completed.expect("the agent message's item/completed");
        assert_same_text(&format!("subscriber {i}'s message"), &completed, &full);
        fast.push(subscriber);
    }

    // Everything is made; the slow one has read nothing yet. Now it reads, slowly.
    let seen = read_turn(&mut slow, Duration::from_millis(2)).await;
    eprintln!("the slow subscriber: {} frames", seen.frames);
    assert_same_text("the slow subscriber's deltas", &seen.text, &full);
    assert!(
        seen.frames < DELTAS,
        "the slow subscriber's queue never filled ({} frames): the test proves nothing",
        seen.frames
    );
    let completed = seen.completed.expect("the agent message's item/completed");
    assert_same_text("the slow subscriber's message", &completed, &full);

    // Nobody was dropped: every connection still answers.
    for subscriber in fast.iter_mut().chain([&mut slow]) {
        subscriber.request("thread/loaded/list", json!({})).await;
    }
    let log = h.daemon.stderr();
    assert!(!log.contains("not reading its messages"), "{log}");
}

/// Issue 24 #5: a subscriber that stops reading entirely is dropped once its socket has taken
/// nothing for `limits.outbound_stall_secs`, without ever getting the end of the turn, while
/// the daemon's memory stays bounded and the other connection is served throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_dropped_after_the_stall_limit() {
    let mut h = harness("[limits]\noutbound_stall_secs = 2\n").await;
    let thread = h.start_thread().await;
    let mut stalled = Subscriber::join(h.daemon.ws_addr(), &thread, true).await;
    let pid = h.daemon.pid();
    let before = rss_kib(pid).expect("VmRSS");
    let sampler = RssSampler::start(pid);
    h.push(Reply::new().text_deltas((0..DELTAS).map(piece)));
    let run = h.run_turn(&thread, "stream a long answer").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    h.daemon
        .wait_for_stderr("client is not reading its messages")
        .await;
    let peak = sampler.peak();

    let mut got_the_end = false;
    while let Some(message) = stalled.next().await {
        got_the_end |= message["method"] == "turn/completed";
    }
    assert!(!got_the_end, "the stalled client was served to the end");
    let growth_mib = peak.saturating_sub(before) / 1024;
    eprintln!("the daemon grew by {growth_mib} MiB");
    assert!(
        growth_mib < 256,
        "the daemon grew by {growth_mib} MiB for a stalled client"
    );
    h.client
        .request("thread/loaded/list", json!({}))
        .await
        .expect("the other connection is still served");
}

/// Issue 24 #4: a stdio client that stops reading stdout while an MCP tool reports progress
/// as fast as it can. Progress of the call replaces the queued one, so memory stays bounded;
/// once stdout has taken nothing for `limits.outbound_stall_secs` the connection is closed and,
/// stdio being the daemon's only connection, the daemon shuts down as on stdin's end.
#[tokio::test]
async fn a_stalled_stdio_client_keeps_memory_bounded_and_the_daemon_exits() {
    const STEPS: u64 = 100_000;
    let mut t = Mcp::start_with(Transport::Stdio, "", "[limits]\noutbound_stall_secs = 2\n").await;
    let thread = t.thread("never").await;
    t.push(weft_call(
        "call_slow",
        "slow",
        json!({"seconds": 0, "steps": STEPS}),
    ));
    t.push(Reply::new().text("slept"));
    let pid = t.h.daemon.pid();
    let before = rss_kib(pid).expect("VmRSS");
    let sampler = RssSampler::start(pid);
    t.h.start_turn(&thread, "report progress").await;
    // From here on, stdout is never read again.
    let status = t.h.daemon.wait_exit_within(Duration::from_secs(120)).await;
    let peak = sampler.peak();
    let growth_mib = peak.saturating_sub(before) / 1024;
    eprintln!("the daemon grew by {growth_mib} MiB");
    assert!(
        status.is_some(),
        "the daemon kept running with a stalled stdout (grew by {growth_mib} MiB)"
    );
    assert!(
        growth_mib < 64,
        "the daemon grew by {growth_mib} MiB for a stalled stdout"
    );
    let log = t.h.daemon.stderr();
    assert!(log.contains("stdout has taken nothing"), "{log}");
}
