//! `thread/delete` (docs/protocol.md §7.36): a stored thread, a loaded one (idle and running),
//! a parent with its sub-agent, the refusals, and a crash right after.

use std::process::Command;

use serde_json::json;
use weft_mock_model::{Gate, Reply};
use weft_test_support::{QUIET_PERIOD, Transport};

use super::{on, send_through, thread_of};
use crate::agents::{harness, spawn_one};
use crate::persistence::{Persist, UNKNOWN_ID, assert_error, list_ids, loaded, path_of, read};
use crate::turns::label;

/// A git repository under the home, with one snapshot ref of `thread` in it.
fn repo_with_snapshot(p: &Persist, name: &str) -> std::path::PathBuf {
    let repo = p.home.path().join(name);
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    repo
}

/// The snapshot refs of `thread` in `repo`.
fn snapshot_refs(repo: &std::path::Path, thread: &str) -> String {
    let out = Command::new("git")
        .args([
            "for-each-ref",
            "--format=%(refname)",
            &format!("refs/weft/snapshots/{thread}/"),
        ])
        .current_dir(repo)
        .output()
        .expect("git");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Give `thread` a snapshot ref in `repo` (pointing at the empty tree).
fn add_snapshot_ref(repo: &std::path::Path, thread: &str) {
    let tree = Command::new("git")
        .args(["hash-object", "-t", "tree", "-w", "/dev/null"])
        .current_dir(repo)
        .output()
        .expect("git");
    let tree = String::from_utf8_lossy(&tree.stdout).trim().to_string();
    let status = Command::new("git")
        .args([
            "update-ref",
            &format!("refs/weft/snapshots/{thread}/turn-1/before"),
            &tree,
        ])
        .current_dir(repo)
        .status()
        .expect("git");
    assert!(status.success());
}

async fn a_stored_thread(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let repo = repo_with_snapshot(&p, "work");
    p.push(Reply::new().text("done"));
    let thread = p
        .start_thread_with(json!({"cwd": repo.display().to_string()}))
        .await;
    p.run_turn(&thread, "hello").await;
    let kept = p.start_thread().await;
    let path = path_of(&read(&mut p.client, &thread, false).await);
    add_snapshot_ref(&repo, &thread);
    assert!(!snapshot_refs(&repo, &thread).is_empty());
    // Stored and not loaded.
    p.restart().await;
    let mut other = p.other_client().await;

    let (id, messages) = send_through(&mut p.client, "thread/delete", on(&thread), |m| {
        m["method"] == "thread/deleted"
    })
    .await;
    let labels: Vec<String> = messages.iter().map(label).collect();
    assert_eq!(labels, ["response", "thread/deleted"]);
    assert_eq!(messages[0]["id"], id);
    assert_eq!(messages[0]["result"], json!({}));
    assert_eq!(messages[1]["params"], json!({"threadId": thread}));
    p.client.expect_no_message_within(QUIET_PERIOD).await;
    if let Some(other) = other.as_mut() {
        let seen = other.wait_for_notification("thread/deleted").await;
        assert_eq!(thread_of(&seen), thread, "thread/deleted is broadcast");
    }

    assert!(!path.exists(), "the rollout is gone");
    assert!(
        snapshot_refs(&repo, &thread).is_empty(),
        "the snapshots are gone"
    );
    assert_eq!(list_ids(&mut p.client, json!({})).await, [kept.as_str()]);
    let not_loaded = format!("thread not loaded: {thread}");
    assert_error(
        p.client.request("thread/read", on(&thread)).await,
        &not_loaded,
    );
    let no_rollout = format!("no rollout found for thread id {thread}");
    for method in ["thread/delete", "thread/resume", "thread/archive"] {
        assert_error(p.client.request(method, on(&thread)).await, &no_rollout);
    }
    // The index row is gone for good: a restart that re-reads the day does not bring it back.
    p.restart().await;
    assert_eq!(list_ids(&mut p.client, json!({})).await, [kept]);
    assert_error(
        p.client.request("thread/read", on(&thread)).await,
        &not_loaded,
    );
}

async fn a_loaded_thread(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let idle = p.start_thread().await;
    let path = path_of(&read(&mut p.client, &idle, false).await);
    // Loaded and idle: notLoaded to everyone before the response, then thread/deleted.
    let (_, messages) = send_through(&mut p.client, "thread/delete", on(&idle), |m| {
        m["method"] == "thread/deleted"
    })
    .await;
    let labels: Vec<String> = messages.iter().map(label).collect();
    assert_eq!(
        labels,
        [
            "thread/status/changed:notLoaded",
            "response",
            "thread/deleted"
        ]
    );
    assert_eq!(thread_of(&messages[0]), idle);
    assert!(!loaded(&mut p.client).await.contains(&idle));
    assert!(!path.exists());

    // Running a turn: the turn is interrupted, then the thread goes.
    let gate = Gate::new();
    p.push(crate::turns::gated_message(
        "msg_del", "working ", &gate, "on it",
    ));
    let busy = p.start_thread().await;
    let busy_path = path_of(&read(&mut p.client, &busy, false).await);
    p.begin_held_turn(&busy, "work", &gate).await;
    let (_, messages) = send_through(&mut p.client, "thread/delete", on(&busy), |m| {
        m["method"] == "thread/deleted"
    })
    .await;
    let completed = messages
        .iter()
        .find(|m| m["method"] == "turn/completed")
        .expect("the running turn ends");
    assert_eq!(completed["params"]["turn"]["status"], "interrupted");
    let labels: Vec<String> = messages.iter().map(label).collect();
    let at = |l: &str| labels.iter().position(|x| x == l).unwrap();
    assert!(at("turn/completed") < at("response") && at("response") < at("thread/deleted"));
    gate.release();
    assert!(!busy_path.exists());
    assert!(list_ids(&mut p.client, json!({})).await.is_empty());
}

async fn a_parent_with_its_sub_agent(transport: Transport) {
    let mut h = harness(transport, "").await;
    let parent = h.start_thread().await;
    let child = spawn_one(&mut h, &parent, "Do a small task.", Reply::new().text("ok")).await;
    let children = json!({"parentThreadId": parent, "sourceKinds": ["subAgentThreadSpawn"]});
    assert_eq!(
        crate::agents::listed(&mut h.client, "thread/list", children.clone()).await,
        [child.as_str()]
    );
    let (_, messages) = send_through(&mut h.client, "thread/delete", on(&parent), |m| {
        m["method"] == "thread/deleted" && thread_of(m) == parent
    })
    .await;
    let deleted: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "thread/deleted")
        .map(thread_of)
        .collect();
    assert_eq!(
        deleted,
        [child.as_str(), parent.as_str()],
        "the sub-agent first"
    );
    assert!(
        crate::agents::listed(&mut h.client, "thread/list", children)
            .await
            .is_empty()
    );
    for thread in [&parent, &child] {
        let answer = h.client.request("thread/read", on(thread)).await;
        assert_error(answer, &format!("thread not loaded: {thread}"));
    }
}

async fn refusals_and_a_crash_after(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let answer = p.client.request("thread/delete", on("nope")).await;
    assert!(
        answer
            .unwrap_err()
            .message
            .starts_with("invalid thread id: "),
    );
    assert_error(
        p.client.request("thread/delete", on(UNKNOWN_ID)).await,
        &format!("no rollout found for thread id {UNKNOWN_ID}"),
    );
    let ephemeral = p.start_thread_with(json!({"ephemeral": true})).await;
    assert_error(
        p.client.request("thread/delete", on(&ephemeral)).await,
        &format!("thread is not persisted and cannot be deleted: {ephemeral}"),
    );
    // An archived thread is deleted too.
    let archived = p.start_thread().await;
    p.client
        .request("thread/archive", on(&archived))
        .await
        .unwrap();
    p.client
        .request("thread/delete", on(&archived))
        .await
        .unwrap();
    assert!(
        list_ids(&mut p.client, json!({"archived": true}))
            .await
            .is_empty()
    );
    // Answered means done: a kill -9 right after leaves it deleted.
    let thread = p.start_thread().await;
    p.client
        .request("thread/delete", on(&thread))
        .await
        .unwrap();
    p.crash_and_restart().await;
    assert!(list_ids(&mut p.client, json!({})).await.is_empty());
    assert_error(
        p.client.request("thread/read", on(&thread)).await,
        &format!("thread not loaded: {thread}"),
    );
}

on_both_transports!(
    a_stored_thread,
    a_loaded_thread,
    a_parent_with_its_sub_agent,
    refusals_and_a_crash_after,
);
