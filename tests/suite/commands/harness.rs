//! A daemon in a scratch workspace for `command/exec` tests, and the reads they share.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use weft_test_support::{Client, Daemon, RpcError, TestHome, Transport};

/// `-32600`.
pub const INVALID_REQUEST: i64 = -32600;
/// `-32602`.
pub const INVALID_PARAMS: i64 = -32602;
/// `-32603`.
pub const INTERNAL_ERROR: i64 = -32603;

/// A daemon running in `ws` (its cwd, the commands' default cwd and sandbox workspace).
pub struct Commands {
    pub _home: TestHome,
    _dir: tempfile::TempDir,
    /// The workspace (canonical).
    pub ws: PathBuf,
    /// A directory outside the workspace (canonical).
    pub outside: PathBuf,
    pub daemon: Daemon,
    pub client: Client,
}

impl Commands {
    /// A daemon with `config` (TOML) on `transport`, and one initialized connection.
    pub async fn start(transport: Transport, config: &str) -> Commands {
        let home = TestHome::with_config(config);
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let mut daemon = Daemon::builder(&home)
            .listen(transport.listen_url())
            .current_dir(&ws)
            // A secret in the daemon's environment, which commands must not see.
            .env("WEFT_COMMANDS_API_TOKEN", "daemon-secret")
            .start()
            .await;
        let client = daemon.initialized_client().await;
        Commands {
            _home: home,
            _dir: dir,
            ws,
            outside,
            daemon,
            client,
        }
    }

    /// `command/exec` with `params`: its answer.
    pub async fn exec(&mut self, params: Value) -> Result<Value, RpcError> {
        self.client.request("command/exec", params).await
    }

    /// `command/exec` with `params` that must succeed.
    pub async fn exec_ok(&mut self, params: Value) -> Value {
        self.client.request_ok("command/exec", params).await
    }

    /// `method` (a follow-up) that must fail: its error.
    pub async fn refused(&mut self, method: &str, params: Value) -> RpcError {
        self.client.request_err(method, params).await
    }
}

/// `sh -c script` as an argv.
pub fn sh(script: &str) -> Value {
    json!(["sh", "-c", script])
}

/// What a streaming `command/exec` sent: its deltas' decoded bytes per stream, whether the
/// last delta of each stream said `capReached`, and its answer.
#[derive(Debug, Default)]
pub struct Streamed {
    pub stdout: String,
    pub stderr: String,
    pub deltas: usize,
    pub stdout_cap_reached: bool,
    pub answer: Option<Result<Value, RpcError>>,
}

/// Reads what follows request `id` of `process_id` until its answer: every delta must come
/// before it.
pub async fn read_stream(client: &mut Client, id: &Value, process_id: &str) -> Streamed {
    let mut seen = Streamed::default();
    collect_until(client, id, process_id, &mut seen, |_| false).await;
    seen
}

/// Reads deltas of `process_id` into `seen` until `stop` holds for it or request `id` is
/// answered (the answer is then in `seen.answer`).
pub async fn collect_until(
    client: &mut Client,
    id: &Value,
    process_id: &str,
    seen: &mut Streamed,
    stop: impl Fn(&Streamed) -> bool,
) {
    while seen.answer.is_none() && !stop(seen) {
        let message = client
            .wait_for("a delta or the command/exec answer", |m| {
                (m["method"] == "command/exec/outputDelta"
                    && m["params"]["processId"] == process_id)
                    || (m.get("method").is_none() && m.get("id") == Some(id))
            })
            .await;
        if message.get("method").is_some() {
            let params = &message["params"];
            let bytes = STANDARD
                .decode(params["deltaBase64"].as_str().unwrap())
                .unwrap();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            seen.deltas += 1;
            match params["stream"].as_str().unwrap() {
                "stdout" => {
                    seen.stdout.push_str(&text);
                    seen.stdout_cap_reached = params["capReached"] == true;
                }
                "stderr" => seen.stderr.push_str(&text),
                other => panic!("unknown stream {other}"),
            }
        } else {
            seen.answer = Some(match message.get("error") {
                Some(error) => Err(RpcError {
                    code: error["code"].as_i64().unwrap(),
                    message: error["message"].as_str().unwrap().to_string(),
                    data: None,
                }),
                None => Ok(message["result"].clone()),
            });
        }
    }
}

/// base64 of `text`.
pub fn b64(text: &str) -> String {
    STANDARD.encode(text)
}

/// Waits until `path` exists and holds a pid: the pid.
pub async fn pid_in(path: &Path) -> i32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no pid in {}", path.display());
}

/// Whether process `pid` runs (a zombie does not count).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Waits (up to 10 s) until `pid` no longer runs.
pub async fn until_dead(pid: i32) {
    for _ in 0..400 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("process {pid} still runs");
}
