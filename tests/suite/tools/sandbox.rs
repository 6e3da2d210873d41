//! The sandbox end to end (docs/protocol.md §9.5): `workspace-write` writes only the workspace (and
//! temp dirs) and reaches no network, `read-only` writes nothing, `danger-full-access` does
//! both; the model sees a denial as a failed command with a note. Where the kernel has no
//! Landlock, the tests check that sandboxed commands are refused instead.
//!
//! "Outside the workspace" is a directory under Cargo's target tmp dir, which is neither the
//! workspace nor `/tmp` nor `$TMPDIR`; the network target is a TCP listener on 127.0.0.1.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{
    Tools, cmd, exec_call, item_status, output_of, outside_file, patch_call, sandbox_unavailable,
};

/// A listener on 127.0.0.1 that tells whether anyone connected.
struct Listener(TcpListener);

impl Listener {
    fn bind() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Listener(listener)
    }

    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }

    /// Whether a connection is waiting (checked after the connecting command has exited, so it
    /// would already be queued).
    fn was_connected(&self) -> bool {
        match self.0.accept() {
            Ok(_) => true,
            Err(err) if err.kind() == ErrorKind::WouldBlock => false,
            Err(err) => panic!("accept: {err}"),
        }
    }
}

fn write_script(target: &Path) -> String {
    format!("echo written > {}", target.display())
}

fn connect_script(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

/// What [`write_and_connect`] tried, and what the model got for each command.
struct Attempt {
    /// The directory outside the workspace (removed when dropped).
    _outside: TempDir,
    /// The file the first command writes, in `_outside`.
    target: PathBuf,
    /// The listener the second command connects to.
    listener: Listener,
    /// The model's view of the write.
    write: String,
    /// The model's view of the connection.
    connect: String,
}

/// Runs a turn with two commands under `sandbox` — write `file` in a fresh directory outside
/// the workspace, connect to a fresh listener — and returns what was tried and what the model
/// got for each.
async fn write_and_connect(t: &mut Tools, sandbox: &str, file: &str) -> Attempt {
    let (outside, target) = outside_file(file);
    let listener = Listener::bind();
    t.push_command("call_write", &write_script(&target));
    t.push_command("call_connect", &connect_script(listener.port()));
    t.push(Reply::new().text("Tried both."));
    let thread = t.thread("never", sandbox).await;
    let run = t.h.run_turn(&thread, "write and connect").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = t.h.wait_for_requests(3).await;
    Attempt {
        _outside: outside,
        target,
        listener,
        write: output_of(&requests[2], "call_write"),
        connect: output_of(&requests[2], "call_connect"),
    }
}

#[tokio::test]
async fn workspace_write_cannot_write_outside_or_connect() {
    let mut t = Tools::start(Transport::Stdio).await;
    let tried = write_and_connect(&mut t, "workspace-write", "escaped.txt").await;
    let (write, connect) = (&tried.write, &tried.connect);
    assert!(
        !tried.target.exists(),
        "the sandbox let a write outside the workspace through"
    );
    assert!(
        !tried.listener.was_connected(),
        "the sandbox let a TCP connection through"
    );
    if sandbox_unavailable(write) {
        assert!(
            write.starts_with("exec_command failed: sandbox unavailable"),
            "{write}"
        );
        t.finish().await;
        return;
    }
    // The model's view of a denial: a failed command, the OS error, and a note.
    assert!(write.contains("\nProcess exited with code 1\n"), "{write}");
    assert!(write.contains("Permission denied"), "{write}");
    assert!(
        write
            .contains("Warning: the command may have been blocked by the sandbox (writes only in "),
        "{write}"
    );
    assert!(write.contains("The approval policy is `never`"), "{write}");
    assert!(!connect.contains("connected\n"), "{connect}");
    assert!(!connect.contains("Process exited with code 0"), "{connect}");

    // Inside the workspace the same command works.
    let inside = t.path("inside.txt");
    t.push_command("call_inside", &write_script(&inside));
    t.push(Reply::new().text("Wrote it."));
    let thread = t.thread("never", "workspace-write").await;
    let run = t.h.run_turn(&thread, "write inside").await;
    assert_eq!(item_status(&run.messages, "call_inside"), "completed");
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "written\n");
    t.finish().await;
}

#[tokio::test]
async fn danger_full_access_can_write_and_connect() {
    let mut t = Tools::start(Transport::Stdio).await;
    let tried = write_and_connect(&mut t, "danger-full-access", "allowed.txt").await;
    let (write, connect) = (&tried.write, &tried.connect);
    assert!(write.contains("\nProcess exited with code 0\n"), "{write}");
    assert_eq!(std::fs::read_to_string(&tried.target).unwrap(), "written\n");
    assert!(connect.ends_with("Output:\nconnected\n"), "{connect}");
    assert!(tried.listener.was_connected());
    t.finish().await;
}

#[tokio::test]
async fn read_only_cannot_write_anywhere() {
    let mut t = Tools::start(Transport::Stdio).await;
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let in_tmp = tmp.path().join("x.txt");
    let inside = t.path("x.txt");
    t.push(exec_call(
        "call_write",
        cmd(&format!(
            "echo a > {}; echo b > {}; touch {}",
            inside.display(),
            in_tmp.display(),
            t.path("y.txt").display()
        )),
    ));
    t.push(patch_call(
        "call_patch",
        "*** Begin Patch\n*** Add File: patched.txt\n+x\n*** End Patch\n",
    ));
    t.push(Reply::new().text("Nothing could be written."));
    let run = t.completed_turn("never", "read-only", "try to write").await;
    for path in [&inside, &in_tmp, &t.path("y.txt"), &t.path("patched.txt")] {
        assert!(!path.exists(), "{} was written", path.display());
    }
    let requests = t.h.wait_for_requests(3).await;
    let write = output_of(&requests[2], "call_write");
    if !sandbox_unavailable(&write) {
        assert!(write.contains("Permission denied"), "{write}");
        assert!(
            write.contains("Warning: the command may have been blocked by the sandbox (read-only filesystem; network denied)"),
            "{write}"
        );
        assert_eq!(item_status(&run.messages, "call_write"), "failed");
    }
    // A patch under read-only + never is refused without asking.
    let patch = output_of(&requests[2], "call_patch");
    assert!(
        patch.starts_with("patch rejected: writing outside of the sandbox's writable roots: "),
        "{patch}"
    );
    assert!(
        !run.messages
            .iter()
            .any(|m| m.get("id").is_some() && m["method"].is_string())
    );
    t.finish().await;
}
