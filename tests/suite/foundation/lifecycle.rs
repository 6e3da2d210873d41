//! Process lifecycle: stdin EOF and signals shut down gracefully with exit code 0
//! (issue 2 §7), including a stdio client that disappears mid-message.

use weft_test_support::{Client, Daemon, TestHome, Transport};

use super::{assert_still_serving, initialized};

#[tokio::test]
async fn stdin_eof_exits_zero() {
    let (_home, mut daemon, mut client) = initialized(Transport::Stdio).await;
    client.close().await;
    assert!(client.read_until_closed().await.is_empty());
    let status = daemon.wait_exit().await;
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[tokio::test]
async fn stdin_eof_before_initialize_exits_zero() {
    let home = TestHome::new();
    let mut daemon = Daemon::stdio(&home, &[]).await;
    let mut client = daemon.client().await;
    client.close().await;
    assert_eq!(daemon.wait_exit().await.code(), Some(0));
}

/// A stdio client that goes away in the middle of a line: no reply to the fragment, clean exit.
#[tokio::test]
async fn stdio_client_disconnecting_mid_message_exits_zero() {
    let (_home, mut daemon, mut client) = initialized(Transport::Stdio).await;
    client
        .send_bytes(br#"{"id":2,"method":"initialize","params":{"clientInfo":{"na"#)
        .await;
    client.close().await;
    let after = client.read_until_closed().await;
    assert!(after.is_empty(), "replies to a cut message: {after:?}");
    assert_eq!(daemon.wait_exit().await.code(), Some(0));
}

#[tokio::test]
async fn sigterm_exits_zero_stdio() {
    let (_home, mut daemon, mut client) = initialized(Transport::Stdio).await;
    daemon.sigterm();
    let status = daemon.wait_exit().await;
    assert_eq!(status.code(), Some(0), "{status:?}");
    client.read_until_closed().await;
}

#[tokio::test]
async fn sigterm_exits_zero_ws() {
    let (_home, mut daemon, mut client) = initialized(Transport::Ws).await;
    let mut idle = daemon.client().await;
    daemon.sigterm();
    let status = daemon.wait_exit().await;
    assert_eq!(status.code(), Some(0), "{status:?}");
    client.read_until_closed().await;
    idle.read_until_closed().await;
}

#[tokio::test]
async fn sigint_exits_zero_ws() {
    let (_home, mut daemon, _client) = initialized(Transport::Ws).await;
    daemon.signal("INT");
    assert_eq!(daemon.wait_exit().await.code(), Some(0));
}

/// After a WebSocket client disconnects, the daemon keeps running and serving new clients.
#[tokio::test]
async fn websocket_daemon_outlives_its_clients() {
    let (_home, mut daemon, mut first) = initialized(Transport::Ws).await;
    first.close().await;
    drop(first);
    let mut second = Client::connect_ws(&daemon.ws_url()).await;
    second.initialize().await;
    assert_still_serving(&mut second, true).await;
    assert!(
        daemon
            .wait_exit_within(std::time::Duration::ZERO)
            .await
            .is_none(),
        "the daemon exited after its client left"
    );
}

/// `--listen off` runs with no transport: stdin EOF does not stop it, a signal does.
#[tokio::test]
async fn listen_off_waits_for_a_signal() {
    let home = TestHome::new();
    let mut daemon = Daemon::builder(&home).listen("off").start().await;
    let mut client = daemon.client().await;
    client.close().await;
    // The one time-based check here: "it keeps running" (like expect_no_message_within).
    assert!(
        daemon
            .wait_exit_within(weft_test_support::QUIET_PERIOD)
            .await
            .is_none(),
        "`--listen off` exited on its own:\n{}",
        daemon.stderr()
    );
    daemon.sigterm();
    assert_eq!(daemon.wait_exit().await.code(), Some(0));
    assert!(
        client.read_until_closed().await.is_empty(),
        "output on stdout"
    );
}
