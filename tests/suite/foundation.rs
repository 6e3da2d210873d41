//! Issue 2, the foundation: transports, envelope rules, handshake, errors, backpressure,
//! shutdown, CLI and config. See `docs/protocol.md` §2–§5 and §11.5.

mod backpressure;
mod cli;
mod daemon_cli;
mod envelope;
mod handshake;
mod http_client;
mod lifecycle;
mod opt_out;
mod shipped_binary;
mod unix_socket;
mod websocket;
mod ws_auth;

use serde_json::{Value, json};
use weft_test_support::{Client, Daemon, RpcError, TestHome, Transport};

/// `-32600`, the code Codex uses for decode errors and most request errors, and the check of
/// an exact `-32600` error message.
pub use crate::turns::{INVALID_REQUEST, assert_invalid_request};
/// `-32001`, ingress queue full.
pub const OVERLOADED: i64 = -32001;
/// The exact overload message (docs/protocol.md §5.3).
pub const OVERLOADED_MESSAGE: &str = "Server overloaded; retry later.";

/// A daemon on `transport` with one connection, not yet initialized.
pub async fn connect(transport: Transport) -> (TestHome, Daemon, Client) {
    let home = TestHome::new();
    let mut daemon = Daemon::start(transport, &home, &[]).await;
    let client = daemon.client().await;
    (home, daemon, client)
}

/// A daemon on `transport` with one initialized connection.
pub async fn initialized(transport: Transport) -> (TestHome, Daemon, Client) {
    let (home, daemon, mut client) = connect(transport).await;
    client.initialize().await;
    (home, daemon, client)
}

/// Unwrap an error answer; fails the test if the request succeeded.
pub fn expect_error(answer: Result<Value, RpcError>) -> RpcError {
    match answer {
        Ok(result) => panic!("expected an error, got the result {result}"),
        Err(err) => err,
    }
}

/// Valid `initialize` params.
pub fn init_params() -> Value {
    json!({"clientInfo": {"name": "weft-e2e", "title": null, "version": "0.1.0"}})
}

/// Prove the connection still works and that nothing else is queued before the answer: send
/// a request with a fresh string id and require that the very next message is its answer.
/// On an initialized connection the answer is `Already initialized`.
pub async fn assert_still_serving(client: &mut Client, initialized: bool) {
    let id = json!("still-serving-probe");
    client
        .send_json(json!({"id": id, "method": "initialize", "params": init_params()}))
        .await;
    let msg = client.next_message().await;
    assert_eq!(
        msg.get("id"),
        Some(&id),
        "expected the probe's answer first, got {msg}"
    );
    if initialized {
        assert_eq!(msg["error"]["code"], INVALID_REQUEST, "{msg}");
        assert_eq!(msg["error"]["message"], "Already initialized", "{msg}");
    } else {
        assert!(msg.get("result").is_some(), "initialize failed: {msg}");
        client.notify("initialized", None).await;
    }
}
