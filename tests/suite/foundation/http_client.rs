//! The daemon's HTTP client (`[http]`, README "Configuration"): Weft's user agent on every
//! model request, a connect timeout that fails an unreachable provider's turn clearly, and the
//! proxy variables.

use std::time::Duration;

use serde_json::json;
use weft_mock_model::{MockModel, Reply};
use weft_test_support::{
    BlackHole, Client, Daemon, TestHome, Transport, mock_model_config, run_weft,
};

use crate::turns::{Harness, Setup, run_turn_on, start_thread_on};

/// The user agent the daemon must send (the workspace shares one version).
const USER_AGENT: &str = concat!("weft/", env!("CARGO_PKG_VERSION"));

/// A daemon (with `env`) whose default provider is at `base_url`, and one initialized
/// client with a thread.
async fn daemon_with(base_url: &str, env: &[(&str, &str)]) -> (TestHome, Daemon, Client, String) {
    daemon_with_config(&mock_model_config(base_url, "responses"), env).await
}

/// One turn ("hi") on a daemon whose provider is at `base_url`, with `env`: it completes.
async fn turn_completes(base_url: &str, env: &[(&str, &str)]) {
    let (_home, _daemon, mut client, thread) = daemon_with(base_url, env).await;
    let run = run_turn_on(&mut client, &thread, "hi").await;
    let status = &run.completed_turn()["status"];
    assert_eq!(status, "completed", "{:?}", run.messages);
}

/// A daemon (with `env`) on this `config.toml`, and one initialized client with a thread.
async fn daemon_with_config(
    config: &str,
    env: &[(&str, &str)],
) -> (TestHome, Daemon, Client, String) {
    let home = TestHome::with_config(config);
    let mut builder = Daemon::builder(&home).listen(Transport::Stdio.listen_url());
    for (key, value) in env {
        builder = builder.env(key, value);
    }
    let mut daemon = builder.start().await;
    let mut client = daemon.initialized_client().await;
    let cwd = home.path().display().to_string();
    let thread = start_thread_on(&mut client, &cwd).await;
    (home, daemon, client, thread)
}

/// The model request of a turn and the `GET /models` of `model/list` both carry
/// `User-Agent: weft/<version>`.
#[tokio::test]
async fn model_requests_carry_weft_user_agent() {
    let mut h = Harness::start(Setup::new(Transport::Stdio)).await;
    let (_, run) = h.thread_with_turn("hello", "hi").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    h.client
        .request("model/list", json!({}))
        .await
        .expect("model/list");
    let requests = h.mock.all_requests();
    assert!(
        requests
            .iter()
            .any(|r| r.method == "GET" && r.path.ends_with("/models")),
        "model/list asked the provider: {requests:#?}"
    );
    assert!(requests.iter().any(|r| r.path.ends_with("/responses")));
    for request in &requests {
        assert_eq!(
            request.header("user-agent"),
            Some(USER_AGENT),
            "{} {}",
            request.method,
            request.path
        );
    }
}

/// A provider whose address takes no connection: with `[http] connect_timeout_ms = 1000` the
/// turn fails (long before the provider's 120 s idle timeout) with an error that says the
/// connection was not made and names the URL.
#[tokio::test]
async fn unreachable_provider_fails_within_connect_timeout() {
    let hole = BlackHole::start().await;
    let addr = hole.addr;
    let base_url = format!("http://{addr}/v1");
    let config = format!(
        "{}stream_idle_timeout_ms = 120000\n\n[http]\nconnect_timeout_ms = 1000\n",
        mock_model_config(&base_url, "responses").replace("stream_idle_timeout_ms = 10000\n", "")
    );
    let (_home, _daemon, mut client, thread) = daemon_with_config(&config, &[]).await;
    let run = tokio::time::timeout(
        Duration::from_secs(30),
        run_turn_on(&mut client, &thread, "hi"),
    )
    .await
    .expect("the turn must end within the connect timeout, not the idle timeout");
    let turn = run.completed_turn();
    assert_eq!(turn["status"], "failed", "{turn}");
    let message = turn["error"]["message"].as_str().expect("error message");
    assert!(
        message.contains("connect_timeout_ms") && message.contains(&base_url),
        "{message}"
    );
    assert!(
        message.starts_with("connection to the model provider failed"),
        "{message}"
    );
}

/// A refused connection fails the turn at once with the URL in the message.
#[tokio::test]
async fn refused_connection_fails_the_turn_clearly() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let base_url = format!("http://{addr}/v1");
    let (_home, _daemon, mut client, thread) = daemon_with(&base_url, &[]).await;
    let run = run_turn_on(&mut client, &thread, "hi").await;
    let turn = run.completed_turn();
    assert_eq!(turn["status"], "failed", "{turn}");
    let message = turn["error"]["message"].as_str().expect("error message");
    assert!(
        message.starts_with("connection to the model provider failed")
            && message.contains(&base_url),
        "{message}"
    );
}

/// `HTTP_PROXY` sends model requests through the proxy (here the mock itself, which sees the
/// provider's host), and `NO_PROXY` exempts a host from it.
#[tokio::test]
async fn proxy_variables_are_honoured() {
    let mock = MockModel::start().await.unwrap();
    mock.push(Reply::new().text("via proxy").responses());
    let proxy = format!("http://{}", mock.addr());
    let env = [("HTTP_PROXY", proxy.as_str()), ("NO_PROXY", "")];
    turn_completes("http://weft-proxy-test.invalid/v1", &env).await;
    let request = mock.single_request();
    assert_eq!(request.header("host"), Some("weft-proxy-test.invalid"));
    assert_eq!(request.header("user-agent"), Some(USER_AGENT));

    // The proxy is a closed port; NO_PROXY lets the provider at 127.0.0.1 be reached directly.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mock = MockModel::start().await.unwrap();
    mock.push(Reply::new().text("direct").responses());
    let proxy = format!("http://{closed}");
    let env = [("HTTP_PROXY", proxy.as_str()), ("NO_PROXY", "127.0.0.1")];
    turn_completes(&mock.base_url(), &env).await;
    assert_eq!(mock.requests().len(), 1);
}

/// An `[http] ca_certificate` that holds no certificate stops the daemon at start-up with a
/// message naming the key and the file.
#[tokio::test]
async fn bad_ca_certificate_stops_the_daemon() {
    let home = TestHome::new();
    home.write_file("corp-ca.pem", "not a certificate\n");
    home.write_config(&format!(
        "{}\n[http]\nca_certificate = \"corp-ca.pem\"\n",
        mock_model_config("http://127.0.0.1:9/v1", "responses")
    ));
    let output = run_weft(&home, &["app-server"]).await;
    assert!(!output.status.success(), "{output:?}");
    assert!(
        output.stderr.contains("http.ca_certificate") && output.stderr.contains("corp-ca.pem"),
        "{}",
        output.stderr
    );
}
