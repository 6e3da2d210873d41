//! The WebSocket listener (docs/protocol.md §2.2–§2.4): HTTP endpoints, `Origin`, frames, concurrent
//! connections, authentication, binding rules, and a strict JSON-RPC 2.0 client (jsonrpsee).

use std::time::Duration;

use futures::future::join_all;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use weft_test_support::http::{client_frame, raw_websocket};
use weft_test_support::{Client, Daemon, QUIET_PERIOD, TestHome, http_request, run_weft};

use super::{assert_invalid_request, assert_still_serving, init_params};

async fn ws_daemon() -> (TestHome, Daemon) {
    let home = TestHome::new();
    let daemon = Daemon::ws(&home, &[]).await;
    (home, daemon)
}

#[tokio::test]
async fn health_endpoints_answer_200() {
    let (_home, daemon) = ws_daemon().await;
    let addr = daemon.ws_addr();
    for path in ["/readyz", "/healthz"] {
        let get = http_request(addr, "GET", path, &[]).await;
        assert_eq!(get.status, 200, "GET {path}");
        assert!(get.body.is_empty(), "GET {path} body: {}", get.body_text());
        let head = http_request(addr, "HEAD", path, &[]).await;
        assert_eq!(head.status, 200, "HEAD {path}");
    }
}

#[tokio::test]
async fn other_http_methods_are_405() {
    let (_home, daemon) = ws_daemon().await;
    let addr = daemon.ws_addr();
    for (method, path) in [
        ("POST", "/readyz"),
        ("PUT", "/healthz"),
        ("DELETE", "/readyz"),
    ] {
        let headers = [("Content-Length", "0")];
        let response = http_request(addr, method, path, &headers).await;
        assert_eq!(response.status, 405, "{method} {path}");
        let allow = response
            .header("allow")
            .unwrap_or_default()
            .to_ascii_uppercase();
        assert!(
            allow.contains("GET") && allow.contains("HEAD"),
            "{method} {path}: allow header {allow:?}"
        );
    }
}

/// A request carrying an `Origin` the web client does not admit (docs/web.md; here pages on
/// other ports and hosts) is refused with 403: health probes and upgrades alike.
#[tokio::test]
async fn origin_header_is_forbidden() {
    let (_home, daemon) = ws_daemon().await;
    let addr = daemon.ws_addr();
    let origin = [("Origin", "http://localhost:3000")];
    for path in ["/readyz", "/healthz"] {
        let response = http_request(addr, "GET", path, &origin).await;
        assert_eq!(response.status, 403, "GET {path} with Origin");
    }
    for origin in ["http://localhost:3000", "null", "https://example.com"] {
        let refused =
            Client::connect_ws_with_headers(&daemon.ws_url(), &[("Origin", origin)]).await;
        match refused {
            Err(err) => assert_eq!(
                err.status(),
                Some(403),
                "upgrade with Origin {origin}: {err}"
            ),
            Ok(_) => panic!("upgrade with Origin {origin} was accepted"),
        }
    }
    // Without Origin, the same listener works.
    let mut client = Client::connect_ws(&daemon.ws_url()).await;
    client.initialize().await;
}

/// A plain GET (no upgrade headers) on another path is a client error.
#[tokio::test]
async fn plain_get_on_other_paths_is_4xx() {
    let (_home, daemon) = ws_daemon().await;
    for path in ["/", "/foo", "/readyz/x"] {
        let response = http_request(daemon.ws_addr(), "GET", path, &[]).await;
        assert!(
            (400..500).contains(&response.status),
            "GET {path}: {}",
            response.status
        );
    }
}

/// Any request path upgrades.
#[tokio::test]
async fn any_path_upgrades() {
    let (_home, daemon) = ws_daemon().await;
    for path in ["/", "/rpc", "/some/deep/path?x=1"] {
        let url = format!("{}{path}", daemon.ws_url());
        let mut client = Client::connect_ws(&url).await;
        client.initialize().await;
    }
}

/// Binary frames are ignored (no reply, connection stays up); pings get pongs.
#[tokio::test]
async fn binary_frames_are_ignored_and_pings_answered() {
    let (_home, mut daemon) = ws_daemon().await;
    let mut client = daemon.client().await;
    let request = json!({"id": 1, "method": "initialize", "params": init_params()});
    client.send_bytes(request.to_string().as_bytes()).await;
    client.send_bytes(&[0, 159, 146, 150]).await;
    client.ping(b"are you there").await;
    // The binary request did not initialize the connection.
    assert_still_serving(&mut client, false).await;
    client.ping(b"").await;
    client.expect_no_message_within(QUIET_PERIOD).await;
}

/// Many connections at once, each with its own handshake and state.
#[tokio::test]
async fn many_concurrent_connections() {
    let (_home, daemon) = ws_daemon().await;
    let url = daemon.ws_url();
    let clients = join_all((0..32).map(|_| Client::connect_ws(&url))).await;
    let clients = join_all(
        clients
            .into_iter()
            .enumerate()
            .map(|(i, mut client)| async move {
                if i % 2 == 0 {
                    client.initialize().await;
                }
                client
            }),
    )
    .await;
    let outcomes = join_all(
        clients
            .into_iter()
            .enumerate()
            .map(|(i, mut client)| async move {
                let expected = if i % 2 == 0 {
                    "Already initialized"
                } else {
                    "Not initialized"
                };
                let method = if i % 2 == 0 {
                    "initialize"
                } else {
                    "thread/start"
                };
                let params = if i % 2 == 0 { init_params() } else { json!({}) };
                assert_invalid_request(client.request(method, params).await, expected);
                client
            }),
    )
    .await;
    assert_eq!(outcomes.len(), 32);
}

/// A client that disconnects in the middle of a frame, in the middle of a fragmented
/// message, or right after a request without reading: the daemon keeps serving the others.
#[tokio::test]
async fn clients_disconnecting_mid_message_do_not_hurt_others() {
    let (_home, mut daemon) = ws_daemon().await;
    let mut steady = daemon.initialized_client().await;
    let addr = daemon.ws_addr();

    // Half a frame: header announces 300 bytes, 20 arrive.
    let mut raw = raw_websocket(addr).await;
    let frame = client_frame(1, true, &[b' '; 300]);
    raw.write_all(&frame[..28]).await.unwrap();
    drop(raw);

    // First fragment of a text message, then gone.
    let mut raw = raw_websocket(addr).await;
    let fragment = client_frame(1, false, br#"{"id":1,"method":"initia"#);
    raw.write_all(&fragment).await.unwrap();
    drop(raw);

    // A request sent, then the connection dropped before the answer is read.
    let mut quitter = daemon.client().await;
    quitter
        .send_json(json!({"id": 1, "method": "initialize", "params": init_params()}))
        .await;
    drop(quitter);

    assert_still_serving(&mut steady, true).await;
    let mut fresh = daemon.initialized_client().await;
    assert_still_serving(&mut fresh, true).await;
}

/// A client that stops reading while the daemon has lots to send fills its outbound queue and
/// is disconnected; another connection keeps working meanwhile (§11.5).
///
/// The slow client makes the daemon produce answers of a chosen size: an unknown method's
/// error message repeats the method name. It keeps sending (never reading) until the daemon
/// drops it, up to 64 MiB of answers, far more than a bounded queue plus socket buffers hold.
/// The ingress queue is shared, so while the flood lasts the other connection may be told
/// `-32001` (clients retry); it must always get an answer, and a retry must succeed.
#[tokio::test]
async fn slow_client_is_disconnected_others_keep_working() {
    const ANSWER_BYTES: usize = 4 * 1024;
    const MAX_REQUESTS: usize = 64 * 1024 * 1024 / ANSWER_BYTES;
    let (_home, mut daemon) = ws_daemon().await;
    let mut other = daemon.initialized_client().await;
    let mut slow = daemon.initialized_client().await;
    slow.set_timeout(Duration::from_secs(5));
    let method = "m".repeat(ANSWER_BYTES);
    let mut sent = 0usize;
    while sent < MAX_REQUESTS {
        let request = json!({"id": sent, "method": method, "params": {}}).to_string();
        if slow.try_send_raw(&request).await.is_err() {
            break;
        }
        sent += 1;
        if sent.is_multiple_of(2000) {
            // The slow connection must never stall the others.
            assert_serving_despite_overload(&mut other).await;
        }
    }
    assert_serving_despite_overload(&mut other).await;
    let answered = slow.read_until_closed().await;
    assert!(
        answered.len() < sent,
        "the slow client got all {sent} answers (about {} MiB): it was never disconnected",
        sent * ANSWER_BYTES / (1024 * 1024)
    );
    eprintln!(
        "slow client: {sent} requests sent, {} answers before the disconnect",
        answered.len()
    );
    assert_serving_despite_overload(&mut other).await;
}

/// The connection answers; `-32001` (shared ingress full) is retried, as clients are told to.
async fn assert_serving_despite_overload(client: &mut Client) {
    for attempt in 0..100 {
        let answer = client
            .request_with_id(
                json!(format!("probe-{attempt}")),
                "initialize",
                init_params(),
            )
            .await;
        match answer {
            Err(err) if err.code == super::OVERLOADED => {
                assert_eq!(err.message, super::OVERLOADED_MESSAGE);
            }
            other => return assert_invalid_request(other, "Already initialized"),
        }
    }
    panic!("still overloaded after 100 attempts");
}

/// jsonrpsee's WebSocket client (strict JSON-RPC 2.0) can call `initialize` and decode the
/// typed result, and gets JSON-RPC errors as such.
#[tokio::test]
async fn jsonrpsee_client_initializes() {
    use jsonrpsee::core::client::ClientT;
    use jsonrpsee::core::params::ObjectParams;
    use jsonrpsee::ws_client::WsClientBuilder;

    let (home, daemon) = ws_daemon().await;
    let client = WsClientBuilder::default()
        .request_timeout(weft_test_support::DEFAULT_TIMEOUT)
        .connection_timeout(weft_test_support::DEFAULT_TIMEOUT)
        .build(daemon.ws_url())
        .await
        .expect("jsonrpsee connects");
    let mut params = ObjectParams::new();
    params
        .insert(
            "clientInfo",
            json!({"name": "jsonrpsee", "title": null, "version": "0.26"}),
        )
        .unwrap();
    let result: weft_protocol::InitializeResponse = client
        .request("initialize", params.clone())
        .await
        .expect("initialize through jsonrpsee");
    assert_eq!(result.codex_home, home.path().to_str().unwrap());
    assert_eq!(result.platform_family, "unix");
    assert!(
        result.user_agent.starts_with("jsonrpsee/"),
        "{}",
        result.user_agent
    );
    let again: Result<serde_json::Value, _> = client.request("initialize", params).await;
    match again {
        Err(jsonrpsee::core::ClientError::Call(err)) => {
            assert_eq!(err.code(), -32600);
            assert_eq!(err.message(), "Already initialized");
        }
        other => panic!("expected Already initialized, got {other:?}"),
    }
}

/// A non-loopback bind without `--ws-auth` is refused at start with a message naming it.
#[tokio::test]
async fn non_loopback_bind_requires_ws_auth() {
    let home = TestHome::new();
    let output = run_weft(&home, &["app-server", "--listen", "ws://0.0.0.0:0"]).await;
    assert_ne!(output.code(), Some(0), "{output:?}");
    assert!(
        output.status.code().is_some(),
        "killed by a signal: {output:?}"
    );
    assert!(
        output.stderr.contains("--ws-auth"),
        "the message should name --ws-auth: {}",
        output.stderr
    );
}

/// `--ws-auth capability-token --ws-token-file PATH`: the upgrade needs the right bearer
/// (401 otherwise); health endpoints stay open.
#[tokio::test]
async fn capability_token_auth() {
    let home = TestHome::new();
    let token_file = home.write_file("ws-token", "s3cret-token-value");
    let token_path = token_file.to_str().unwrap();
    let daemon = Daemon::ws(
        &home,
        &[
            "--ws-auth",
            "capability-token",
            "--ws-token-file",
            token_path,
        ],
    )
    .await;
    let url = daemon.ws_url();
    let cases: [(&[(&str, &str)], &str); 4] = [
        (&[], "no bearer"),
        (&[("Authorization", "Bearer wrong")], "wrong bearer"),
        (
            &[("Authorization", "Bearer s3cret-token-valu")],
            "prefix of the token",
        ),
        (
            &[("Authorization", "s3cret-token-value")],
            "no Bearer scheme",
        ),
    ];
    for (headers, what) in cases {
        match Client::connect_ws_with_headers(&url, headers).await {
            Err(err) => assert_eq!(err.status(), Some(401), "{what}: {err}"),
            Ok(_) => panic!("upgrade with {what} was accepted"),
        }
    }
    let mut client =
        Client::connect_ws_with_headers(&url, &[("Authorization", "Bearer s3cret-token-value")])
            .await
            .expect("the right bearer is accepted");
    client.initialize().await;
    let health = http_request(daemon.ws_addr(), "GET", "/readyz", &[]).await;
    assert_eq!(health.status, 200, "health endpoints need no auth");
}
