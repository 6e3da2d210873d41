//! `thread/resume` (docs/protocol.md §7.3): after a graceful restart, after `kill -9` in the middle
//! of a streaming turn and of a command, warm from a second connection, of a thread that never
//! ran a turn; and the errors for unknown ids (§5.3).

use std::path::Path;

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply};
use weft_test_support::{Client, QUIET_PERIOD, Transport};

use super::{
    Persist, UNKNOWN_ID, answer, assert_error, assert_follow_up, assert_nothing_in_progress,
    assert_one_cut_turn, assert_one_environment_context, assistant, conversation, ids, is_marker,
    item_types, label, list, loaded, ok, path_of, read, read_through, read_through_turn_completed,
    rollout_lines, run_turn_on, str_at, turns, user,
};
use crate::requests::Requests;
use crate::turns::wait_gate;

/// `thread/resume` of a thread that is not loaded: `thread/status/changed {idle}` (broadcast)
/// comes first, then the response. Returns the response's result.
async fn cold_resume(client: &mut Client, thread: &str) -> Value {
    let id = client
        .send_request("thread/resume", json!({"threadId": thread}))
        .await;
    // A previous resume's goal notification (it follows that response) may still be queued.
    let messages: Vec<Value> = read_through(client, |m| m.get("id") == Some(&id))
        .await
        .into_iter()
        .filter(|m| !label(m).starts_with("thread/goal/"))
        .collect();
    let labels: Vec<String> = messages.iter().map(label).collect();
    assert_eq!(
        labels,
        ["thread/status/changed:idle", "response"],
        "cold resume order"
    );
    assert_eq!(messages[0]["params"]["threadId"], thread);
    let result = messages[1]["result"].clone();
    assert_eq!(result["thread"]["id"], thread);
    assert_eq!(result["thread"]["status"]["type"], "idle");
    result
}

/// The reference `resume` scenario with a graceful stop in between: the resumed thread has its
/// turn, the last token usage is replayed after the response, and the next request carries the
/// whole conversation.
async fn resume_after_graceful_restart(transport: Transport) {
    let mut p = Persist::start(transport).await;
    p.push(answer("Okay, I will remember 42.", 100, 20));
    let (thread, first) = p
        .thread_with_turn("You told me 42.", "remember the number 42")
        .await;
    assert_eq!(first.completed_turn()["status"], "completed");
    let before = read(&mut p.client, &thread, true).await;

    p.restart().await;

    let listed = list(&mut p.client, json!({})).await;
    assert_eq!(ids(&listed), [thread.as_str()]);
    assert_eq!(listed["data"][0]["status"]["type"], "notLoaded");
    assert_eq!(listed["data"][0]["preview"], "remember the number 42");
    assert!(loaded(&mut p.client).await.is_empty());

    let id = p
        .client
        .send_request("thread/resume", json!({"threadId": thread}))
        .await;
    let messages = read_through(&mut p.client, |m| {
        m["method"] == "thread/tokenUsage/updated"
    })
    .await;
    let labels: Vec<String> = messages.iter().map(label).collect();
    assert_eq!(
        labels,
        [
            "thread/status/changed:idle",
            "response",
            "thread/tokenUsage/updated"
        ]
    );
    assert_eq!(messages[1]["id"], id);
    let result = &messages[1]["result"];
    assert_eq!(result["thread"]["id"], thread.as_str());
    assert_eq!(result["thread"]["status"]["type"], "idle");
    assert_eq!(result["thread"]["preview"], "remember the number 42");
    assert_eq!(result["model"], "mock-model");
    assert_eq!(result["modelProvider"], "mock");
    assert_eq!(result["cwd"], p.cwd());
    assert_eq!(result["approvalPolicy"], "never");
    assert_eq!(
        turns(&result["thread"]),
        turns(&before),
        "the resumed turns differ from the ones read before the restart"
    );
    let resumed = turns(&result["thread"]);
    assert_eq!(resumed[0]["id"], first.turn_id.as_str());
    assert_eq!(resumed[0]["itemsView"], "full");
    assert_eq!(item_types(&resumed[0]), ["userMessage", "agentMessage"]);
    let usage = &messages[2]["params"];
    assert_eq!(usage["threadId"], thread.as_str());
    assert_eq!(usage["turnId"], first.turn_id.as_str());
    assert_eq!(usage["tokenUsage"]["total"]["totalTokens"], 120);
    assert_eq!(loaded(&mut p.client).await, [thread.as_str()]);

    let second = p.run_turn(&thread, "what number did I tell you?").await;
    assert_eq!(second.completed_turn()["status"], "completed");
    assert_eq!(
        second.completed_items_of("agentMessage")[0]["text"],
        "You told me 42."
    );
    let requests = p.wait_for_requests(2).await;
    assert_follow_up(
        &requests[1],
        [
            "remember the number 42",
            "Okay, I will remember 42.",
            "what number did I tell you?",
        ],
    );
    // The resumed history is the first request's, continued: same prefix, nothing lost.
    let old = requests[0].input();
    let new = requests[1].input();
    assert_eq!(
        &new[..old.len()],
        old,
        "the resumed history does not start with the original one"
    );
    assert_eq!(turns(&read(&mut p.client, &thread, true).await).len(), 2);
    assert_one_environment_context(&requests[1]);
}

/// `kill -9` while the model is streaming the second message of a turn: after a restart the
/// thread is listed, its cut turn is `interrupted` with every item that completed before the
/// kill, it resumes, and the next request tells the model about the interruption.
async fn resume_after_kill_mid_turn(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let gate = Gate::new();
    // One complete message, then a second one cut in the middle (held at the gate).
    p.push(
        Reply::new()
            .text("first part done")
            .raw_event(json!({
                "type": "response.output_item.added", "output_index": 1,
                "item": {"type": "message", "id": "msg_cut", "role": "assistant",
                         "status": "in_progress", "content": []}
            }))
            .raw_event(json!({
                "type": "response.output_text.delta", "item_id": "msg_cut",
                "output_index": 1, "content_index": 0, "delta": "half a sentence"
            }))
            .gate(&gate),
    );
    p.push(Reply::new().text("Recovered."));
    let thread = p.start_thread().await;
    let turn = p.begin_turn(&thread, "remember the number 42").await;
    let before_kill = read_through(&mut p.client, |m| {
        m["method"] == "item/agentMessage/delta" && m["params"]["itemId"] == "msg_cut"
    })
    .await;
    assert!(
        before_kill
            .iter()
            .any(|m| m["method"] == "item/completed"
                && m["params"]["item"]["text"] == "first part done"),
        "the first message did not complete before the cut"
    );
    wait_gate(&gate).await;
    // A completed item is written by the rollout's background writer, not before its
    // notification (docs/architecture.md §10.1): the kill comes once it is in the file.
    let path = path_of(&read(&mut p.client, &thread, false).await);
    let written = tokio::time::timeout(weft_test_support::DEFAULT_TIMEOUT, async {
        while !std::fs::read_to_string(&path).is_ok_and(|text| text.contains("first part done")) {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    });
    written
        .await
        .expect("the first message reaches the rollout");

    p.crash_and_restart().await;

    let listed = list(&mut p.client, json!({})).await;
    assert_eq!(ids(&listed), [thread.as_str()], "the thread is listed");
    assert_eq!(listed["data"][0]["status"]["type"], "notLoaded");
    // The index was behind the rollout (the turn never ended): it was rebuilt at start.
    assert_eq!(listed["data"][0]["preview"], "remember the number 42");
    let stored = read(&mut p.client, &thread, true).await;
    assert_eq!(stored["status"]["type"], "notLoaded");
    let cut = assert_one_cut_turn(&stored, &turn);
    assert!(cut["completedAt"].is_i64(), "{cut}");
    assert_eq!(item_types(&cut), ["userMessage", "agentMessage"], "{cut}");
    assert_eq!(
        cut["items"][0]["content"][0]["text"],
        "remember the number 42"
    );
    assert_eq!(cut["items"][1]["text"], "first part done");

    let resumed = cold_resume(&mut p.client, &thread).await;
    assert_eq!(turns(&resumed["thread"]), [cut]);
    let next = p.run_turn(&thread, "what happened?").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(2).await;
    let talk = conversation(&requests[1]);
    assert_eq!(talk.len(), 4, "{talk:#?}");
    assert_eq!(
        talk[..2],
        [user("remember the number 42"), assistant("first part done")]
    );
    assert!(is_marker(&talk[2].1), "no <turn_aborted> marker: {talk:#?}");
    assert_eq!(talk[3], user("what happened?"));

    let after = read(&mut p.client, &thread, true).await;
    let statuses: Vec<&Value> = after["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .map(|t| &t["status"])
        .collect();
    assert_eq!(statuses, [&json!("interrupted"), &json!("completed")]);
    rollout_lines(&path_of(&after));
}

/// `kill -9` while a command runs (`exec_command` with `sleep 30`): the turn comes back
/// interrupted, the resumed thread's next request pairs the cut call with an output and carries
/// the interruption marker.
#[tokio::test]
async fn resume_after_kill_mid_command() {
    let mut p = Persist::start(Transport::Stdio).await;
    let ws = p.home.path().join("ws");
    std::fs::create_dir_all(&ws).expect("create the workspace");
    let ws = std::fs::canonicalize(&ws).expect("canonical workspace");
    p.push(Reply::new().function_call(
        "call_sleep",
        "exec_command",
        json!({"cmd": "echo started; sleep 30"}).to_string(),
    ));
    p.push(Reply::new().text("The command was cut off."));
    let full_access =
        json!({"cwd": ws, "approvalPolicy": "never", "sandbox": "danger-full-access"});
    let thread = p.start_thread_with(full_access).await;
    let turn = p.begin_turn(&thread, "run the slow command").await;
    read_through(&mut p.client, |m| {
        m["method"] == "item/commandExecution/outputDelta"
            && m["params"]["delta"]
                .as_str()
                .is_some_and(|d| d.contains("started"))
    })
    .await;

    p.kill().await;
    // The daemon could not clean up after itself: end what it left running.
    let left = kill_processes_in(&ws);
    p.start_again().await;

    let stored = read(&mut p.client, &thread, true).await;
    assert_nothing_in_progress(&stored);
    let cut = turns(&stored);
    assert_eq!(cut.len(), 1, "{stored}");
    assert_eq!(cut[0]["id"], turn.as_str());
    assert_eq!(cut[0]["status"], "interrupted");
    assert_eq!(item_types(&cut[0])[0], "userMessage");

    cold_resume(&mut p.client, &thread).await;
    let next = p.run_turn(&thread, "what happened?").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(2).await;
    let input = requests[1].input();
    let call_at = input
        .iter()
        .position(|i| i["type"] == "function_call" && i["call_id"] == "call_sleep")
        .unwrap_or_else(|| panic!("the cut call is not in history: {input:#?}"));
    let output_at = input
        .iter()
        .position(|i| i["type"] == "function_call_output" && i["call_id"] == "call_sleep")
        .unwrap_or_else(|| panic!("the cut call has no output: {input:#?}"));
    let marker_at = input
        .iter()
        .position(|i| {
            i["type"] == "message" && i["content"][0]["text"].as_str().is_some_and(is_marker)
        })
        .unwrap_or_else(|| panic!("no <turn_aborted> marker: {input:#?}"));
    let now_at = input
        .iter()
        .position(|i| i["type"] == "message" && i["content"][0]["text"] == "what happened?")
        .expect("the new input");
    assert!(
        call_at < output_at && output_at < marker_at && marker_at < now_at,
        "history order: call {call_at}, output {output_at}, marker {marker_at}, input {now_at}"
    );
    assert!(
        !left.is_empty(),
        "the command was not running when the daemon was killed"
    );
}

/// Kill (by pid) every live process whose cwd is `dir` or below; returns their pids.
fn kill_processes_in(dir: &Path) -> Vec<u32> {
    let pids: Vec<u32> = crate::tools::processes_in(dir)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect();
    for pid in &pids {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    pids
}

/// A second connection resumes a loaded thread: it gets the live thread (no status change, no
/// second actor), and from then on both connections get the thread's turn events.
#[tokio::test]
async fn warm_resume_from_second_connection() {
    let mut p = Persist::start(Transport::Ws).await;
    p.push(answer("one", 10, 5));
    p.push(Reply::new().text("two"));
    let (thread, _) = p.thread_with_turn("three", "first").await;
    let live = read(&mut p.client, &thread, true).await;

    let mut other = p.second_client().await;
    let id = other
        .send_request("thread/resume", json!({"threadId": thread}))
        .await;
    let messages = read_through(&mut other, |m| m["method"] == "thread/tokenUsage/updated").await;
    let labels: Vec<String> = messages.iter().map(label).collect();
    assert_eq!(labels, ["response", "thread/tokenUsage/updated"]);
    assert_eq!(messages[0]["id"], id);
    let result = &messages[0]["result"];
    assert_eq!(result["thread"]["status"]["type"], "idle");
    assert_eq!(turns(&result["thread"]), turns(&live));
    // Nothing was broadcast: the thread never left memory.
    p.client.expect_no_message_within(QUIET_PERIOD).await;
    assert_eq!(loaded(&mut p.client).await, [thread.as_str()]);

    // A turn started by the first connection reaches both.
    let run = p.run_turn(&thread, "second").await;
    let seen = read_through_turn_completed(&mut other).await;
    for messages in [&run.messages, &seen] {
        let done = messages.last().expect("turn/completed");
        assert_eq!(done["params"]["turn"]["id"], run.turn_id.as_str());
        assert!(
            messages
                .iter()
                .any(|m| m["method"] == "item/completed" && m["params"]["item"]["text"] == "two"),
            "an item event is missing: {:?}",
            messages.iter().map(label).collect::<Vec<_>>()
        );
    }
    // And one started by the second connection too.
    let theirs = run_turn_on(&mut other, &thread, "third").await;
    let mine = read_through_turn_completed(&mut p.client).await;
    assert_eq!(
        mine.last().expect("turn/completed")["params"]["turn"]["id"],
        theirs.turn_id.as_str()
    );
    assert!(
        mine.iter()
            .any(|m| m["method"] == "item/completed" && m["params"]["item"]["text"] == "three")
    );

    // One actor: one history, one loaded entry.
    let requests = p.wait_for_requests(3).await;
    assert_eq!(
        conversation(&requests[2]),
        [
            user("first"),
            assistant("one"),
            user("second"),
            assistant("two"),
            user("third")
        ]
    );
    assert_eq!(loaded(&mut other).await, [thread.as_str()]);
    let again = ok(&mut other, "thread/resume", json!({"threadId": thread})).await;
    assert_eq!(turns(&again["thread"]).len(), 3);
    assert_eq!(loaded(&mut other).await, [thread]);
}

/// Weft writes the rollout when the thread starts, so a thread that never ran a turn can be
/// forked while loaded, and resumed and forked after a restart (the reference refuses both).
async fn fresh_thread_resume_and_fork(transport: Transport) {
    let mut p = Persist::start(transport).await;
    p.push(Reply::new().text("Hello back."));
    let thread = p.start_thread().await;
    let fresh = read(&mut p.client, &thread, false).await;
    let lines = rollout_lines(&path_of(&fresh));
    assert_eq!(lines.len(), 1, "a fresh rollout is its header: {lines:?}");

    let fork = ok(&mut p.client, "thread/fork", json!({"threadId": thread})).await;
    let warm_fork = str_at(&fork, "/thread/id");
    assert_ne!(warm_fork, thread);
    assert_eq!(fork["thread"]["forkedFromId"], thread.as_str());
    assert_eq!(fork["thread"]["turns"], json!([]));
    assert!(path_of(&fork["thread"]).is_file());
    p.client.wait_for_notification("thread/started").await;

    p.restart().await;

    let mut expected = vec![thread.clone(), warm_fork.clone()];
    expected.sort();
    let mut listed = ids(&list(&mut p.client, json!({})).await);
    listed.sort();
    assert_eq!(listed, expected);
    let cold_fork = ok(&mut p.client, "thread/fork", json!({"threadId": thread})).await;
    assert_eq!(cold_fork["thread"]["forkedFromId"], thread.as_str());
    assert_eq!(cold_fork["thread"]["turns"], json!([]));
    p.client.wait_for_notification("thread/started").await;
    let resumed = cold_resume(&mut p.client, &thread).await;
    assert_eq!(resumed["thread"]["turns"], json!([]));
    assert_eq!(resumed["thread"]["preview"], "");
    cold_resume(&mut p.client, &warm_fork).await;

    let run = p.run_turn(&thread, "hello").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(1).await;
    assert_eq!(conversation(&requests[0]), [user("hello")]);
}

/// Unknown ids get the reference's errors; malformed ids the UUID error.
async fn unknown_ids(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let no_rollout = format!("no rollout found for thread id {UNKNOWN_ID}");
    for method in ["thread/resume", "thread/fork", "thread/archive"] {
        let answer = p
            .client
            .request(method, json!({"threadId": UNKNOWN_ID}))
            .await;
        assert_error(answer, &no_rollout);
    }
    let answer = p.client.set_name(&UNKNOWN_ID, "x").await;
    assert_error(answer, &no_rollout);
    for include_turns in [false, true] {
        let answer = p.client.thread_read(&UNKNOWN_ID, &include_turns).await;
        assert_error(answer, &format!("thread not loaded: {UNKNOWN_ID}"));
    }
    let answer = p
        .client
        .request("thread/unarchive", json!({"threadId": UNKNOWN_ID}))
        .await;
    assert_error(
        answer,
        &format!("no archived rollout found for thread id {UNKNOWN_ID}"),
    );
    let status = ok(
        &mut p.client,
        "thread/unsubscribe",
        json!({"threadId": UNKNOWN_ID}),
    )
    .await;
    assert_eq!(status, json!({"status": "notLoaded"}));
    for method in [
        "thread/resume",
        "thread/fork",
        "thread/read",
        "thread/archive",
    ] {
        match p
            .client
            .request(method, json!({"threadId": "not-a-uuid"}))
            .await
        {
            Err(err) => assert!(
                err.code == super::INVALID_REQUEST
                    && err.message.starts_with("invalid thread id: "),
                "{method}: {err:?}"
            ),
            Ok(result) => panic!("{method} of a malformed id succeeded: {result}"),
        }
    }
    assert!(loaded(&mut p.client).await.is_empty());
    assert!(ids(&list(&mut p.client, json!({})).await).is_empty());
}

/// `thread/read` with every turn lists the finished ones, whole, whatever the thread holds:
/// none while its first turn runs, then that turn; after a restart (the thread keeps only its
/// last turn once resumed) and two more turns, all three, with their items.
async fn every_finished_turn_is_read_whole(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let gate = Gate::new();
    p.push(crate::turns::gated_message(
        "msg_1", "first ", &gate, "done",
    ));
    p.push(Reply::new().text("second done"));
    p.push(Reply::new().text("third done"));
    let thread = p.start_thread().await;
    let first = p.begin_held_turn(&thread, "one", &gate).await;
    assert!(turns(&read(&mut p.client, &thread, true).await).is_empty());
    gate.release();
    read_through_turn_completed(&mut p.client).await;
    let after_first = turns(&read(&mut p.client, &thread, true).await);
    assert_eq!(after_first.len(), 1);
    assert_eq!(after_first[0]["id"], first.as_str());

    p.restart().await;
    cold_resume(&mut p.client, &thread).await;
    let second = p.run_turn(&thread, "two").await.turn_id;
    let third = p.run_turn(&thread, "three").await.turn_id;
    let all = turns(&read(&mut p.client, &thread, true).await);
    let ids: Vec<&str> = all
        .iter()
        .map(|t| t["id"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(ids, [first.as_str(), second.as_str(), third.as_str()]);
    let answers: Vec<&Value> = all.iter().map(|t| &t["items"][1]["text"]).collect();
    assert_eq!(answers, ["first done", "second done", "third done"]);
    for turn in &all {
        assert_eq!(turn["itemsView"], "full", "{turn}");
        assert_eq!(item_types(turn), ["userMessage", "agentMessage"]);
    }
}

on_both_transports!(
    resume_after_graceful_restart,
    resume_after_kill_mid_turn,
    fresh_thread_resume_and_fork,
    unknown_ids,
    every_finished_turn_is_read_whole,
);

/// Two connections resume the same stored thread at the same moment: both get it, and it is
/// loaded once (never a second actor, never a spurious "locked" error).
#[tokio::test]
async fn concurrent_cold_resumes() {
    let mut p = Persist::start(Transport::Ws).await;
    p.push(Reply::new().text("stored"));
    let (thread, _) = p.thread_with_turn("again", "hello").await;
    p.restart().await;
    let mut other = p.second_client().await;
    let mine = p
        .client
        .send_request("thread/resume", json!({"threadId": thread}))
        .await;
    let theirs = other
        .send_request("thread/resume", json!({"threadId": thread}))
        .await;
    for (client, id) in [(&mut p.client, mine), (&mut other, theirs)] {
        match client.response_to(&id).await {
            Ok(result) => {
                assert_eq!(result["thread"]["id"], thread.as_str());
                assert_eq!(turns(&result["thread"]).len(), 1);
            }
            Err(err) => panic!("a concurrent thread/resume failed: {err:?}"),
        }
    }
    assert_eq!(loaded(&mut p.client).await, [thread.as_str()]);
    // Both joined the one live thread: both get its turn events.
    let run = p.run_turn(&thread, "both of you?").await;
    let seen = read_through_turn_completed(&mut other).await;
    assert_eq!(
        seen.last().expect("turn/completed")["params"]["turn"]["id"],
        run.turn_id.as_str()
    );
    assert!(
        seen.iter()
            .any(|m| m["method"] == "item/completed" && m["params"]["item"]["text"] == "again"),
        "the second connection missed the turn's items"
    );
}
