//! The `unix://` control socket (docs/protocol.md §2.6): the default path under `$WEFT_HOME`,
//! the file's mode, a turn over it, two clients at once, `weft app-server proxy` relaying a
//! client's bytes, refusals at start-up, and the file removed at shutdown.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use serde_json::json;
use weft_mock_model::{MockModel, Reply, WireApi};
use weft_test_support::{Client, Daemon, TestHome, Transport, run_weft, weft_bin};

use super::assert_still_serving;
use crate::turns::{Harness, Setup};

/// A mock model and a daemon on `unix://` (the default path), with one initialized client.
async fn unix_harness() -> Harness {
    let mock = MockModel::start().await.expect("start the mock model");
    let home = TestHome::new();
    let setup = Setup::new(Transport::Ws);
    home.write_config(&setup.config_toml(&mock.base_url(), &home));
    let mut daemon = Daemon::builder(&home).listen("unix://").start().await;
    let mut client = daemon.client().await;
    client.initialize().await;
    Harness {
        mock,
        home,
        daemon,
        client,
        wire_api: WireApi::Responses,
    }
}

#[tokio::test]
async fn the_default_socket_is_private_under_the_home() {
    let harness = unix_harness().await;
    let home = std::fs::canonicalize(harness.home.path()).unwrap();
    let expected = home
        .join("app-server-control")
        .join("app-server-control.sock");
    assert_eq!(harness.daemon.unix_path(), expected);
    let mode = std::fs::metadata(&expected).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let dir = std::fs::metadata(expected.parent().unwrap()).unwrap();
    assert_eq!(dir.permissions().mode() & 0o777, 0o700);
}

#[tokio::test]
async fn a_turn_runs_over_the_socket() {
    let mut harness = unix_harness().await;
    let (_thread, run) = harness
        .thread_with_turn("Hello over unix", "say hello")
        .await;
    assert_eq!(
        run.completed_turn()["status"],
        "completed",
        "{:?}",
        run.messages
    );
    let deltas: String = run
        .notifications("item/agentMessage/delta")
        .iter()
        .filter_map(|n| n["params"]["delta"].as_str())
        .collect();
    assert_eq!(deltas, "Hello over unix");
}

#[tokio::test]
async fn two_clients_at_once_and_pings_answered() {
    let mut harness = unix_harness().await;
    let mut second = harness.second_client().await;
    let a = harness.client.request_ok("thread/list", json!({})).await;
    let b = second.request_ok("thread/list", json!({})).await;
    assert_eq!(a, b);
    second.ping(b"are you there").await;
    assert_still_serving(&mut second, true).await;
    assert_still_serving(&mut harness.client, true).await;
}

#[tokio::test]
async fn the_proxy_relays_a_websocket_client_over_its_stdio() {
    let mut harness = unix_harness().await;
    harness.push(Reply::new().text("proxied"));
    let mut proxy = tokio::process::Command::new(weft_bin())
        .env("WEFT_HOME", harness.home.path())
        .args(["app-server", "proxy"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn weft app-server proxy");
    let stdin = proxy.stdin.take().unwrap();
    let stdout = proxy.stdout.take().unwrap();
    let mut client = Client::connect_ws_over("proxy", tokio::io::join(stdout, stdin)).await;
    client.initialize().await;
    let cwd = harness.home.path().display().to_string();
    let thread = crate::turns::start_thread_on(&mut client, &cwd).await;
    let run = crate::turns::run_turn_on(&mut client, &thread, "through the proxy").await;
    assert_eq!(
        run.completed_turn()["status"],
        "completed",
        "{:?}",
        run.messages
    );
    // The daemon's own client sees the thread the proxied one made.
    let list = harness.client.request_ok("thread/list", json!({})).await;
    assert!(list.to_string().contains(&thread), "{list}");
    client.close().await;
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), proxy.wait())
        .await
        .expect("the proxy exits once the connection is closed")
        .unwrap();
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn the_proxy_without_a_server_fails_naming_the_socket() {
    let home = TestHome::new();
    let out = run_weft(
        &home,
        &["app-server", "proxy", "--sock", "/nonexistent/x.sock"],
    )
    .await;
    assert_eq!(out.code(), Some(1));
    assert!(
        out.stderr
            .contains("failed to connect to socket at /nonexistent/x.sock"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_second_server_on_the_same_socket_is_refused() {
    let harness = unix_harness().await;
    let path = harness.daemon.unix_path().display().to_string();
    let out = run_weft(
        &harness.home,
        &["app-server", "--listen", &format!("unix://{path}")],
    )
    .await;
    assert_eq!(out.code(), Some(1));
    assert!(
        out.stderr.contains(&format!(
            "app-server control socket is already in use at {path}"
        )),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_path_that_is_not_a_socket_is_refused_and_kept() {
    let home = TestHome::new();
    let path = home.path().join("not-a-socket");
    std::fs::write(&path, "keep me").unwrap();
    let url = format!("unix://{}", path.display());
    let out = run_weft(&home, &["app-server", "--listen", &url]).await;
    assert_eq!(out.code(), Some(1));
    assert!(
        out.stderr.contains("exists and is not a socket"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me");
}

#[tokio::test]
async fn the_socket_file_is_removed_at_shutdown() {
    let home = TestHome::new();
    let path = home.path().join("ctl").join("weft.sock");
    let url = format!("unix://{}", path.display());
    let mut daemon = Daemon::builder(&home).listen(&url).start().await;
    let mut client = daemon.initialized_client().await;
    assert_still_serving(&mut client, true).await;
    assert!(path.exists());
    daemon.sigterm();
    let status = daemon.wait_exit().await;
    assert!(status.success(), "{status:?}");
    assert!(!path.exists(), "the socket file outlived the daemon");
}

/// No browser can open a Unix socket, so `Origin` is not checked there, as in the reference
/// (0.171.0 upgrades such a request on its control socket): the upgrade succeeds.
#[tokio::test]
async fn an_upgrade_with_an_origin_is_accepted_on_the_socket() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let harness = unix_harness().await;
    let mut stream = tokio::net::UnixStream::connect(harness.daemon.unix_path())
        .await
        .unwrap();
    stream
        .write_all(
            b"GET / HTTP/1.1\r\nHost: localhost\r\nOrigin: http://example.com\r\n\
              Upgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .await
        .unwrap();
    let mut head = Vec::new();
    let read = async {
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8; 1];
            if stream.read(&mut byte).await.unwrap() == 0 {
                break;
            }
            head.push(byte[0]);
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), read)
        .await
        .expect("an answer to the upgrade");
    let head = String::from_utf8_lossy(&head);
    assert!(
        head.starts_with("HTTP/1.1 101 Switching Protocols"),
        "{head}"
    );
}
