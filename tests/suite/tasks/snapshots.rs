//! Ghost snapshots (docs/architecture.md §5.5): taken before a turn's first mutating tool call
//! and at its end, under `refs/weft/snapshots/<thread>/<turn>/…`, recorded in the rollout;
//! none for a turn that only reads, none in a read-only sandbox; the user's index, refs and
//! HEAD untouched.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::revert::{Workspace, sh, user_state};
use crate::persistence::{path_of, read, rollout_lines};
use crate::tools::exec_call;

/// The `ghost_snapshot` records of the thread's rollout.
async fn snapshot_records(w: &mut Workspace, thread: &str) -> Vec<Value> {
    let thread = read(&mut w.p.client, thread, false).await;
    rollout_lines(&path_of(&thread))
        .into_iter()
        .filter(|line| line["type"] == "ghost_snapshot")
        .map(|line| line["payload"].clone())
        .collect()
}

/// A read-only command takes no snapshot; a patch takes one before it (the workspace as it
/// was) and one at the turn's end (as the agent left it), both under Weft's refs only.
async fn a_snapshot_before_a_patch_and_none_before_a_read_only_command(transport: Transport) {
    let mut w = Workspace::start(transport, true).await;
    let before = user_state(w.dir.path());
    let thread = w.thread().await;
    w.p.push(exec_call("call_cat", json!({"cmd": "cat a.txt"})));
    w.p.push(Reply::new().text("It says one."));
    let run = w.p.run_turn(&thread, "what does a.txt say").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    assert!(snapshot_records(&mut w, &thread).await.is_empty());
    assert_eq!(sh(w.dir.path(), "git for-each-ref refs/weft/"), "");

    let patch = w.patch_turn(&thread).await;
    let records = snapshot_records(&mut w, &thread).await;
    let phases: Vec<&str> = records
        .iter()
        .map(|r| r["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["before", "after"], "{records:?}");
    assert!(records.iter().all(|r| r["turn_id"] == patch.as_str()));
    let prefix = format!("refs/weft/snapshots/{thread}/{patch}");
    let refs = sh(
        w.dir.path(),
        "git for-each-ref --format='%(refname)' refs/weft/",
    );
    assert_eq!(refs, format!("{prefix}/after\n{prefix}/before\n"));
    // Before: the file as it was, the untracked file too; after: the agent's change.
    let show = |rev: &str| sh(w.dir.path(), &format!("git show {rev}"));
    assert_eq!(show(&format!("{prefix}/before:a.txt")), "one\n");
    assert_eq!(show(&format!("{prefix}/before:untracked.txt")), "mine\n");
    assert_eq!(show(&format!("{prefix}/after:a.txt")), "agent\n");
    assert_eq!(show(&format!("{prefix}/after:added.txt")), "by the agent\n");
    assert_eq!(
        records[0]["commit"],
        sh(w.dir.path(), &format!("git rev-parse {prefix}/before")).trim()
    );
    assert_eq!(user_state(w.dir.path()), before);
    assert_eq!(sh(w.dir.path(), "git stash list"), "");
}

/// A read-only sandbox changes nothing, so nothing is snapshotted.
#[tokio::test]
async fn no_snapshot_where_nothing_can_change() {
    let mut w = Workspace::start(Transport::Stdio, false).await;
    let cwd = w.dir.path().display().to_string();
    let thread = w
        .p
        .start_thread_with(json!({"cwd": cwd, "approvalPolicy": "never", "sandbox": "read-only"}))
        .await;
    w.p.push(exec_call("call_touch", json!({"cmd": "touch new.txt"})));
    w.p.push(Reply::new().text("Could not."));
    w.p.run_turn(&thread, "make a file").await;
    assert!(snapshot_records(&mut w, &thread).await.is_empty());
    assert!(!w.p.home.path().join("snapshots").exists());
}

on_both_transports!(a_snapshot_before_a_patch_and_none_before_a_read_only_command);

/// A workspace over `[snapshots] max_files` is not snapshotted: the turn goes on, and its
/// subscribers get a `warning` saying a revert cannot restore its files.
#[tokio::test]
async fn a_skipped_snapshot_is_warned_about() {
    let mut w =
        Workspace::with_config(Transport::Stdio, false, "snapshots = { max_files = 1 }").await;
    let thread = w.thread().await;
    w.p.push(crate::tools::patch_call("call_patch", super::revert::PATCH));
    w.p.push(Reply::new().text("Patched."));
    let run = w.p.run_turn(&thread, "change a.txt").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    assert_eq!(w.read("a.txt"), "agent\n");
    let warning = run
        .messages
        .iter()
        .find(|m| m["method"] == "warning")
        .unwrap_or_else(|| panic!("no warning: {:?}", run.messages));
    assert_eq!(warning["params"]["threadId"], thread.as_str());
    let text = warning["params"]["message"].as_str().unwrap();
    assert!(text.contains("more than 1 files"), "{text}");
    assert!(text.contains("cannot restore its files"), "{text}");
    assert!(snapshot_records(&mut w, &thread).await.is_empty());
}
