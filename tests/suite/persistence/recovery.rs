//! Crash safety and recovery (issue 5 §4): a deleted state DB is rebuilt from the rollouts, a
//! corrupted rollout only affects its own thread, a torn last line is skipped, two daemons
//! on the same home never write the same rollout, and after `kill -9` the index is level with
//! the rollouts before the first `thread/list` is answered (issue 24 §8).

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply};
use weft_test_support::Transport;

use super::{
    Persist, assert_error_containing, assert_follow_up, ids, launch, list, loaded, ok, path_of,
    read, read_through, rollout_files, rollout_lines, start_thread_on, turns,
};
use crate::requests::Requests;
use crate::turns::wait_gate;

/// The fields of a listed thread that the index must give back after a rebuild.
fn summary(thread: &Value) -> Value {
    let mut out = json!({});
    for key in [
        "id",
        "preview",
        "name",
        "createdAt",
        "cwd",
        "path",
        "source",
        "modelProvider",
        "model",
        "forkedFromId",
        "cliVersion",
    ] {
        out[key] = thread[key].clone();
    }
    out
}

fn summaries(result: &Value) -> Vec<Value> {
    result["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(summary)
        .collect()
}

/// Stop the daemon, delete the state DB (`state.sqlite` and its WAL files) and start again;
/// waits until the daemon says it rebuilt the index from the rollouts.
async fn restart_without_state_db(p: &mut Persist) {
    p.stop().await;
    for file in ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm"] {
        let db = p.home.path().join(file);
        if db.exists() {
            std::fs::remove_file(&db).expect("delete the state DB");
        }
    }
    p.start_again().await;
    p.daemon
        .wait_for_stderr("rebuilt the thread index from the rollouts")
        .await;
}

/// `state.sqlite` deleted while the daemon is down: the next start rebuilds the index from the
/// rollouts (names, previews, archived state, forks included).
#[tokio::test]
async fn deleted_state_db_is_rebuilt() {
    let mut p = Persist::start(Transport::Stdio).await;
    let (a, _) = p
        .thread_with_turn("Answer A.", "first question for A")
        .await;
    let b = p.start_thread().await;
    ok(
        &mut p.client,
        "thread/name/set",
        json!({"threadId": b, "name": "Named B"}),
    )
    .await;
    let fork = ok(&mut p.client, "thread/fork", json!({"threadId": a})).await;
    assert_eq!(fork["thread"]["forkedFromId"], a.as_str());
    let c = p.start_thread().await;
    ok(&mut p.client, "thread/archive", json!({"threadId": c})).await;
    let before = summaries(&list(&mut p.client, json!({})).await);
    let before_archived = summaries(&list(&mut p.client, json!({"archived": true})).await);
    assert_eq!(before.len(), 3);
    assert_eq!(before_archived.len(), 1);
    restart_without_state_db(&mut p).await;
    assert!(p.home.path().join("state.sqlite").is_file());

    let after = list(&mut p.client, json!({})).await;
    assert_eq!(summaries(&after), before, "the rebuilt index differs");
    assert!(
        after["data"]
            .as_array()
            .expect("data")
            .iter()
            .all(|t| t["status"]["type"] == "notLoaded")
    );
    assert_eq!(
        summaries(&list(&mut p.client, json!({"archived": true})).await),
        before_archived
    );
    let resumed = ok(&mut p.client, "thread/resume", json!({"threadId": a})).await;
    assert_eq!(turns(&resumed["thread"]).len(), 1);
}

/// A rollout whose header is garbage: that thread gets a clear error on read, resume and fork;
/// the daemon keeps serving, and the other threads are listed and work.
#[tokio::test]
async fn corrupted_rollout_only_affects_its_thread() {
    let mut p = Persist::start(Transport::Stdio).await;
    p.push(Reply::new().text("Good answer."));
    p.push(Reply::new().text("Still good."));
    let broken = p.start_thread().await;
    let good = p.start_thread().await;
    p.run_turn(&good, "hello good").await;
    let path = path_of(&read(&mut p.client, &broken, false).await);
    p.stop().await;

    let text = std::fs::read_to_string(&path).expect("read the rollout");
    let rest = text.split_once('\n').map_or("", |(_, rest)| rest);
    let garbage = format!("this is not a rollout header\n{rest}");
    std::fs::write(&path, &garbage).expect("corrupt the rollout");

    p.start_again().await;
    // The index does not re-read a rollout rewritten in place (docs/architecture.md §10.2):
    // the thread is still listed, and everything that reads its file says it is broken.
    assert_eq!(
        ids(&list(&mut p.client, json!({})).await),
        [good.as_str(), broken.as_str()]
    );
    for include_turns in [false, true] {
        let answer = p.client.thread_read(&broken, &include_turns).await;
        assert_error_containing(answer, &["no valid session header", &broken]);
    }
    for method in ["thread/resume", "thread/fork"] {
        let answer = p.client.request(method, json!({"threadId": broken})).await;
        let message = assert_error_containing(answer, &["no valid session header"]);
        assert!(message.contains(&broken), "{method}: {message}");
    }
    assert!(loaded(&mut p.client).await.is_empty());

    let view = read(&mut p.client, &good, true).await;
    assert_eq!(turns(&view).len(), 1);
    ok(&mut p.client, "thread/resume", json!({"threadId": good})).await;
    let run = p.run_turn(&good, "still there?").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(2).await;
    assert_follow_up(&requests[1], ["hello good", "Good answer.", "still there?"]);
    assert_eq!(
        std::fs::read_to_string(&path).expect("read the rollout"),
        garbage,
        "the corrupted rollout was changed"
    );

    // A rebuilt index (the DB deleted) leaves the unreadable rollout out.
    restart_without_state_db(&mut p).await;
    assert_eq!(ids(&list(&mut p.client, json!({})).await), [good.as_str()]);
}

/// A crash in the middle of writing a line leaves a torn last line: it is skipped (with a
/// warning), the thread reads and resumes as before, and the next append starts on a fresh line.
#[tokio::test]
async fn torn_last_line_is_skipped() {
    let mut p = Persist::start(Transport::Ws).await;
    p.push(Reply::new().text("Answer one."));
    let (thread, _) = p.thread_with_turn("Answer two.", "question one").await;
    let before = read(&mut p.client, &thread, true).await;
    let path = path_of(&before);
    p.stop().await;

    let mut text = std::fs::read_to_string(&path).expect("read the rollout");
    text.push_str(r#"{"ts":1767225600000,"type":"item_completed","payload":{"turn_id":"01"#);
    std::fs::write(&path, text).expect("tear the last line");

    p.start_again().await;
    let after = read(&mut p.client, &thread, true).await;
    assert_eq!(turns(&after), turns(&before));
    p.daemon.wait_for_stderr("torn last line").await;
    let resumed = ok(&mut p.client, "thread/resume", json!({"threadId": thread})).await;
    assert_eq!(turns(&resumed["thread"]), turns(&before));
    let run = p.run_turn(&thread, "question two").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(2).await;
    assert_follow_up(
        &requests[1],
        ["question one", "Answer one.", "question two"],
    );
    // Rollouts are only appended to (issue 11): the torn line stays byte for byte, ended by a
    // newline, and every other line is whole; new lines start on a line of their own.
    let text = std::fs::read_to_string(&path).expect("read the rollout");
    let torn = r#"{"ts":1767225600000,"type":"item_completed","payload":{"turn_id":"01"#;
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.iter().filter(|l| **l == torn).count(), 1, "{text}");
    for line in lines.iter().filter(|l| **l != torn) {
        let value: Value = serde_json::from_str(line).expect("a whole line");
        assert!(value.is_object() && value["ts"] != 1_767_225_600_000_i64);
    }
    assert_eq!(turns(&read(&mut p.client, &thread, true).await).len(), 2);
}

/// Two daemons on one home: the second reads what the first wrote but refuses to write a
/// thread the first holds (the rollout is locked); the first keeps working; every rollout
/// line stays valid JSON.
#[tokio::test]
async fn two_daemons_on_one_home() {
    let mut p = Persist::start(Transport::Stdio).await;
    p.push(Reply::new().text("From the first daemon."));
    let (thread, _) = p.thread_with_turn("First daemon again.", "hello").await;
    let path = path_of(&read(&mut p.client, &thread, false).await);

    let (mut second, mut client) = launch(Transport::Ws, &p.home).await;
    assert!(ids(&list(&mut client, json!({})).await).contains(&thread));
    let seen = read(&mut client, &thread, true).await;
    assert_eq!(turns(&seen).len(), 1, "the second daemon reads the thread");
    for (method, params) in [
        ("thread/resume", json!({"threadId": thread})),
        (
            "thread/name/set",
            json!({"threadId": thread, "name": "mine"}),
        ),
        ("thread/archive", json!({"threadId": thread})),
    ] {
        let answer = client.request(method, params).await;
        let message = assert_error_containing(answer, &["locked"]);
        assert!(message.contains(&thread), "{method}: {message}");
    }
    assert!(
        path.is_file(),
        "the second daemon moved the first one's rollout"
    );
    assert!(loaded(&mut client).await.is_empty());

    // Each daemon has its own threads; neither can take the other's.
    let cwd = p.cwd();
    let theirs = start_thread_on(&mut client, &cwd).await;
    let answer = p
        .client
        .request("thread/resume", json!({"threadId": theirs}))
        .await;
    assert_error_containing(answer, &["locked"]);

    // The first daemon's thread still works.
    let run = p.run_turn(&thread, "again").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(2).await;
    assert_follow_up(&requests[1], ["hello", "From the first daemon.", "again"]);

    second.sigterm();
    assert!(second.wait_exit().await.success());
    p.stop().await;
    let files = rollout_files(p.home.path());
    assert_eq!(files.len(), 2, "{files:?}");
    for file in &files {
        let lines = rollout_lines(file);
        let headers = lines.iter().filter(|l| l["type"] == "session_meta").count();
        assert_eq!(headers, 1, "{}", file.display());
    }
    let lines = rollout_lines(&path);
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "turn_started").count(),
        2
    );
    assert!(!lines.iter().any(|l| l["type"] == "thread_name_set"));
}

/// Wait until the wall clock is in a later second than `since` (`updatedAt` counts seconds), so
/// that what happens next is stamped after it.
async fn next_second(since: i64) {
    while std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
        <= since
    {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// `kill -9` in the middle of a thread's first turn, after a second daemon opened the same home
/// (and caught its index up while the first one held the thread open): once restarted,
/// `thread/list` answers the thread's preview, `updatedAt` and status as `thread/read` does.
async fn kill_mid_turn_after_a_second_daemon(with_second_daemon: bool) {
    let mut p = Persist::start(Transport::Stdio).await;
    let gate = Gate::new();
    p.push(Reply::new().text("first part done").gate(&gate));
    let thread = p.start_thread().await;
    let started_at = read(&mut p.client, &thread, false).await["updatedAt"]
        .as_i64()
        .expect("updatedAt");
    if with_second_daemon {
        let (mut second, mut client) = launch(Transport::Ws, &p.home).await;
        let seen = list(&mut client, json!({})).await;
        assert_eq!(ids(&seen), [thread.as_str()]);
        second.sigterm();
        assert!(second.wait_exit().await.success());
    }
    next_second(started_at).await;
    p.begin_turn(&thread, "the first prompt").await;
    read_through(&mut p.client, |m| {
        m["method"] == "item/completed" && m["params"]["item"]["text"] == "first part done"
    })
    .await;
    wait_gate(&gate).await;
    p.crash_and_restart().await;

    let listed = list(&mut p.client, json!({})).await;
    let stored = read(&mut p.client, &thread, true).await;
    assert_eq!(ids(&listed), [thread.as_str()]);
    let row = &listed["data"][0];
    assert_eq!(turns(&stored).len(), 1, "{stored}");
    assert_eq!(stored["preview"], "the first prompt");
    assert!(
        stored["updatedAt"].as_i64() > Some(started_at),
        "the turn did not move updatedAt: {stored}"
    );
    for key in ["preview", "updatedAt", "status", "name"] {
        assert_eq!(row[key], stored[key], "thread/list's {key} is stale: {row}");
    }
}

#[tokio::test]
async fn kill_mid_turn_leaves_the_index_level() {
    kill_mid_turn_after_a_second_daemon(false).await;
}

#[tokio::test]
async fn kill_mid_turn_after_a_second_daemon_leaves_the_index_level() {
    kill_mid_turn_after_a_second_daemon(true).await;
}

/// A thread resumed from its rollout marks its row behind the file only when it first writes
/// to it (docs/architecture.md §10): a `kill -9` in the middle of the resumed thread's turn
/// still leaves the restarted daemon's `thread/list` level with the file.
#[tokio::test]
async fn kill_mid_turn_of_a_resumed_thread_leaves_the_index_level() {
    let mut p = Persist::start(Transport::Stdio).await;
    let (thread, _) = p.thread_with_turn("first answer", "the first prompt").await;
    p.restart().await;
    ok(
        &mut p.client,
        "thread/resume",
        json!({"threadId": thread, "excludeTurns": true}),
    )
    .await;
    let before = read(&mut p.client, &thread, false).await["updatedAt"]
        .as_i64()
        .expect("updatedAt");
    next_second(before).await;
    let gate = Gate::new();
    p.push(Reply::new().text("second part done").gate(&gate));
    p.begin_turn(&thread, "the second prompt").await;
    read_through(&mut p.client, |m| {
        m["method"] == "item/completed" && m["params"]["item"]["text"] == "second part done"
    })
    .await;
    wait_gate(&gate).await;
    p.crash_and_restart().await;

    let listed = list(&mut p.client, json!({})).await;
    let stored = read(&mut p.client, &thread, true).await;
    assert_eq!(turns(&stored).len(), 2, "{stored}");
    assert!(
        stored["updatedAt"].as_i64() > Some(before),
        "the turn did not move updatedAt: {stored}"
    );
    let row = &listed["data"][0];
    for key in ["preview", "updatedAt", "status", "name"] {
        assert_eq!(row[key], stored[key], "thread/list's {key} is stale: {row}");
    }
}
