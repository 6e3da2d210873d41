//! The TUI's `/diff` against Weft: a remote TUI cannot run `git` itself, so it runs it through
//! `command/exec` (docs/protocol.md §7.32) in the daemon's workspace, and shows the working
//! tree's diff, tracked changes and untracked files both (before `command/exec` was served it
//! showed an error page instead).

use std::path::Path;

use crate::Session;

fn git(workspace: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=Weft Test",
            "-c",
            "user.email=test@weft.invalid",
        ])
        .args(args)
        .current_dir(workspace)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[tokio::test]
async fn slash_diff_shows_the_working_tree_diff() {
    let s = Session::start("on-request").await;
    let ws = s.client.workspace();
    std::fs::write(ws.join("tracked.txt"), "the first line\n").unwrap();
    git(ws, &["add", "-A"]);
    git(ws, &["commit", "-q", "-m", "initial"]);
    std::fs::write(
        ws.join("tracked.txt"),
        "the first line\nan added line from weft\n",
    )
    .unwrap();
    std::fs::write(ws.join("untracked.txt"), "a brand new file\n").unwrap();

    let tui = s.ready_tui().await;
    tui.submit("/diff").await;
    let screen = tui
        .wait_for_screen("the diff of both files", |screen| {
            screen.contains("an added line from weft") && screen.contains("a brand new file")
        })
        .await;
    assert!(screen.contains("tracked.txt"), "{screen}");
    assert!(screen.contains("untracked.txt"), "{screen}");
    for failure in ["Failed to compute diff", "not inside a git repository"] {
        assert!(!screen.contains(failure), "{screen}");
    }
}
