//! Spawning `weft app-server` (and other `weft` commands) as a child process.
//!
//! The daemon runs with `WEFT_HOME` set to a [`TestHome`], `RUST_LOG=info` (so that its
//! `listening on ws://…` line shows) and no inherited `LOG_FORMAT`. Its stderr is captured into
//! a buffer that is printed if the test panics. The process is killed when the [`Daemon`] is
//! dropped: a test never leaves one running.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::client::Client;
use crate::home::TestHome;
use crate::{DEFAULT_TIMEOUT, clip, output_within, weft_bin};

/// Which transport a test drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `--listen stdio://`: one connection over stdin/stdout.
    Stdio,
    /// `--listen ws://127.0.0.1:0`: WebSocket on a free loopback port.
    Ws,
}

impl Transport {
    /// The `--listen` value for this transport.
    pub fn listen_url(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio://",
            Transport::Ws => "ws://127.0.0.1:0",
        }
    }
}

/// Options for spawning `weft app-server`.
pub struct DaemonBuilder {
    weft_home: PathBuf,
    listen: Option<String>,
    args: Vec<String>,
    env: Vec<(String, Option<String>)>,
    current_dir: Option<PathBuf>,
    binary: Option<PathBuf>,
}

impl DaemonBuilder {
    /// Run the daemon in this working directory (the cwd of threads started without one, as
    /// the Codex TUI starts them); default: the test's own.
    pub fn current_dir(mut self, dir: &Path) -> Self {
        self.current_dir = Some(dir.to_path_buf());
        self
    }

    /// `--listen URL` (default `stdio://`).
    pub fn listen(mut self, url: &str) -> Self {
        self.listen = Some(url.to_owned());
        self
    }

    /// Do not pass `--listen` at all (the daemon's default applies).
    pub fn no_listen(mut self) -> Self {
        self.listen = None;
        self
    }

    /// Use this `WEFT_HOME` instead of the [`TestHome`]'s folder (e.g. one that does not exist).
    pub fn weft_home(mut self, path: &Path) -> Self {
        self.weft_home = path.to_path_buf();
        self
    }

    /// Append one argument after `app-server`.
    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_owned());
        self
    }

    /// Append arguments after `app-server`.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// `-c KEY=VALUE` for each of these config overrides.
    pub fn overrides(mut self, overrides: &[&str]) -> Self {
        for kv in overrides {
            self.args.extend(["-c".to_owned(), (*kv).to_owned()]);
        }
        self
    }

    /// Set an environment variable for the daemon.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_owned(), Some(value.to_owned())));
        self
    }

    /// Remove an environment variable for the daemon.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.env.push((key.to_owned(), None));
        self
    }

    /// Run this `weft` binary instead of the one built from the workspace (a copy of it
    /// stripped for shipping, scripts/split-debuginfo.sh).
    pub fn binary(mut self, path: &Path) -> Self {
        self.binary = Some(path.to_path_buf());
        self
    }

    /// Spawn the daemon without waiting for anything.
    pub fn spawn(self) -> Daemon {
        let binary = self.binary.as_deref().unwrap_or(weft_bin());
        let mut cmd = weft_command_of(binary, &self.weft_home);
        cmd.arg("app-server");
        if let Some(listen) = &self.listen {
            cmd.args(["--listen", listen]);
        }
        cmd.args(&self.args);
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        for (key, value) in &self.env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|err| panic!("spawn {}: {err}", binary.display()));
        let pid = child.id().unwrap_or_default();
        let stderr = Arc::new(StderrLog::default());
        let stderr_task = child.stderr.take().map(|pipe| {
            let log = Arc::clone(&stderr);
            tokio::spawn(async move { log.collect(pipe).await })
        });
        let stdio = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => Some((stdin, stdout)),
            _ => None,
        };
        Daemon {
            child,
            pid,
            stderr,
            stderr_task,
            stdio,
            ws_addr: None,
            unix_path: None,
            status: None,
        }
    }

    /// Spawn and, for a WebSocket listener or a `unix://` socket, wait until it has bound (its
    /// `listening on ws://IP:PORT` or `listening on unix://PATH` line on stderr).
    pub async fn start(self) -> Daemon {
        let is_ws = self
            .listen
            .as_deref()
            .is_some_and(|l| l.starts_with("ws://"));
        let is_unix = self
            .listen
            .as_deref()
            .is_some_and(|l| l.starts_with("unix://"));
        let mut daemon = self.spawn();
        if is_ws {
            daemon.ws_addr = Some(daemon.wait_for_listen_addr().await);
        }
        if is_unix {
            // Only a complete line counts: a chunk may end in the middle of the path.
            let needle = "listening on unix://";
            let found = daemon
                .stderr
                .wait_for(|text| text.split(needle).nth(1).is_some_and(|r| r.contains('\n')))
                .await;
            let Ok(line) = found else {
                panic!(
                    "the daemon did not log `{needle}PATH`\n--- stderr ---\n{}",
                    clip(&daemon.stderr(), 8000)
                );
            };
            let path = line
                .split("listening on unix://")
                .nth(1)
                .and_then(|rest| rest.lines().next())
                .map(|path| PathBuf::from(path.trim_end()))
                .expect("the unix:// listen line names the path");
            daemon.unix_path = Some(path);
        }
        daemon
    }
}

/// A running `weft app-server` process.
pub struct Daemon {
    child: Child,
    pid: u32,
    stderr: Arc<StderrLog>,
    stderr_task: Option<JoinHandle<()>>,
    stdio: Option<(ChildStdin, ChildStdout)>,
    ws_addr: Option<SocketAddr>,
    /// The `unix://` control socket's path, once bound.
    unix_path: Option<PathBuf>,
    status: Option<ExitStatus>,
}

impl Daemon {
    /// Options for a daemon using `home` as `WEFT_HOME` (`--listen stdio://` unless changed).
    pub fn builder(home: &TestHome) -> DaemonBuilder {
        DaemonBuilder {
            weft_home: home.path().to_path_buf(),
            listen: Some("stdio://".into()),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            binary: None,
        }
    }

    /// `weft app-server --listen stdio:// ARGS…`; take the connection with [`Daemon::client`].
    pub async fn stdio(home: &TestHome, args: &[&str]) -> Daemon {
        Daemon::builder(home).args(args).start().await
    }

    /// `weft app-server --listen ws://127.0.0.1:0 ARGS…`, returned once it listens.
    pub async fn ws(home: &TestHome, args: &[&str]) -> Daemon {
        Daemon::builder(home)
            .listen(Transport::Ws.listen_url())
            .args(args)
            .start()
            .await
    }

    /// Start a daemon on the given transport.
    pub async fn start(transport: Transport, home: &TestHome, args: &[&str]) -> Daemon {
        match transport {
            Transport::Stdio => Daemon::stdio(home, args).await,
            Transport::Ws => Daemon::ws(home, args).await,
        }
    }

    /// A connection (not yet initialized): over stdio, the one connection (panics if taken
    /// twice); over WebSocket, a new connection each call.
    pub async fn client(&mut self) -> Client {
        if self.ws_addr.is_some() {
            return Client::connect_ws(&self.ws_url()).await;
        }
        if let Some(path) = &self.unix_path {
            return Client::connect_unix(path).await;
        }
        let Some((stdin, stdout)) = self.stdio.take() else {
            panic!("the stdio connection was already taken");
        };
        Client::stdio(stdin, stdout)
    }

    /// A new connection that has done the `initialize` handshake.
    pub async fn initialized_client(&mut self) -> Client {
        let mut client = self.client().await;
        client.initialize().await;
        client
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The bound WebSocket address; panics for a stdio daemon.
    pub fn ws_addr(&self) -> SocketAddr {
        self.ws_addr.expect("this daemon has no WebSocket listener")
    }

    /// The `unix://` control socket's path; panics for a daemon without one.
    pub fn unix_path(&self) -> &Path {
        self.unix_path
            .as_deref()
            .expect("this daemon has no unix:// socket")
    }

    /// `ws://IP:PORT` of the listener.
    pub fn ws_url(&self) -> String {
        format!("ws://{}", self.ws_addr())
    }

    /// Everything the daemon wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.text()
    }

    /// Wait until stderr contains `needle`; returns the whole stderr text so far.
    pub async fn wait_for_stderr(&self, needle: &str) -> String {
        match self.stderr.wait_for(|text| text.contains(needle)).await {
            Ok(text) => text,
            Err(problem) => panic!(
                "waiting for `{needle}` on the daemon's stderr: {problem}\n--- stderr ---\n{}",
                clip(&self.stderr(), 8000)
            ),
        }
    }

    async fn wait_for_listen_addr(&mut self) -> SocketAddr {
        // Only complete lines count: a chunk may end in the middle of the port number.
        let complete = |text: &str| {
            text.rfind('\n')
                .and_then(|end| parse_listen_addr(&text[..end]))
        };
        let found = self.stderr.wait_for(|text| complete(text).is_some()).await;
        match found.map(|text| complete(&text)) {
            Ok(Some(addr)) => addr,
            _ => {
                let status = self.wait_exit_within(Duration::from_millis(500)).await;
                panic!(
                    "the daemon did not log `listening on ws://IP:PORT` (exit status: {status:?})\n\
                     --- stderr ---\n{}",
                    clip(&self.stderr(), 8000)
                )
            }
        }
    }

    /// Send SIGTERM (through the `kill` command).
    pub fn sigterm(&self) {
        self.signal("TERM");
    }

    /// Send a signal by name (`TERM`, `INT`, …) through the `kill` command.
    pub fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.pid.to_string())
            .status()
            .expect("run `kill`");
        assert!(status.success(), "kill -{name} {} failed", self.pid);
    }

    /// Wait for the process to exit (at most [`DEFAULT_TIMEOUT`]); panics if it does not.
    /// Also waits until stderr has been read to the end.
    pub async fn wait_exit(&mut self) -> ExitStatus {
        match self.wait_exit_within(DEFAULT_TIMEOUT).await {
            Some(status) => status,
            None => panic!(
                "the daemon did not exit within {DEFAULT_TIMEOUT:?}\n--- stderr ---\n{}",
                clip(&self.stderr(), 8000)
            ),
        }
    }

    /// Wait for an exit, at most `within`; `None` if it is still running.
    pub async fn wait_exit_within(&mut self, within: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.status {
            return Some(status);
        }
        let status = tokio::time::timeout(within, self.child.wait())
            .await
            .ok()?
            .expect("wait for the daemon");
        self.status = Some(status);
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(DEFAULT_TIMEOUT, task).await;
        }
        Some(status)
    }

    /// Take the raw stdio pipes instead of a [`Client`] (for tests of the raw byte stream).
    pub fn take_stdio(&mut self) -> (ChildStdin, ChildStdout) {
        self.stdio
            .take()
            .expect("the stdio pipes were already taken")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.child.start_kill();
        }
        if std::thread::panicking() {
            eprintln!(
                "--- weft daemon (pid {}) stderr ---\n{}\n--- end of daemon stderr ---",
                self.pid,
                clip(&self.stderr(), 16_000)
            );
        }
    }
}

/// The daemon's stderr, collected by a background task.
#[derive(Default)]
struct StderrLog {
    text: Mutex<String>,
    closed: Mutex<bool>,
    changed: Notify,
}

impl StderrLog {
    async fn collect(&self, mut pipe: tokio::process::ChildStderr) {
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            match pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let text = String::from_utf8_lossy(&chunk[..n]);
                    self.text
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push_str(&text);
                    self.changed.notify_waiters();
                }
            }
        }
        *self.closed.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.changed.notify_waiters();
    }

    fn text(&self) -> String {
        self.text.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn is_closed(&self) -> bool {
        *self.closed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait until `pred(stderr so far)` holds; `Err` on timeout or when stderr closes first.
    async fn wait_for(&self, pred: impl Fn(&str) -> bool) -> Result<String, String> {
        let deadline = tokio::time::Instant::now() + DEFAULT_TIMEOUT;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Register before checking so that no change is missed.
            changed.as_mut().enable();
            let text = self.text();
            if pred(&text) {
                return Ok(text);
            }
            if self.is_closed() {
                return Err("stderr closed (the daemon exited)".into());
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Err(format!("timed out after {DEFAULT_TIMEOUT:?}"));
            }
        }
    }
}

/// Find `listening on ws://IP:PORT` in log text.
fn parse_listen_addr(text: &str) -> Option<SocketAddr> {
    const MARK: &str = "listening on ws://";
    text.match_indices(MARK).find_map(|(at, _)| {
        let rest = &text[at + MARK.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_hexdigit() || matches!(c, '.' | ':' | '[' | ']')))
            .unwrap_or(rest.len());
        rest[..end].trim_end_matches(['.', ':']).parse().ok()
    })
}

/// A `weft` command with a clean environment: `WEFT_HOME` set, `RUST_LOG=info`,
/// no inherited `LOG_FORMAT`; killed if dropped while running.
fn weft_command(weft_home: &Path) -> Command {
    weft_command_of(weft_bin(), weft_home)
}

fn weft_command_of(binary: &Path, weft_home: &Path) -> Command {
    let mut cmd = Command::new(binary);
    cmd.env("WEFT_HOME", weft_home)
        .env("RUST_LOG", "info")
        .env_remove("LOG_FORMAT")
        .env_remove("CODEX_HOME")
        .kill_on_drop(true);
    cmd
}

/// What a finished `weft` command printed.
#[derive(Debug)]
pub struct CommandOutput {
    /// Exit status.
    pub status: ExitStatus,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl CommandOutput {
    /// The exit code (`None` if killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// Run `weft ARGS…` to completion with stdin closed (so `app-server --listen stdio://` sees
/// EOF at once) and `WEFT_HOME` = `home`. Panics if it runs longer than [`DEFAULT_TIMEOUT`].
pub async fn run_weft(home: &TestHome, args: &[&str]) -> CommandOutput {
    run_weft_with_env(home, args, &[]).await
}

/// [`run_weft`] with extra environment variables.
pub async fn run_weft_with_env(
    home: &TestHome,
    args: &[&str],
    env: &[(&str, &str)],
) -> CommandOutput {
    let mut cmd = weft_command(home.path());
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = output_within(cmd, weft_bin(), "weft", args, DEFAULT_TIMEOUT).await;
    CommandOutput {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_listen_addr;

    #[test]
    fn finds_the_listen_address() {
        let plain = "2026 INFO weft: listening on ws://127.0.0.1:4500\n";
        assert_eq!(parse_listen_addr(plain).map(|a| a.port()), Some(4500));
        let json = r#"{"level":"INFO","fields":{"message":"listening on ws://127.0.0.1:39211"}}"#;
        assert_eq!(parse_listen_addr(json).map(|a| a.port()), Some(39211));
        assert_eq!(parse_listen_addr("listening on stdio"), None);
    }
}
