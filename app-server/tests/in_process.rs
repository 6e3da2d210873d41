//! The daemon in-process: request processing and the handlers behind the line transport
//! (`transport::lines`, the one stdio serves) over an in-memory pair (`tokio::io::duplex`),
//! so the router is tested without a process or a socket (docs/architecture.md §4).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;
use weft_app_server::server::{self, Daemon};
use weft_app_server::transport::lines::{self, End, StreamNames};
use weft_core::config::Config;
use weft_mock_model::{MockModel, Reply};
use weft_test_support::{TestHome, mock_model_config};

const TIMEOUT: Duration = Duration::from_secs(20);

/// One in-memory connection to a daemon of its own, in a temporary `WEFT_HOME`.
struct InProcess {
    daemon: Option<Daemon>,
    input: WriteHalf<DuplexStream>,
    output: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
    serving: JoinHandle<End>,
    next_id: i64,
    _home: TestHome,
}

impl InProcess {
    /// A daemon with `config` as its `config.toml`.
    async fn start(config: &str) -> InProcess {
        let home = TestHome::with_config(config);
        let (config, _) = Config::load(home.path(), &[]).expect("the config loads");
        let daemon = server::start(config).await.expect("the daemon starts");
        let (client, ours) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(ours);
        let (ingress, shutdown) = (daemon.ingress.clone(), daemon.shutdown.clone());
        let limits = daemon.line_limits();
        let names = StreamNames {
            input: "in-memory input",
            output: "in-memory output",
        };
        let serving = tokio::spawn(async move {
            lines::serve(read, write, ingress, &shutdown, limits, names).await
        });
        let (output, input) = tokio::io::split(client);
        InProcess {
            daemon: Some(daemon),
            input,
            output: BufReader::new(output).lines(),
            serving,
            next_id: 1,
            _home: home,
        }
    }

    async fn send_line(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).await.expect("write");
        self.input.write_all(b"\n").await.expect("write");
    }

    /// Send a request; returns its id.
    async fn send(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"id": id, "method": method, "params": params}).to_string();
        self.send_line(&line).await;
        id
    }

    /// The next message the daemon writes.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(TIMEOUT, self.output.next_line())
            .await
            .expect("a message in time")
            .expect("read")
            .expect("the output is open");
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("{err}: {line}"))
    }

    /// Messages up to and including the answer to request `id`.
    async fn until_answer(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let message = self.next().await;
            if message.get("method").is_none() && message["id"] == id {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// Send a request and wait for its answer.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.until_answer(id).await.0
    }

    async fn initialize(&mut self) -> Value {
        let params = json!({"clientInfo": {"name": "in-process", "version": "1.0"}});
        let answer = self.call("initialize", params).await;
        self.send_line(r#"{"method":"initialized"}"#).await;
        answer
    }

    /// End the input, as a client closing stdin does: the connection answers what it read and
    /// closes; then the daemon stops.
    async fn finish(mut self) -> End {
        self.input.shutdown().await.expect("close the input");
        let end = tokio::time::timeout(TIMEOUT, &mut self.serving)
            .await
            .expect("the connection ends")
            .expect("the connection task");
        let daemon = self.daemon.take().expect("started");
        daemon.stop().await.expect("the daemon stops");
        end
    }
}

fn error_of(answer: &Value) -> (i64, String) {
    let error = &answer["error"];
    assert!(error.is_object(), "an error answer: {answer}");
    let code = error["code"].as_i64().expect("a code");
    (
        code,
        error["message"].as_str().expect("a message").to_owned(),
    )
}

#[tokio::test]
async fn the_handshake_comes_first_and_once() {
    let mut c = InProcess::start("").await;
    let refused = c.call("thread/loaded/list", json!({})).await;
    assert_eq!(
        error_of(&refused),
        (-32600, "Not initialized".to_owned()),
        "as over stdio"
    );
    let answer = c.initialize().await;
    let agent = answer["result"]["userAgent"]
        .as_str()
        .expect("a user agent");
    assert!(agent.starts_with("in-process/"), "{agent}");
    assert!(answer["result"]["codexHome"].is_string(), "{answer}");
    let again = c
        .call(
            "initialize",
            json!({"clientInfo": {"name": "in-process", "version": "1.0"}}),
        )
        .await;
    assert_eq!(error_of(&again), (-32600, "Already initialized".to_owned()));
    let listed = c.call("thread/loaded/list", json!({})).await;
    assert_eq!(listed["result"]["data"], json!([]), "{listed}");
    assert_eq!(c.finish().await, End::Eof);
}

#[tokio::test]
async fn unknown_methods_and_bad_params_are_invalid_requests() {
    let mut c = InProcess::start("").await;
    c.initialize().await;
    let unknown = c.call("foo/bar", json!({})).await;
    let (code, message) = error_of(&unknown);
    assert_eq!(code, -32600);
    assert!(
        message.starts_with("Invalid request: unknown variant `foo/bar`, expected"),
        "{message}"
    );
    let bad = c.call("thread/start", json!({"cwd": 5})).await;
    let (code, message) = error_of(&bad);
    assert_eq!(code, -32600);
    assert!(message.starts_with("Invalid request: "), "{message}");
    c.finish().await;
}

#[tokio::test]
async fn malformed_lines_are_dropped_and_the_connection_goes_on() {
    let mut c = InProcess::start("[limits]\nmax_message_bytes = 1024\n").await;
    c.initialize().await;
    for garbage in [
        "not json",
        "[1,2]",
        r#"{"id":null,"method":"x"}"#,
        r#"{"id":1}"#,
    ] {
        c.send_line(garbage).await;
    }
    // Nothing answers the garbage: the next message is this request's answer.
    let id = c.send("thread/loaded/list", json!({})).await;
    let answer = c.next().await;
    assert_eq!(answer["id"], id, "{answer}");
    assert!(answer["result"].is_object(), "{answer}");

    // A line over the size limit is answered with the id found at its start.
    let long = format!(
        r#"{{"id":"big","method":"thread/list","params":{{"pad":"{}"}}}}"#,
        "x".repeat(2000)
    );
    c.send_line(&long).await;
    let answer = c.next().await;
    assert_eq!(answer["id"], "big", "{answer}");
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32600);
    assert!(
        message.contains("exceeds the limit of 1024 bytes (limits.max_message_bytes)"),
        "{message}"
    );
    // The connection went on to the end of its input.
    assert_eq!(c.finish().await, End::Eof);
}

#[tokio::test]
async fn requests_past_the_running_bound_are_overloaded_and_all_answered() {
    let mut c = InProcess::start("[limits]\nmax_running_requests = 1\n").await;
    c.initialize().await;
    let mut ids = Vec::new();
    for _ in 0..32 {
        ids.push(c.send("thread/list", json!({})).await);
    }
    let mut overloaded = 0;
    for _ in &ids {
        let answer = c.next().await;
        assert!(
            ids.contains(&answer["id"].as_i64().expect("an id")),
            "{answer}"
        );
        if answer.get("error").is_some() {
            let expected = (-32001, "Server overloaded; retry later.".to_owned());
            assert_eq!(error_of(&answer), expected);
            overloaded += 1;
        } else {
            assert!(answer["result"]["data"].is_array(), "{answer}");
        }
    }
    eprintln!("{overloaded} of {} requests were overloaded", ids.len());
    assert!(overloaded < ids.len(), "the first one runs");
    // The bound frees as handlers end: a request sent alone is served (retried while the last
    // handler, already answered, may still be finishing, as clients retry `-32001`).
    for attempt in 0.. {
        let listed = c.call("thread/list", json!({})).await;
        if listed["result"]["data"].is_array() {
            break;
        }
        assert!(attempt < 50, "still overloaded: {listed}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(c.finish().await, End::Eof);
}

#[tokio::test]
async fn a_thread_takes_a_turn() {
    let mock = MockModel::start().await.expect("the mock model starts");
    mock.push(Reply::new().text("hello from the mock").responses());
    let config = mock_model_config(&mock.base_url(), "responses");
    let mut c = InProcess::start(&config).await;
    c.initialize().await;
    let cwd = std::env::temp_dir().display().to_string();
    let params = json!({"cwd": cwd, "approvalPolicy": "never", "sandbox": "read-only"});
    let id = c.send("thread/start", params).await;
    let (started, _) = c.until_answer(id).await;
    let thread_id = started["result"]["thread"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a thread: {started}"))
        .to_owned();
    let input = json!([{"type": "text", "text": "hi"}]);
    let id = c
        .send("turn/start", json!({"threadId": thread_id, "input": input}))
        .await;
    let (answer, _) = c.until_answer(id).await;
    assert!(answer["result"]["turn"]["id"].is_string(), "{answer}");
    let mut text = None;
    loop {
        let message = c.next().await;
        let params = &message["params"];
        if message["method"] == "item/completed" && params["item"]["type"] == "agentMessage" {
            text = params["item"]["text"].as_str().map(str::to_owned);
        }
        if message["method"] == "turn/completed" {
            assert_eq!(params["turn"]["status"], "completed", "{message}");
            break;
        }
    }
    assert_eq!(text.as_deref(), Some("hello from the mock"));
    assert_eq!(mock.requests().len(), 1);
    c.finish().await;
}
