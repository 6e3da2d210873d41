use std::path::Path;
use std::time::Duration;

use weft_protocol::SandboxPolicy;

use super::*;
use crate::exec::process::pid_alive;

fn command(argv: &[&str], cwd: &Path) -> StandaloneCommand {
    StandaloneCommand {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        cwd: cwd.to_path_buf(),
        env: vec![("PATH".to_string(), "/usr/bin:/bin".to_string())],
        stdin: false,
        tty: None,
    }
}

async fn drain(mut rx: mpsc::Receiver<Vec<u8>>) -> String {
    let mut all = Vec::new();
    while let Some(chunk) = rx.recv().await {
        all.extend(chunk);
    }
    String::from_utf8_lossy(&all).into_owned()
}

/// Reads `rx` until what arrived contains `needle` (or 10 s pass).
async fn until(rx: &mut mpsc::Receiver<Vec<u8>>, seen: &mut String, needle: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !seen.contains(needle) {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(chunk)) => seen.push_str(&String::from_utf8_lossy(&chunk)),
            _ => panic!("never saw {needle:?}; saw {seen:?}"),
        }
    }
}

#[tokio::test]
async fn stdout_and_stderr_come_apart_with_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let (process, output) = StandaloneProcess::spawn(
        &command(&["sh", "-c", "echo out; echo err >&2; exit 3"], dir.path()),
        &SandboxSpec::unrestricted(dir.path()),
    )
    .unwrap();
    assert!(!process.is_tty());
    assert_eq!(process.try_write(b"x".to_vec()), Err(StdinError::NotPiped));
    let (stdout, stderr) = tokio::join!(drain(output.stdout), drain(output.stderr.unwrap()));
    assert_eq!((stdout.as_str(), stderr.as_str()), ("out\n", "err\n"));
    assert_eq!(process.wait().await, 3);
    assert_eq!(process.exit_code(), Some(3));
}

#[tokio::test]
async fn input_is_written_in_order_and_closing_it_ends_the_reader() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = command(&["cat"], dir.path());
    cmd.stdin = true;
    let (process, output) =
        StandaloneProcess::spawn(&cmd, &SandboxSpec::unrestricted(dir.path())).unwrap();
    process.try_write(b"one ".to_vec()).unwrap();
    process.try_write(b"two".to_vec()).unwrap();
    process.close_stdin();
    assert_eq!(process.try_write(b"x".to_vec()), Err(StdinError::Closed));
    assert_eq!(drain(output.stdout).await, "one two");
    assert_eq!(process.wait().await, 0);
}

#[tokio::test]
async fn a_pty_is_a_terminal_of_the_size_asked_and_resizes() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = command(
        &[
            "sh",
            "-c",
            "test -t 0 && test -t 1 && echo tty; stty size; read line; stty size; echo got $line",
        ],
        dir.path(),
    );
    cmd.tty = Some(TerminalSize {
        rows: 30,
        cols: 100,
    });
    let (process, mut output) =
        StandaloneProcess::spawn(&cmd, &SandboxSpec::unrestricted(dir.path())).unwrap();
    assert!(process.is_tty() && output.stderr.is_none());
    let mut seen = String::new();
    until(&mut output.stdout, &mut seen, "30 100").await;
    assert!(seen.contains("tty"), "{seen:?}");
    process
        .resize(TerminalSize {
            rows: 40,
            cols: 120,
        })
        .unwrap();
    assert_eq!(
        process.terminal_size(),
        Some(TerminalSize {
            rows: 40,
            cols: 120
        })
    );
    process.try_write(b"hello\r".to_vec()).unwrap();
    until(&mut output.stdout, &mut seen, "got hello").await;
    assert!(seen.contains("40 120"), "{seen:?}");
    assert_eq!(process.wait().await, 0);
}

#[tokio::test]
async fn kill_ends_the_group_and_dropping_kills_too() {
    let dir = tempfile::tempdir().unwrap();
    let (process, _output) = StandaloneProcess::spawn(
        &command(&["sleep", "30"], dir.path()),
        &SandboxSpec::unrestricted(dir.path()),
    )
    .unwrap();
    process.kill();
    assert_eq!(process.wait().await, 128 + 9);
    assert_eq!(
        process
            .resize(TerminalSize::default())
            .unwrap_err()
            .to_string(),
        "process is not attached to a PTY"
    );

    let (process, _output) = StandaloneProcess::spawn(
        &command(&["sleep", "30"], dir.path()),
        &SandboxSpec::unrestricted(dir.path()),
    )
    .unwrap();
    let pid = process.pid();
    drop(process);
    for _ in 0..100 {
        if !pid_alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{pid} outlived its process");
}

#[tokio::test]
async fn bad_commands_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SandboxSpec::unrestricted(dir.path());
    let empty = command(&[], dir.path());
    assert!(matches!(
        StandaloneProcess::spawn(&empty, &spec),
        Err(ExecError::Spawn(_))
    ));
    let missing = command(&["/no/such/program"], dir.path());
    assert!(matches!(
        StandaloneProcess::spawn(&missing, &spec),
        Err(ExecError::Spawn(_))
    ));
    let nowhere = command(&["true"], &dir.path().join("absent"));
    assert!(matches!(
        StandaloneProcess::spawn(&nowhere, &spec),
        Err(ExecError::Spawn(_))
    ));
}

#[tokio::test]
async fn read_only_refuses_a_write() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SandboxSpec::from_policy(
        &SandboxPolicy::ReadOnly {
            network_access: false,
        },
        dir.path(),
    );
    let target = dir.path().join("f");
    let cmd = command(
        &["sh", "-c", &format!("echo x > {}", target.display())],
        dir.path(),
    );
    match StandaloneProcess::spawn(&cmd, &spec) {
        Ok((process, output)) => {
            let stderr = drain(output.stderr.unwrap()).await;
            assert_ne!(process.wait().await, 0, "{stderr}");
            assert!(!target.exists());
        }
        Err(ExecError::SandboxUnavailable(_)) => {
            eprintln!("note: sandbox not enforceable here");
        }
        Err(other) => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn closing_a_terminals_input_sends_end_of_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = command(&["sh", "-c", "cat; echo done"], dir.path());
    cmd.tty = Some(TerminalSize::default());
    let (process, mut output) =
        StandaloneProcess::spawn(&cmd, &SandboxSpec::unrestricted(dir.path())).unwrap();
    process.try_write(b"hi\n".to_vec()).unwrap();
    process.close_stdin();
    let mut seen = String::new();
    until(&mut output.stdout, &mut seen, "done").await;
    assert_eq!(process.wait().await, 0);
    assert_eq!(process.try_write(b"x".to_vec()), Err(StdinError::Closed));
}

#[tokio::test]
async fn a_pty_command_runs_under_the_sandbox_too() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SandboxSpec::from_policy(
        &SandboxPolicy::ReadOnly {
            network_access: false,
        },
        dir.path(),
    );
    let target = dir.path().join("f");
    let mut cmd = command(
        &[
            "sh",
            "-c",
            &format!("echo x > {} || echo refused; echo done", target.display()),
        ],
        dir.path(),
    );
    cmd.tty = Some(TerminalSize::default());
    match StandaloneProcess::spawn(&cmd, &spec) {
        Ok((process, mut output)) => {
            let mut seen = String::new();
            until(&mut output.stdout, &mut seen, "done").await;
            assert!(seen.contains("refused"), "{seen:?}");
            assert_eq!(process.wait().await, 0);
            assert!(!target.exists());
        }
        Err(ExecError::SandboxUnavailable(_)) => {
            eprintln!("note: sandbox not enforceable here");
        }
        Err(other) => panic!("{other:?}"),
    }
}
