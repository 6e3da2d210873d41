//! The filesystem: `apply_patch` cannot be steered out of the writable roots by symlinks (not
//! even one swapped in while the patch waits for approval), a repository's `.git` stays
//! read-only to it and to commands, and a `localImage` that is a device is not read.

use std::os::unix::fs::symlink;

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::Transport;

use crate::tools::{Tools, output_of, outside_dir, patch_call, sandbox_unavailable};
use crate::turns::{Harness, read_through_turn_completed};

const FILE_APPROVAL: &str = "item/fileChange/requestApproval";

fn wrap(body: &str) -> String {
    format!("*** Begin Patch\n{body}\n*** End Patch\n")
}

/// A static symlink to a folder outside the roots: the patch is refused and nothing appears
/// there.
#[tokio::test]
async fn a_patch_through_a_symlink_to_the_outside_writes_nothing_there() {
    let mut t = Tools::start(Transport::Stdio).await;
    let outside = outside_dir();
    symlink(outside.path(), t.path("link")).unwrap();
    let patch = wrap("*** Add File: link/x.txt\n+escaped");
    t.patch_turn("workspace-write", "call_link", &patch, "Refused.")
        .await;
    assert!(!outside.path().join("x.txt").exists(), "the patch escaped");
    let output = t.h.output_in(2, "call_link").await;
    assert_eq!(
        output,
        format!(
            "patch rejected: writing outside of the sandbox's writable roots: {}",
            t.path("link/x.txt").display()
        )
    );
    t.finish().await;
}

/// The race of issue 11, made deterministic: `d` links inside the workspace when the patch is
/// checked, and outside while the patch waits for approval (it also writes a file outside the
/// roots, which is what it asks for). The approved patch must not follow the swapped link.
#[tokio::test]
async fn a_symlink_swapped_during_the_approval_does_not_redirect_the_patch() {
    let mut t = Tools::start(Transport::Stdio).await;
    let outside = outside_dir();
    std::fs::create_dir(t.path("inside")).unwrap();
    symlink(t.path("inside"), t.path("d")).unwrap();
    let approved = outside.path().join("approved.txt");
    let patch = wrap(&format!(
        "*** Add File: d/raced.txt\n+raced\n*** Add File: {}\n+approved",
        approved.display()
    ));
    t.push(patch_call("call_race", &patch));
    t.push(Reply::new().text("Done."));
    let thread = t.thread("on-request", "workspace-write").await;
    let request = t.turn_asking(&thread, "patch it", FILE_APPROVAL).await;
    std::fs::remove_file(t.path("d")).unwrap();
    symlink(outside.path(), t.path("d")).unwrap();
    let messages = t.decide(&request, "accept", "completed").await;
    assert!(
        !outside.path().join("raced.txt").exists(),
        "the patch followed the swapped symlink out of the workspace"
    );
    assert!(!t.path("inside/raced.txt").exists());
    let completed = messages
        .iter()
        .find(|m| m["method"] == "item/completed" && m["params"]["item"]["id"] == "call_race")
        .expect("the fileChange item completes");
    assert_eq!(completed["params"]["item"]["status"], "failed");
    let output = t.h.output_in(2, "call_race").await;
    assert!(
        output.starts_with("patch rejected: writing outside of the sandbox's writable roots: "),
        "{output}"
    );
    // Checked before anything was written: the approved file was not written either.
    assert!(!approved.exists());
    t.finish().await;
}

/// A repository's `.git` in the workspace: `.git/hooks/` and `.git/config` (`[core]`).
fn git_repository(t: &Tools) {
    std::fs::create_dir_all(t.path(".git/hooks")).unwrap();
    t.write(".git/config", "[core]\n");
}

/// A repository's `.git` inside the workspace is protected from `apply_patch`.
#[tokio::test]
async fn apply_patch_cannot_write_into_git() {
    let mut t = Tools::start(Transport::Stdio).await;
    git_repository(&t);
    t.push(patch_call(
        "call_config",
        &wrap("*** Update File: .git/config\n@@\n-[core]\n+[core]\n+\thooksPath = /tmp"),
    ));
    t.push(patch_call(
        "call_hook",
        &wrap("*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n+touch /tmp/pwned"),
    ));
    t.push(Reply::new().text("Refused."));
    t.completed_turn("never", "workspace-write", "change the repository")
        .await;
    assert_eq!(t.read(".git/config"), "[core]\n");
    assert!(!t.path(".git/hooks/pre-commit").exists());
    let requests = t.h.wait_for_requests(3).await;
    for (call, index, path) in [
        ("call_config", 1, ".git/config"),
        ("call_hook", 2, ".git/hooks/pre-commit"),
    ] {
        let output = output_of(&requests[index], call);
        assert!(
            output.starts_with(&format!(
                "patch rejected: writing a protected path: {}",
                t.path(path).display()
            )),
            "{output}"
        );
    }
    t.finish().await;
}

/// `{"type":"localImage","path":"/dev/zero"}` is refused with a note, not read.
#[tokio::test]
async fn a_local_image_that_is_a_device_is_not_read() {
    let mut h = Harness::responses(Transport::Stdio).await;
    h.push(Reply::new().text("no picture"));
    let thread = h.start_thread().await;
    let input = json!([{"type": "localImage", "path": "/dev/zero"}]);
    h.client
        .send_request("turn/start", json!({"threadId": thread, "input": input}))
        .await;
    read_through_turn_completed(&mut h.client).await;
    let request = &h.wait_for_requests(1).await[0];
    let body = request.body.to_string();
    assert!(
        body.contains("[the image /dev/zero could not be read: not a regular file]"),
        "{body}"
    );
}

/// A command under workspace-write cannot write into the workspace's `.git` (nor move it
/// away) either, while the rest of the same command line still writes the workspace.
#[tokio::test]
async fn a_command_cannot_write_into_git() {
    let mut t = Tools::start(Transport::Stdio).await;
    git_repository(&t);
    let script = "echo '#!/bin/sh' > .git/hooks/x; echo y >> .git/config; mv .git g2; \
                  echo ok > ok.txt && echo wrote-ok";
    t.push_command("call_git", script);
    t.push(Reply::new().text("Tried."));
    t.completed_turn("never", "workspace-write", "write the hook")
        .await;
    let output = t.h.output_in(2, "call_git").await;
    assert!(!t.path(".git/hooks/x").exists(), "{output}");
    assert!(!t.path("g2").exists(), "{output}");
    assert_eq!(t.read(".git/config"), "[core]\n");
    if sandbox_unavailable(&output) {
        assert!(!t.path("ok.txt").exists());
        t.finish().await;
        return;
    }
    assert!(output.contains("Read-only file system"), "{output}");
    assert!(output.contains("wrote-ok\n"), "{output}");
    assert_eq!(t.read("ok.txt"), "ok\n");
    t.finish().await;
}
