//! Connections (docs/protocol.md §2.5, §3.2, §9.1): who may answer an approval, what stdin's end
//! owes the requests read before it, the message size limit on both transports, and the
//! WebSocket listener's connection limit and handshake deadline.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use weft_mock_model::{MockModel, Reply};
use weft_test_support::http::{client_frame, raw_websocket};
use weft_test_support::{Client, DEFAULT_TIMEOUT, Daemon, TestHome, Transport};

use crate::foundation::init_params;
use crate::requests::thread_status;
use crate::tools::{Tools, answer, cmd, exec_call, wait_request};
use crate::turns::read_through_turn_ending;

const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";

/// The default `limits.max_message_bytes`.
const DEFAULT_MAX_MESSAGE: usize = 4 * 1024 * 1024;

/// Issue 11 #3: an approval is answered only by a connection it was sent to. A connection
/// that never initialized and an initialized one that does not subscribe to the thread both
/// answer `accept` first; both are ignored (and logged), and the subscriber's answer counts.
#[tokio::test]
async fn only_a_connection_asked_may_answer_an_approval() {
    let mut t = Tools::start(Transport::Ws).await;
    t.push(exec_call(
        "call_touch",
        cmd("touch stolen.txt && echo created"),
    ));
    let thread = t.thread("untrusted", "danger-full-access").await;
    t.h.start_turn(&thread, "create a file please").await;
    let request = wait_request(&mut t.h.client, COMMAND_APPROVAL).await;
    let accept = json!({"decision": "accept"});

    let mut stranger = Client::connect_ws(&t.h.daemon.ws_url()).await;
    answer(&mut stranger, &request, accept.clone()).await;
    // A round trip on the same connection: its answer has been processed by now.
    let err = stranger
        .request("thread/loaded/list", json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.message, "Not initialized");

    let mut bystander = t.h.second_client().await;
    answer(&mut bystander, &request, accept.clone()).await;
    bystander.request_ok("thread/loaded/list", json!({})).await;

    let status = thread_status(&mut t.h.client, &thread).await;
    assert_eq!(
        status,
        json!({"type": "active", "activeFlags": ["waitingOnApproval"]}),
        "a stranger's answer resolved the approval"
    );
    assert!(!t.path("stolen.txt").exists(), "ran on a stranger's say-so");
    let log = t.h.daemon.stderr();
    assert!(log.contains("has not initialized; ignored"), "{log}");
    assert!(
        log.contains("not sent to this connection; ignored"),
        "{log}"
    );

    t.push(Reply::new().text("Done after approval decision."));
    answer(&mut t.h.client, &request, accept).await;
    read_through_turn_ending(&mut t.h.client, "completed").await;
    assert!(
        t.path("stolen.txt").exists(),
        "the subscriber's answer did not count"
    );
    t.finish().await;
}

/// Issue 11 #6: requests piped in and followed at once by stdin's end all get their answers
/// before the process exits (a few runs, since the loss was a race).
#[tokio::test]
async fn stdin_end_waits_for_every_answer() {
    let mock = MockModel::start().await.expect("start the mock model");
    for run in 0..5 {
        let home = TestHome::with_mock_model(&mock.base_url());
        let mut daemon = Daemon::stdio(&home, &[]).await;
        let mut client = daemon.client().await;
        client
            .send_json(json!({"id": 1, "method": "initialize", "params": init_params()}))
            .await;
        client.notify("initialized", None).await;
        client
            .send_json(json!({"id": 2, "method": "thread/list", "params": {}}))
            .await;
        client
            .send_json(json!({"id": 3, "method": "model/list", "params": {}}))
            .await;
        client.close().await;
        let messages = client.read_until_closed().await;
        // Requests that touch the state DB run in tasks of their own (docs/architecture.md
        // §3), so answers may come in any order; every one must come.
        let mut answered: Vec<i64> = messages
            .iter()
            .filter(|m| m.get("result").is_some() || m.get("error").is_some())
            .filter_map(|m| m["id"].as_i64())
            .collect();
        answered.sort_unstable();
        assert_eq!(answered, [1, 2, 3], "run {run}");
        assert!(
            messages.iter().all(|m| m.get("error").is_none()),
            "{messages:?}"
        );
        assert!(daemon.wait_exit().await.success());
    }
}

/// Issue 11 #8, stdio: a line over the limit gets `-32600` with its id (or, when the id
/// comes after the cut, a null id), is skipped without being held whole, and the connection
/// goes on.
#[tokio::test]
async fn stdio_line_over_the_limit_is_refused_and_skipped() {
    let home = TestHome::new();
    let mut daemon = Daemon::stdio(&home, &[]).await;
    let (mut stdin, stdout) = daemon.take_stdio();
    let mut lines = BufReader::new(stdout).lines();
    let mut next = async move || -> Value {
        let line = tokio::time::timeout(DEFAULT_TIMEOUT, lines.next_line())
            .await
            .expect("a line within the timeout")
            .expect("read stdout")
            .expect("stdout still open");
        serde_json::from_str(&line).expect("a JSON line")
    };
    let init = json!({"id": 1, "method": "initialize", "params": init_params()});
    write_line(&mut stdin, &init.to_string()).await;
    assert!(next().await.get("result").is_some());

    let pad = "x".repeat(DEFAULT_MAX_MESSAGE + 1);
    let id_first = format!(r#"{{"id":"big","method":"thread/list","params":{{"pad":"{pad}"}}}}"#);
    write_line(&mut stdin, &id_first).await;
    let err = next().await;
    assert_eq!(err["id"], "big", "{err}");
    assert_eq!(err["error"]["code"], -32600, "{err}");
    let message = err["error"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        format!(
            "Invalid request: message of {} bytes exceeds the limit of {DEFAULT_MAX_MESSAGE} bytes \
             (limits.max_message_bytes)",
            id_first.len()
        )
    );

    let id_last = format!(r#"{{"method":"thread/list","params":{{"pad":"{pad}"}},"id":7}}"#);
    write_line(&mut stdin, &id_last).await;
    let err = next().await;
    assert_eq!(err["id"], Value::Null, "{err}");
    assert_eq!(err["error"]["code"], -32600, "{err}");

    write_line(&mut stdin, r#"{"id":2,"method":"thread/list","params":{}}"#).await;
    let answer = next().await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert!(answer["result"]["data"].is_array(), "{answer}");
}

/// Issue 11 #8, WebSocket: a frame announced over the limit is refused from its header (its
/// payload is never read): a null-id `-32600`, then close code 1009; the daemon serves the
/// next connection.
#[tokio::test]
async fn websocket_message_over_the_limit_closes_cleanly() {
    let home = TestHome::new();
    let mut daemon = Daemon::ws(&home, &[]).await;
    let mut raw = raw_websocket(daemon.ws_addr()).await;
    // The header of a text frame of 10 MiB, and none of its payload.
    let header = &client_frame(1, true, &vec![b' '; 10 * 1024 * 1024])[..14];
    raw.write_all(header).await.unwrap();
    let mut received = Vec::new();
    let read = tokio::time::timeout(DEFAULT_TIMEOUT, raw.read_to_end(&mut received)).await;
    read.expect("the daemon closes the connection")
        .expect("a clean close, not a reset");
    let frames = server_frames(&received);
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(frames[0].0, 1, "a text frame first");
    let error: Value = serde_json::from_slice(&frames[0].1).unwrap();
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("exceeds the limit of {DEFAULT_MAX_MESSAGE} bytes")),
        "{error}"
    );
    assert_eq!(frames[1].0, 8, "then a close frame");
    assert_eq!(frames[1].1[..2], 1009u16.to_be_bytes(), "close code 1009");

    let mut next = daemon.initialized_client().await;
    next.request_ok("thread/loaded/list", json!({})).await;
}

/// A daemon with `limits.max_connections = 4` and this handshake timeout, its four places
/// taken: one upgraded (initialized) connection and three idle TCP connections.
async fn four_places_taken(
    handshake_timeout_secs: u64,
) -> (TestHome, Daemon, Client, Vec<TcpStream>) {
    let home = TestHome::new();
    let timeout = format!("limits.handshake_timeout_secs={handshake_timeout_secs}");
    let args = ["-c", "limits.max_connections=4", "-c", &timeout];
    let mut daemon = Daemon::ws(&home, &args).await;
    let upgraded = daemon.initialized_client().await;
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(TcpStream::connect(daemon.ws_addr()).await.unwrap());
    }
    (home, daemon, upgraded, idle)
}

/// Issue 11 #9: with `limits.max_connections = 4`, a fifth connection is refused with `503`
/// at once while the four (one upgraded, three idle) stay; a freed place is taken again.
#[tokio::test]
async fn connections_over_the_limit_are_refused() {
    let (_home, daemon, mut upgraded, mut idle) = four_places_taken(60).await;
    let mut refused = TcpStream::connect(daemon.ws_addr()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(DEFAULT_TIMEOUT, refused.read_to_end(&mut answer))
        .await
        .expect("refused at once")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    assert!(answer.contains("limits.max_connections = 4"), "{answer}");
    assert!(
        Client::connect_ws_with_headers(&daemon.ws_url(), &[])
            .await
            .is_err()
    );
    upgraded
        .request("thread/loaded/list", json!({}))
        .await
        .expect("the connection already up is still served");

    drop(idle.pop());
    let mut client = connect_within_deadline(&daemon.ws_url()).await;
    client.initialize().await;
    upgraded.request_ok("thread/loaded/list", json!({})).await;
}

/// Issue 11 #9: connections that do not upgrade within `limits.handshake_timeout_secs` are
/// closed by the daemon, which frees their places; upgraded connections are not on that clock.
#[tokio::test]
async fn handshakes_that_never_finish_are_closed() {
    let (_home, daemon, mut upgraded, mut idle) = four_places_taken(1).await;
    for socket in &mut idle {
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(DEFAULT_TIMEOUT, socket.read_to_end(&mut rest)).await;
        assert!(
            closed.is_ok(),
            "an idle connection is still open after {DEFAULT_TIMEOUT:?}"
        );
    }
    let mut client = connect_within_deadline(&daemon.ws_url()).await;
    client.initialize().await;
    upgraded
        .request("thread/loaded/list", json!({}))
        .await
        .expect("an upgraded connection outlives the handshake deadline");
}

async fn write_line(stdin: &mut tokio::process::ChildStdin, line: &str) {
    stdin.write_all(line.as_bytes()).await.unwrap();
    stdin.write_all(b"\n").await.unwrap();
    stdin.flush().await.unwrap();
}

/// A WebSocket client, retried until the daemon has noticed a freed place (or the timeout).
async fn connect_within_deadline(url: &str) -> Client {
    let deadline = tokio::time::Instant::now() + DEFAULT_TIMEOUT;
    loop {
        match Client::connect_ws_with_headers(url, &[]).await {
            Ok(client) => return client,
            Err(err) if tokio::time::Instant::now() >= deadline => {
                panic!("no connection within {DEFAULT_TIMEOUT:?}: {err}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Split unmasked server frames (short payloads only): `(opcode, payload)`.
fn server_frames(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while bytes.len() >= 2 {
        let opcode = bytes[0] & 0x0f;
        let (len, start) = match bytes[1] & 0x7f {
            126 => (usize::from(u16::from_be_bytes([bytes[2], bytes[3]])), 4),
            127 => panic!("unexpected 64-bit frame length"),
            len => (usize::from(len), 2),
        };
        frames.push((opcode, bytes[start..start + len].to_vec()));
        bytes = &bytes[start + len..];
    }
    frames
}
