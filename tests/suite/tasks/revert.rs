//! `thread/revert` (docs/protocol.md §7.27): the history cut before a turn, the reference's
//! order and errors, the cut surviving a restart and `kill -9`, and Weft's `restoreWorkspace`
//! (the files put back from the ghost snapshot, and refused when the user changed them since),
//! in a git repository and in a plain directory, the user's index, refs and HEAD untouched.

use std::path::Path;

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::{Client, RpcError, Transport};

use crate::persistence::{
    Persist, UNKNOWN_ID, assert_error_containing, ok, read_through, run_turn_on, str_at,
};
use crate::tools::patch_call;

/// A daemon and a workspace (a git repository or a plain directory) its threads run in.
pub struct Workspace {
    pub p: Persist,
    pub dir: tempfile::TempDir,
}

/// Run `script` with `sh` in `dir`, as the user (their own git identity, no global config).
pub fn sh(dir: &Path, script: &str) -> String {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "user")
        .env("GIT_AUTHOR_EMAIL", "user@example.com")
        .env("GIT_COMMITTER_NAME", "user")
        .env("GIT_COMMITTER_EMAIL", "user@example.com")
        .output()
        .expect("run sh");
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the user owns in a repository, byte for byte: the index, every ref but Weft's
/// (`packed-refs` included), HEAD and the stash.
pub fn user_state(dir: &Path) -> (Vec<u8>, String, String) {
    let index = std::fs::read(dir.join(".git/index")).expect("the user's index");
    let refs = sh(
        dir,
        "git for-each-ref --format='%(refname) %(objectname)' | grep -v '^refs/weft/' || true",
    );
    let head = std::fs::read_to_string(dir.join(".git/HEAD")).expect("HEAD");
    (index, refs, head)
}

/// A patch that changes `a.txt` (`one` → `agent`) and adds `added.txt`.
pub const PATCH: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+agent\n*** Add File: added.txt\n+by the agent\n*** End Patch\n";

impl Workspace {
    /// A daemon and a workspace with `a.txt` (`one`): in a git repository with a commit, a
    /// staged change and an untracked file when `git`, else a plain directory.
    pub async fn start(transport: Transport, git: bool) -> Workspace {
        Workspace::with_config(transport, git, "").await
    }

    /// [`Workspace::start`] with `top_level` keys in the daemon's `config.toml`.
    pub async fn with_config(transport: Transport, git: bool, top_level: &str) -> Workspace {
        let p = Persist::with_config(transport, top_level).await;
        let dir = tempfile::tempdir().expect("a workspace");
        if git {
            sh(
                dir.path(),
                "git init -q -b main . && echo base > base.txt && git add . && git commit -qm init \
                 && echo one > a.txt && git add a.txt && echo mine > untracked.txt",
            );
        } else {
            sh(dir.path(), "echo one > a.txt && echo mine > untracked.txt");
        }
        Workspace { p, dir }
    }

    /// A file of the workspace.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    /// A thread in the workspace that never asks (workspace-write).
    pub async fn thread(&mut self) -> String {
        let cwd = self.dir.path().display().to_string();
        self.p
            .start_thread_with(
                json!({"cwd": cwd, "approvalPolicy": "never", "sandbox": "workspace-write"}),
            )
            .await
    }

    /// A turn whose model applies [`PATCH`]; the turn's id.
    pub async fn patch_turn(&mut self, thread: &str) -> String {
        self.p.push(patch_call("call_patch", PATCH));
        self.p.push(Reply::new().text("Patched."));
        let run = self.p.run_turn(thread, "change a.txt").await;
        assert_eq!(run.completed_turn()["status"], "completed");
        run.turn_id
    }

    /// A turn the model answers with `text`; its id.
    pub async fn text_turn(&mut self, thread: &str, text: &str) -> String {
        self.p.push(Reply::new().text(format!("answer to {text}")));
        self.p.run_turn(thread, text).await.turn_id
    }
}

/// `thread/revert` on `client`: the result (or error), and, for a result, every message from
/// the response through `thread/reverted`, which must come after it.
pub async fn revert(client: &mut Client, params: Value) -> Result<Value, RpcError> {
    let thread = params["threadId"].clone();
    let id = client.send_request("thread/revert", params).await;
    let messages = read_through(client, |m| m.get("id") == Some(&id)).await;
    let response = messages.last().expect("the response").clone();
    if let Some(error) = response.get("error") {
        return Err(RpcError {
            code: error["code"].as_i64().expect("an error code"),
            message: str_at(error, "/message"),
            data: error.get("data").cloned(),
        });
    }
    let after = read_through(client, |m| m["method"] == "thread/reverted").await;
    assert_eq!(
        after.last().expect("thread/reverted")["params"],
        json!({"threadId": thread})
    );
    Ok(response["result"].clone())
}

/// The ids of the thread's turns, oldest first (`thread/turns/list`).
pub async fn turn_ids(client: &mut Client, thread: &str) -> Vec<String> {
    let page = ok(
        client,
        "thread/turns/list",
        json!({"threadId": thread, "sortDirection": "asc", "itemsView": "notLoaded"}),
    )
    .await;
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|turn| str_at(turn, "/id"))
        .collect()
}

/// History only: the thread keeps the turns before the one named, the response has the
/// reference's shape, `thread/reverted` follows it (to every connection), the files stay as
/// the agent left them, and the next turn's model request lacks what was cut.
async fn revert_cuts_the_history(transport: Transport) {
    let mut w = Workspace::start(transport, true).await;
    let thread = w.thread().await;
    let first = w.text_turn(&thread, "first question").await;
    let second = w.patch_turn(&thread).await;
    let third = w.text_turn(&thread, "third question").await;
    let mut other = w.p.other_client().await;
    let result = revert(
        &mut w.p.client,
        json!({"threadId": thread, "beforeTurnId": second}),
    )
    .await
    .expect("the revert");
    assert_eq!(result["thread"]["id"], thread.as_str());
    assert_eq!(result["thread"]["turns"], json!([]));
    assert_eq!(result["thread"]["status"], json!({"type": "idle"}));
    assert!(result["turnsBackwardsCursor"].is_string(), "{result}");
    assert!(result["itemsBackwardsCursor"].is_string(), "{result}");
    if let Some(other) = other.as_mut() {
        read_through(other, |m| m["method"] == "thread/reverted").await;
    }
    assert_eq!(
        turn_ids(&mut w.p.client, &thread).await,
        vec![first.clone()]
    );
    // History only: the patch's work stays.
    assert_eq!(w.read("a.txt"), "agent\n");
    assert_eq!(w.read("added.txt"), "by the agent\n");
    // The model no longer sees the cut turns.
    w.p.push(Reply::new().text("after the revert"));
    run_turn_on(&mut w.p.client, &thread, "fourth question").await;
    let requests = w.p.wait_for_requests(5).await;
    let last = serde_json::to_string(requests.last().expect("a request").input()).unwrap();
    assert!(last.contains("first question"), "{last}");
    assert!(last.contains("fourth question"), "{last}");
    assert!(!last.contains("change a.txt"), "{last}");
    assert!(!last.contains("third question"), "{last}");
    assert_ne!(first, third);
}

/// The reference's refusals; nothing changes.
async fn revert_errors(transport: Transport) {
    let mut w = Workspace::start(transport, false).await;
    let thread = w.thread().await;
    let first = w.text_turn(&thread, "only question").await;
    let client = &mut w.p.client;
    let unknown_turn = client
        .request(
            "thread/revert",
            json!({"threadId": thread, "beforeTurnId": "no-such-turn"}),
        )
        .await;
    assert_eq!(
        assert_error_containing(unknown_turn, &["turn not found: no-such-turn"]),
        "turn not found: no-such-turn"
    );
    let unknown_thread = client
        .request(
            "thread/revert",
            json!({"threadId": UNKNOWN_ID, "beforeTurnId": first}),
        )
        .await;
    assert_error_containing(unknown_thread, &["thread not found: ", UNKNOWN_ID]);
    let missing = client
        .request("thread/revert", json!({"threadId": thread}))
        .await
        .expect_err("no beforeTurnId");
    assert!(missing.message.contains("beforeTurnId"), "{missing:?}");
    let ephemeral = str_at(
        &ok(client, "thread/start", json!({"ephemeral": true})).await,
        "/thread/id",
    );
    let refused = client
        .request(
            "thread/revert",
            json!({"threadId": ephemeral, "beforeTurnId": first}),
        )
        .await;
    assert_error_containing(refused, &["no rollout found for thread id ", &ephemeral]);
    assert_eq!(turn_ids(client, &thread).await, vec![first]);
}

/// The cut is durable: after `kill -9` and after a clean restart, the resumed thread has only
/// the turns before the one reverted, and its next turn goes on from there.
#[tokio::test]
async fn a_revert_survives_kill_and_restart() {
    let mut w = Workspace::start(Transport::Stdio, false).await;
    let thread = w.thread().await;
    let first = w.text_turn(&thread, "first question").await;
    let second = w.text_turn(&thread, "second question").await;
    revert(
        &mut w.p.client,
        json!({"threadId": thread, "beforeTurnId": second}),
    )
    .await
    .expect("the revert");
    w.p.crash_and_restart().await;
    ok(
        &mut w.p.client,
        "thread/resume",
        json!({"threadId": thread}),
    )
    .await;
    assert_eq!(
        turn_ids(&mut w.p.client, &thread).await,
        vec![first.clone()]
    );
    let third = w.text_turn(&thread, "third question").await;
    w.p.restart().await;
    let resumed = ok(
        &mut w.p.client,
        "thread/resume",
        json!({"threadId": thread}),
    )
    .await;
    let turns: Vec<String> = resumed["thread"]["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .map(|turn| str_at(turn, "/id"))
        .collect();
    assert_eq!(turns, vec![first.clone(), third.clone()]);
    assert_eq!(turn_ids(&mut w.p.client, &thread).await, vec![first, third]);
}

/// `restoreWorkspace`: the files go back to how they were before the turn (the patch's change
/// undone, its new file deleted, the user's untracked file kept), the history is cut, and in
/// a repository the user's index, refs and HEAD are byte for byte what they were.
async fn restore_puts_the_files_back(transport: Transport, git: bool) {
    let mut w = Workspace::start(transport, git).await;
    let before = git.then(|| user_state(w.dir.path()));
    let thread = w.thread().await;
    let first = w.text_turn(&thread, "first question").await;
    let patch = w.patch_turn(&thread).await;
    assert_eq!(w.read("a.txt"), "agent\n");
    let result = revert(
        &mut w.p.client,
        json!({"threadId": thread, "beforeTurnId": patch, "restoreWorkspace": true}),
    )
    .await
    .expect("the revert");
    assert_eq!(result["thread"]["turns"], json!([]));
    assert_eq!(w.read("a.txt"), "one\n");
    assert!(!w.dir.path().join("added.txt").exists());
    assert_eq!(w.read("untracked.txt"), "mine\n");
    assert_eq!(turn_ids(&mut w.p.client, &thread).await, vec![first]);
    if let Some(before) = before {
        assert_eq!(user_state(w.dir.path()), before);
    } else {
        assert!(!w.dir.path().join(".git").exists());
    }
}

async fn restore_in_a_repository(transport: Transport) {
    restore_puts_the_files_back(transport, true).await;
}

async fn restore_in_a_plain_directory(transport: Transport) {
    restore_puts_the_files_back(transport, false).await;
}

/// A file the user edited after the agent's turn: `restoreWorkspace` is refused, naming it,
/// and nothing changes (the file, the history); the history-only revert still works.
async fn restore_is_refused_after_a_user_edit(git: bool) {
    let mut w = Workspace::start(Transport::Stdio, git).await;
    let thread = w.thread().await;
    let first = w.text_turn(&thread, "first question").await;
    let patch = w.patch_turn(&thread).await;
    sh(w.dir.path(), "echo edited by the user > added.txt");
    let refused = revert(
        &mut w.p.client,
        json!({"threadId": thread, "beforeTurnId": patch, "restoreWorkspace": true}),
    )
    .await;
    let message = assert_error_containing(
        refused,
        &[
            "cannot restore the workspace",
            "changed outside the agent",
            "added.txt (modified)",
            "nothing was reverted",
        ],
    );
    assert!(!message.contains("a.txt (modified)"), "{message}");
    assert_eq!(w.read("added.txt"), "edited by the user\n");
    assert_eq!(w.read("a.txt"), "agent\n");
    assert_eq!(
        turn_ids(&mut w.p.client, &thread).await,
        vec![first.clone(), patch.clone()]
    );
    revert(
        &mut w.p.client,
        json!({"threadId": thread, "beforeTurnId": patch}),
    )
    .await
    .expect("the history-only revert");
    assert_eq!(turn_ids(&mut w.p.client, &thread).await, vec![first]);
    assert_eq!(w.read("added.txt"), "edited by the user\n");
}

#[tokio::test]
async fn restore_is_refused_after_a_user_edit_in_a_repository() {
    restore_is_refused_after_a_user_edit(true).await;
}

#[tokio::test]
async fn restore_is_refused_after_a_user_edit_in_a_plain_directory() {
    restore_is_refused_after_a_user_edit(false).await;
}

on_both_transports!(
    revert_cuts_the_history,
    revert_errors,
    restore_in_a_repository,
    restore_in_a_plain_directory
);

/// A turn running when the revert arrives: `restoreWorkspace` is refused (the files are still
/// changing); the history-only revert interrupts it first, as the reference's does, so its
/// `turn/completed {interrupted}` comes before the response, and the cut drops it.
#[tokio::test]
async fn a_running_turn_is_interrupted_by_a_revert() {
    let mut w = Workspace::start(Transport::Stdio, false).await;
    let thread = w.thread().await;
    let first = w.text_turn(&thread, "first question").await;
    let gate = weft_mock_model::Gate::new();
    w.p.push(
        Reply::new()
            .text("half ")
            .gate(&gate)
            .text("and never the rest"),
    );
    let running = w.p.begin_held_turn(&thread, "a long one", &gate).await;
    let refused =
        w.p.client
            .request(
                "thread/revert",
                json!({"threadId": thread, "beforeTurnId": running, "restoreWorkspace": true}),
            )
            .await;
    assert_error_containing(refused, &["while turn ", &running, "is in progress"]);
    let id =
        w.p.client
            .send_request(
                "thread/revert",
                json!({"threadId": thread, "beforeTurnId": running}),
            )
            .await;
    let messages = read_through(&mut w.p.client, |m| m["method"] == "thread/reverted").await;
    let completed = messages
        .iter()
        .position(|m| m["method"] == "turn/completed")
        .expect("the running turn's turn/completed");
    assert_eq!(
        messages[completed]["params"]["turn"]["status"],
        "interrupted"
    );
    let response = messages
        .iter()
        .position(|m| m.get("id") == Some(&id))
        .expect("the response");
    assert!(completed < response, "{messages:?}");
    assert!(messages[response].get("error").is_none(), "{messages:?}");
    gate.release();
    assert_eq!(turn_ids(&mut w.p.client, &thread).await, vec![first]);
}

/// Which turn has which snapshot is in the rollout: after a restart, `restoreWorkspace` still
/// puts the files back.
#[tokio::test]
async fn restore_works_after_a_restart() {
    let mut w = Workspace::start(Transport::Stdio, true).await;
    let before = user_state(w.dir.path());
    let thread = w.thread().await;
    let patch = w.patch_turn(&thread).await;
    w.p.restart().await;
    ok(
        &mut w.p.client,
        "thread/resume",
        json!({"threadId": thread}),
    )
    .await;
    revert(
        &mut w.p.client,
        json!({"threadId": thread, "beforeTurnId": patch, "restoreWorkspace": true}),
    )
    .await
    .expect("the revert");
    assert_eq!(w.read("a.txt"), "one\n");
    assert!(!w.dir.path().join("added.txt").exists());
    assert_eq!(user_state(w.dir.path()), before);
}

/// Two changing turns: restoring before the first undoes both; a user edit between them is
/// found (the second turn's `before` is not the first's `after`) and the restore refused.
#[tokio::test]
async fn restore_across_two_changing_turns_checks_between_them() {
    for edit_between in [false, true] {
        let mut w = Workspace::start(Transport::Stdio, false).await;
        let thread = w.thread().await;
        let first = w.patch_turn(&thread).await;
        if edit_between {
            sh(w.dir.path(), "echo the user was here > untracked.txt");
        }
        let second_patch =
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-agent\n+agent again\n*** End Patch\n";
        w.p.push(patch_call("call_again", second_patch));
        w.p.push(Reply::new().text("Patched again."));
        w.p.run_turn(&thread, "change it again").await;
        assert_eq!(w.read("a.txt"), "agent again\n");
        let answer = revert(
            &mut w.p.client,
            json!({"threadId": thread, "beforeTurnId": first, "restoreWorkspace": true}),
        )
        .await;
        if edit_between {
            assert_error_containing(
                answer,
                &[
                    "changed outside the agent before turn",
                    "untracked.txt (modified)",
                ],
            );
            assert_eq!(w.read("a.txt"), "agent again\n");
            assert_eq!(turn_ids(&mut w.p.client, &thread).await.len(), 2);
        } else {
            answer.expect("the revert");
            assert_eq!(w.read("a.txt"), "one\n");
            assert!(!w.dir.path().join("added.txt").exists());
            assert_eq!(w.read("untracked.txt"), "mine\n");
        }
    }
}
