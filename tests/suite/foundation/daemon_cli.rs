//! `weft app-server daemon start|stop|version` (docs/protocol.md §2.6): a background daemon on
//! the default `unix://` socket, managed through its pid file, each command one JSON line.

use serde_json::Value;
use weft_test_support::{Client, TestHome, run_weft};

use super::assert_still_serving;

/// Kills the daemon named by the pid file if a test fails before `stop`.
struct Cleanup(std::path::PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(&self.0) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", pid.trim()])
                .status();
        }
    }
}

async fn daemon(home: &TestHome, command: &str) -> (Option<i32>, Value, String) {
    let out = run_weft(home, &["app-server", "daemon", command]).await;
    let line = serde_json::from_str(out.stdout.trim()).unwrap_or(Value::Null);
    (out.code(), line, out.stderr)
}

#[tokio::test]
async fn start_version_stop() {
    let home = TestHome::new();
    let _cleanup = Cleanup(home.path().join("app-server-daemon").join("pid"));
    let socket = std::fs::canonicalize(home.path())
        .unwrap()
        .join("app-server-control")
        .join("app-server-control.sock");
    let version = env!("CARGO_PKG_VERSION");

    let (code, line, stderr) = daemon(&home, "version").await;
    assert_eq!(code, Some(1), "{line} {stderr}");
    assert!(stderr.contains("failed to connect to"), "{stderr}");

    let (code, line, stderr) = daemon(&home, "start").await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(line["status"], "started", "{line}");
    assert_eq!(line["backend"], "pid", "{line}");
    assert!(line["pid"].as_u64().is_some(), "{line}");
    assert_eq!(line["socketPath"], socket.display().to_string(), "{line}");
    assert_eq!(line["cliVersion"], version, "{line}");
    assert_eq!(line["appServerVersion"], version, "{line}");
    let pid = line["pid"].clone();

    let mut client = Client::connect_unix(&socket).await;
    client.initialize().await;
    assert_still_serving(&mut client, true).await;

    let (code, line, _) = daemon(&home, "start").await;
    assert_eq!(code, Some(0));
    assert_eq!(line["status"], "alreadyRunning", "{line}");
    assert_eq!(line["pid"], pid, "{line}");

    let (code, line, _) = daemon(&home, "version").await;
    assert_eq!(code, Some(0));
    assert_eq!(line["status"], "running", "{line}");
    assert_eq!(line["pid"], pid, "{line}");

    let (code, line, stderr) = daemon(&home, "stop").await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(line["status"], "stopped", "{line}");
    assert!(!socket.exists(), "the socket file outlived the daemon");

    let (code, line, _) = daemon(&home, "stop").await;
    assert_eq!(code, Some(0));
    assert_eq!(line["status"], "notRunning", "{line}");
    assert!(line.get("backend").is_none(), "{line}");
}

/// A pid file naming a process that is not Weft's daemon is never signalled.
#[tokio::test]
async fn stop_ignores_a_pid_file_naming_another_process() {
    let home = TestHome::new();
    let dir = home.path().join("app-server-daemon");
    std::fs::create_dir_all(&dir).unwrap();
    let mut sleeper = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    std::fs::write(dir.join("pid"), format!("{}\n", sleeper.id())).unwrap();
    let (code, line, _) = daemon(&home, "stop").await;
    assert_eq!(code, Some(0));
    assert_eq!(line["status"], "notRunning", "{line}");
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "the unrelated process was signalled"
    );
    sleeper.kill().unwrap();
    let _ = sleeper.wait();
}
