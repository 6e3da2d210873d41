//! `weft app-server daemon start|stop|version` (docs/protocol.md §2.6): a background
//! `weft app-server --listen unix://` managed through a pid file, as the reference's `pid`
//! backend. Each command prints one JSON line with the reference's keys (`status`, `backend`,
//! `pid`, `socketPath`, `cliVersion`, `appServerVersion`); the reference's managed installation
//! (`managedCodexPath`, self-update, remote control, `bootstrap`) has no counterpart in Weft.
//!
//! The pid file is `$WEFT_HOME/app-server-daemon/pid`, the daemon's stderr goes to
//! `$WEFT_HOME/app-server-daemon/app-server.log`. `stop` signals a pid only when its command
//! line is a `weft app-server --listen unix://` one, so a stale file naming a reused pid is
//! never acted on.

use std::io::ErrorKind;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cli::DaemonCommand;
use crate::transport::unix::default_socket_path;

/// How long `start` waits for the socket, and `stop` for the daemon to exit.
const WAIT: Duration = Duration::from_secs(30);

/// Run a `daemon` subcommand; prints its JSON line, or an error on stderr (exit 1).
pub fn main(command: DaemonCommand, overrides: &[String]) -> ExitCode {
    let home = weft_core::config::Config::default_home();
    let paths = Paths::new(&home);
    let result = match command {
        DaemonCommand::Start => start(&paths, overrides),
        DaemonCommand::Stop => stop(&paths),
        DaemonCommand::Version => version(&paths),
    };
    match result {
        Ok(line) => {
            #[allow(clippy::print_stdout)]
            {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("weft: error: {err}");
            ExitCode::FAILURE
        }
    }
}

struct Paths {
    home: PathBuf,
    socket: PathBuf,
    dir: PathBuf,
}

impl Paths {
    fn new(home: &Path) -> Paths {
        let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
        Paths {
            socket: default_socket_path(&home),
            dir: home.join("app-server-daemon"),
            home,
        }
    }

    fn pid_file(&self) -> PathBuf {
        self.dir.join("pid")
    }

    /// The pid in the pid file, if it names a running `weft app-server --listen unix://`.
    fn running_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.pid_file()).ok()?;
        let pid: u32 = text.trim().parse().ok()?;
        is_our_daemon(pid).then_some(pid)
    }

    fn answer(&self, status: &str, pid: Option<u32>, server_version: bool) -> Value {
        let mut line = json!({"status": status, "backend": "pid"});
        if let Some(pid) = pid {
            line["pid"] = json!(pid);
        }
        line["socketPath"] = json!(self.socket.display().to_string());
        line["cliVersion"] = json!(env!("CARGO_PKG_VERSION"));
        if server_version {
            line["appServerVersion"] = json!(env!("CARGO_PKG_VERSION"));
        }
        line
    }
}

/// Whether `pid` is alive and its command line is `… app-server --listen unix://`.
fn is_our_daemon(pid: u32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let has = |arg: &[u8]| args.contains(&arg);
    has(b"app-server") && has(b"--listen") && has(b"unix://")
}

fn listening(socket: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(socket).is_ok()
}

fn start(paths: &Paths, overrides: &[String]) -> Result<Value, String> {
    if listening(&paths.socket) {
        return Ok(paths.answer("alreadyRunning", paths.running_pid(), false));
    }
    std::fs::create_dir_all(&paths.dir)
        .map_err(|err| format!("cannot create {}: {err}", paths.dir.display()))?;
    let log_path = paths.dir.join("app-server.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|err| format!("cannot open {}: {err}", log_path.display()))?;
    let exe = std::env::current_exe().map_err(|err| format!("cannot find weft: {err}"))?;
    let mut command = Command::new(exe);
    command
        .args(["app-server", "--listen", "unix://"])
        .args(overrides.iter().flat_map(|o| ["-c", o.as_str()]))
        .env("WEFT_HOME", &paths.home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        // Its own process group: a terminal's Ctrl-C does not reach it.
        .process_group(0);
    let mut child = command
        .spawn()
        .map_err(|err| format!("cannot start the daemon: {err}"))?;
    let pid = child.id();
    let pid_file = paths.pid_file();
    std::fs::write(&pid_file, format!("{pid}\n"))
        .map_err(|err| format!("cannot write {}: {err}", pid_file.display()))?;
    let deadline = Instant::now() + WAIT;
    while !listening(&paths.socket) {
        if let Ok(Some(status)) = child.try_wait() {
            let _ = std::fs::remove_file(&pid_file);
            return Err(format!(
                "the daemon exited ({status}) before listening; see {}",
                log_path.display()
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the daemon did not listen on {} within {WAIT:?}; see {}",
                paths.socket.display(),
                log_path.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(paths.answer("started", Some(pid), true))
}

fn stop(paths: &Paths) -> Result<Value, String> {
    let Some(pid) = paths.running_pid() else {
        let _ = std::fs::remove_file(paths.pid_file());
        let mut line = paths.answer("notRunning", None, false);
        if let Some(map) = line.as_object_mut() {
            map.remove("backend");
        }
        return Ok(line);
    };
    let target = rustix::process::Pid::from_raw(pid as i32)
        .ok_or_else(|| format!("invalid pid {pid} in the pid file"))?;
    match rustix::process::kill_process(target, rustix::process::Signal::TERM) {
        Ok(()) => {}
        Err(err) if err.kind() == ErrorKind::NotFound => {}
        Err(err) => return Err(format!("cannot signal the daemon (pid {pid}): {err}")),
    }
    let deadline = Instant::now() + WAIT;
    while is_our_daemon(pid) {
        if Instant::now() >= deadline {
            return Err(format!(
                "the daemon (pid {pid}) did not exit within {WAIT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_file(paths.pid_file());
    Ok(paths.answer("stopped", None, false))
}

fn version(paths: &Paths) -> Result<Value, String> {
    std::os::unix::net::UnixStream::connect(&paths.socket)
        .map_err(|err| format!("failed to connect to {}: {err}", paths.socket.display()))?;
    Ok(paths.answer("running", paths.running_pid(), false))
}
