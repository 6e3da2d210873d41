//! The implementations under test: how to configure a home for each and spawn it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};
use tokio::process::Command;
use weft_mock_model::{MockModel, Reply};

use crate::client::Server;
use crate::proxy::Proxy;
use crate::rpc::{Note, Pending};

/// How long a plain request (initialize, thread/start …) may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server gets to exit after stdin EOF before it is killed.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Weft: `weft app-server`, home in `$WEFT_HOME`.
    Weft,
    /// The reference: `codex app-server`, home in `$CODEX_HOME`.
    Reference,
}

/// One implementation under test.
#[derive(Debug, Clone)]
pub struct Target {
    pub kind: Kind,
    pub binary: PathBuf,
    /// Scratch directory of this target: homes and the git workspace used as cwd.
    pub scratch: PathBuf,
}

/// A home directory with a `config.toml`, plus the `HOME` the server sees.
#[derive(Debug, Clone)]
pub struct Home {
    /// `$WEFT_HOME` / `$CODEX_HOME`.
    pub dir: PathBuf,
    /// `$HOME` (empty scratch).
    pub user_home: PathBuf,
}

static NEXT_HOME: AtomicUsize = AtomicUsize::new(0);

impl Target {
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Weft => "weft",
            Kind::Reference => "reference",
        }
    }

    /// The git workspace every server runs in (created by [`Target::prepare`]).
    pub fn workspace(&self) -> PathBuf {
        self.scratch.join("workspace")
    }

    /// Create the scratch directory and an empty git workspace.
    pub fn prepare(&self) -> Result<()> {
        let workspace = self.workspace();
        std::fs::create_dir_all(&workspace)
            .with_context(|| format!("create {}", workspace.display()))?;
        // A git repository, as a coding agent's cwd usually is; without git, a plain folder.
        let _ = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&workspace)
            .status();
        Ok(())
    }

    /// A new home directory whose config points the default provider at `base_url`.
    pub fn new_home(&self, base_url: &str) -> Result<Home> {
        let n = NEXT_HOME.fetch_add(1, Ordering::Relaxed);
        let dir = self.scratch.join(format!("home-{n}"));
        let user_home = self.scratch.join(format!("user-home-{n}"));
        std::fs::create_dir_all(&dir)?;
        std::fs::create_dir_all(&user_home)?;
        let home = Home { dir, user_home };
        self.write_config(&home, base_url)?;
        Ok(home)
    }

    /// (Re)write `home`'s config.toml for a mock at `base_url`.
    pub fn write_config(&self, home: &Home, base_url: &str) -> Result<()> {
        std::fs::write(home.dir.join("config.toml"), self.config(base_url))?;
        Ok(())
    }

    /// `config.toml`: the mock as the default provider, retries off so a failure shows at once.
    fn config(&self, base_url: &str) -> String {
        let mut config = String::from(
            r#"model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "read-only"
"#,
        );
        if self.kind == Kind::Reference {
            // The reference's plugin marketplace sync and update check would try to reach outside
            // hosts (it runs in a loopback-only namespace anyway).
            config.push_str(
                r#"check_for_update_on_startup = false

[features]
plugins = false

[analytics]
enabled = false
"#,
            );
        }
        config.push_str(&format!(
            r#"
[model_providers.mock]
name = "Mock model"
base_url = "{base_url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
"#
        ));
        config
    }

    /// The command that starts the server on stdio with `home`, stderr into a log in the home.
    pub fn command(&self, home: &Home) -> Result<Command> {
        let mut command = Command::new(&self.binary);
        command.arg("app-server");
        command.env_clear();
        command.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        command.env("HOME", &home.user_home);
        command.env("LANG", "C.UTF-8");
        match self.kind {
            Kind::Weft => command.env("WEFT_HOME", &home.dir),
            Kind::Reference => command.env("CODEX_HOME", &home.dir),
        };
        command.current_dir(self.workspace());
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(home.dir.join("server-stderr.log"))?;
        command.stderr(log);
        Ok(command)
    }

    /// Spawn a server with `home`.
    pub fn spawn(&self, home: &Home) -> Result<Server> {
        Server::spawn(self.command(home)?)
            .with_context(|| format!("start {}", self.binary.display()))
    }
}

/// A running server with its own mock model (behind the timestamping proxy) and home.
pub struct Session {
    pub server: Server,
    pub mock: MockModel,
    pub proxy: Proxy,
    pub home: Home,
}

impl Session {
    /// Start a mock, a proxy, a fresh home and the server; do the handshake.
    pub async fn start(target: &Target) -> Result<Session> {
        Session::start_with(target, "").await
    }

    /// [`Session::start`] with `extra_config` appended to the home's `config.toml`.
    pub async fn start_with(target: &Target, extra_config: &str) -> Result<Session> {
        let mock = MockModel::start().await?;
        let proxy = Proxy::start(mock.addr()).await?;
        let home = target.new_home(&proxy.base_url())?;
        if !extra_config.is_empty() {
            let path = home.dir.join("config.toml");
            let config = std::fs::read_to_string(&path)? + extra_config;
            std::fs::write(&path, config)?;
        }
        let server = target.spawn(&home)?;
        server.initialize(REQUEST_TIMEOUT).await?;
        Ok(Session {
            server,
            mock,
            proxy,
            home,
        })
    }

    /// Start a mock and a proxy, point `home` at them, start the server and resume `thread`.
    pub async fn resume(target: &Target, home: Home, thread: &str) -> Result<Session> {
        let mock = MockModel::start().await?;
        let proxy = Proxy::start(mock.addr()).await?;
        target.write_config(&home, &proxy.base_url())?;
        let server = target.spawn(&home)?;
        server.initialize(REQUEST_TIMEOUT).await?;
        server
            .request(
                "thread/resume",
                json!({"threadId": thread}),
                REQUEST_TIMEOUT,
            )
            .await?;
        Ok(Session {
            server,
            mock,
            proxy,
            home,
        })
    }

    /// Start a thread (cwd: the workspace); returns its id.
    pub async fn start_thread(&self, target: &Target) -> Result<String> {
        let result = self
            .server
            .request("thread/start", thread_start_params(target), REQUEST_TIMEOUT)
            .await?;
        thread_id(&result)
    }

    /// One turn on `thread` with `text` as input: `turn/start` answered, then `turn/completed`
    /// read (each within [`REQUEST_TIMEOUT`]); returns the `turn/completed`.
    pub async fn run_turn(&mut self, thread: &str, text: &str) -> Result<Note> {
        self.server
            .request(
                "turn/start",
                turn_start_params(thread, text),
                REQUEST_TIMEOUT,
            )
            .await?;
        self.server
            .wait_turn_completed(thread, REQUEST_TIMEOUT)
            .await
    }

    /// A new thread whose next turn the mock answers with a reply of `k` deltas
    /// ([`reply_of_deltas`]); notifications already queued are dropped. Returns the thread id.
    pub async fn thread_with_reply(&mut self, target: &Target, k: usize) -> Result<String> {
        let thread = self.start_thread(target).await?;
        self.mock.push(reply_of_deltas(k).responses());
        self.server.drain_notes();
        Ok(thread)
    }

    /// Send `turn/start` ("hello") on `thread` without waiting; returns the pending answer and
    /// the instant just before it was written.
    pub async fn send_turn(&self, thread: &str) -> Result<(Pending, Instant)> {
        self.server
            .send("turn/start", turn_start_params(thread, "hello"))
            .await
    }

    /// Wait until `turn/completed` on `thread` (by `deadline`), counting its
    /// `item/agentMessage/delta` notifications and the bytes of their text; returns the
    /// `turn/completed` and the counts.
    pub async fn wait_turn_counting_deltas(
        &mut self,
        thread: &str,
        deadline: Instant,
    ) -> Result<(Note, Deltas)> {
        let mut deltas = Deltas::default();
        let done = self
            .server
            .wait_note("turn/completed", deadline, |note| {
                if note.thread_id() != Some(thread) {
                    return false;
                }
                if note.method == "item/agentMessage/delta" {
                    deltas.notifications += 1;
                    deltas.text_bytes += note
                        .params
                        .get("delta")
                        .and_then(Value::as_str)
                        .map_or(0, str::len);
                }
                note.method == "turn/completed"
            })
            .await?;
        Ok((done, deltas))
    }

    /// Stop the server (stdin EOF, then kill after [`EXIT_TIMEOUT`]).
    pub async fn stop(self) -> Result<()> {
        self.server.shutdown(EXIT_TIMEOUT).await
    }
}

pub fn thread_start_params(target: &Target) -> Value {
    json!({
        "cwd": target.workspace(),
        "approvalPolicy": "never",
        "sandbox": "read-only",
    })
}

/// `result.thread.id` of a `thread/start` / `thread/resume` answer.
pub fn thread_id(result: &Value) -> Result<String> {
    result
        .pointer("/thread/id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .context("the answer has no thread.id")
}

/// `turn/start` params: one text input.
pub fn turn_start_params(thread_id: &str, text: &str) -> Value {
    json!({
        "threadId": thread_id,
        "input": [{"type": "text", "text": text, "text_elements": []}],
    })
}

/// A reply of `k` text deltas of a few characters each.
pub fn reply_of_deltas(k: usize) -> Reply {
    Reply::new().text_deltas((0..k).map(|i| format!("tok{} ", i % 10)))
}

/// The bytes of text in a [`reply_of_deltas`] of `k` deltas.
pub fn reply_text_bytes(k: usize) -> usize {
    k * "tok0 ".len()
}

/// What a client read of a turn's `item/agentMessage/delta` notifications.
#[derive(Debug, Default, Clone, Copy)]
pub struct Deltas {
    /// Notifications read: one per model delta, fewer when the server merged consecutive
    /// deltas because the client's queue was full.
    pub notifications: usize,
    /// Bytes of their text.
    pub text_bytes: usize,
}

/// Where the scratch root is: `dir`, or a new temporary directory kept alive by the guard.
pub fn scratch_root(dir: Option<&Path>) -> Result<(PathBuf, Option<tempfile::TempDir>)> {
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            Ok((dir.to_path_buf(), None))
        }
        None => {
            let temp = tempfile::Builder::new().prefix("weft-bench-").tempdir()?;
            Ok((temp.path().to_path_buf(), Some(temp)))
        }
    }
}
