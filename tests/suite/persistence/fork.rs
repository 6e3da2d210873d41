//! `thread/fork` (docs/protocol.md §7.4, §11.5): of an idle thread (the reference `fork` scenario),
//! of a busy one (the copy ends with an interrupted turn, the source runs on), and ephemeral.

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply};
use weft_test_support::Transport;

use super::{
    Persist, answer, assert_error, assert_follow_up, assert_one_cut_turn,
    assert_one_environment_context, assistant, conversation, ids, is_marker, item_types, label,
    list, loaded, ok, path_of, read, read_through, read_through_turn_completed, rollout_files,
    rollout_lines, str_at, turns, user,
};
use crate::requests::Requests;
use crate::turns::gated_message;

/// Every `thread/list` source kind (so no filter hides a thread).
const ALL_KINDS: [&str; 6] = ["cli", "vscode", "exec", "appServer", "subAgent", "unknown"];

async fn fork_of_an_idle_thread(transport: Transport) {
    let mut p = Persist::start(transport).await;
    p.push(answer("Base thread answer: 7.", 100, 20));
    p.push(Reply::new().text("Forked thread answer."));
    let (source, _) = p
        .thread_with_turn("Original thread again.", "pick a number")
        .await;
    let source_view = read(&mut p.client, &source, true).await;

    // response → thread/tokenUsage/updated (replay, for the new thread) → thread/started.
    let id = p
        .client
        .send_request("thread/fork", json!({"threadId": source}))
        .await;
    let messages = read_through(&mut p.client, |m| m["method"] == "thread/started").await;
    let labels: Vec<String> = messages.iter().map(label).collect();
    assert_eq!(
        labels,
        ["response", "thread/tokenUsage/updated", "thread/started"],
        "fork order"
    );
    assert_eq!(messages[0]["id"], id);
    let forked = messages[0]["result"]["thread"].clone();
    let fork = str_at(&forked, "/id");
    assert_ne!(fork, source);
    assert_eq!(forked["forkedFromId"], source.as_str());
    assert_eq!(forked["preview"], "pick a number");
    assert_eq!(forked["ephemeral"], false);
    assert_eq!(forked["status"]["type"], "idle");
    assert_ne!(path_of(&forked), path_of(&source_view));
    assert!(path_of(&forked).is_file());
    assert_eq!(
        turns(&forked),
        turns(&source_view),
        "the fork's turns are not a copy of the source's"
    );
    assert_eq!(messages[1]["params"]["threadId"], fork.as_str());
    assert_eq!(
        messages[1]["params"]["tokenUsage"]["total"]["totalTokens"],
        120
    );
    let started = &messages[2]["params"]["thread"];
    assert_eq!(started["id"], fork.as_str());
    assert_eq!(started["forkedFromId"], source.as_str());
    assert_eq!(started["turns"], json!([]));

    // The fork continues from the copied history; the source does not see the fork's turn.
    let in_fork = p.run_turn(&fork, "in the fork: what number?").await;
    assert_eq!(in_fork.completed_turn()["status"], "completed");
    let in_source = p.run_turn(&source, "in the original: continue").await;
    assert_eq!(in_source.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(3).await;
    assert_follow_up(
        &requests[1],
        [
            "pick a number",
            "Base thread answer: 7.",
            "in the fork: what number?",
        ],
    );
    assert_follow_up(
        &requests[2],
        [
            "pick a number",
            "Base thread answer: 7.",
            "in the original: continue",
        ],
    );

    let listed = list(&mut p.client, json!({})).await;
    let mut found = ids(&listed);
    found.sort();
    let mut expected = vec![source.clone(), fork.clone()];
    expected.sort();
    assert_eq!(found, expected);
    let entry = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|t| t["id"] == fork.as_str())
        .expect("the fork is listed");
    assert_eq!(entry["forkedFromId"], source.as_str());
    assert_eq!(turns(&read(&mut p.client, &fork, true).await).len(), 2);
    assert_one_environment_context(&requests[1]);
}

/// Forking a thread in the middle of a turn: the copy's last turn is `interrupted` (with the
/// items completed so far and the marker in its history); the source's turn goes on and
/// completes normally.
async fn fork_of_a_busy_thread(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let gate = Gate::new();
    p.push(gated_message("msg_busy", "half ", &gate, "and the rest"));
    p.push(Reply::new().text("Fork answer."));
    p.push(Reply::new().text("Source answer."));
    let source = p.start_thread().await;
    let turn = p
        .begin_held_turn(&source, "start something long", &gate)
        .await;

    let forked =
        ok(&mut p.client, "thread/fork", json!({"threadId": source})).await["thread"].clone();
    let fork = str_at(&forked, "/id");
    assert_eq!(forked["forkedFromId"], source.as_str());
    assert_eq!(forked["status"]["type"], "idle");
    let copied = assert_one_cut_turn(&forked, &turn);
    assert_eq!(item_types(&copied), ["userMessage"]);
    p.client
        .wait_for("the fork's thread/started", |m| {
            m["method"] == "thread/started" && m["params"]["thread"]["id"] == fork.as_str()
        })
        .await;

    // The source keeps running and finishes normally.
    gate.release();
    let rest = read_through_turn_completed(&mut p.client).await;
    let done = &rest.last().expect("turn/completed")["params"];
    assert_eq!(done["threadId"], source.as_str());
    assert_eq!(done["turn"]["id"], turn.as_str());
    assert_eq!(done["turn"]["status"], "completed");
    assert_eq!(loaded(&mut p.client).await.len(), 2);

    let in_fork = p.run_turn(&fork, "and in the fork?").await;
    assert_eq!(in_fork.completed_turn()["status"], "completed");
    let in_source = p.run_turn(&source, "and in the source?").await;
    assert_eq!(in_source.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(3).await;
    let fork_talk = conversation(&requests[1]);
    assert_eq!(fork_talk.len(), 3, "{fork_talk:#?}");
    assert_eq!(fork_talk[0], user("start something long"));
    assert!(
        is_marker(&fork_talk[1].1),
        "no marker in the fork: {fork_talk:#?}"
    );
    assert_eq!(fork_talk[2], user("and in the fork?"));
    assert_eq!(
        conversation(&requests[2]),
        [
            user("start something long"),
            assistant("half and the rest"),
            user("and in the source?")
        ],
        "the source's history changed"
    );
    let source_turns = turns(&read(&mut p.client, &source, true).await);
    assert_eq!(source_turns[0]["status"], "completed");
    let fork_turns = turns(&read(&mut p.client, &fork, true).await);
    let statuses: Vec<&Value> = fork_turns.iter().map(|t| &t["status"]).collect();
    assert_eq!(statuses, [&json!("interrupted"), &json!("completed")]);
    rollout_lines(&path_of(&forked));
}

/// `thread/fork {ephemeral: true}`: in memory only (`path: null`), never listed, readable and
/// usable while loaded; resume/fork/archive refuse it and name/set has its own error (§11.5).
async fn ephemeral_fork(transport: Transport) {
    let mut p = Persist::start(transport).await;
    p.push(Reply::new().text("Base."));
    let (source, _) = p.thread_with_turn("Ephemeral answer.", "remember 7").await;

    let forked = ok(
        &mut p.client,
        "thread/fork",
        json!({"threadId": source, "ephemeral": true}),
    )
    .await["thread"]
        .clone();
    let fork = str_at(&forked, "/id");
    assert_eq!(forked["ephemeral"], true);
    assert_eq!(forked["path"], Value::Null);
    assert_eq!(forked["forkedFromId"], source.as_str());
    assert_eq!(turns(&forked).len(), 1);
    p.client
        .wait_for("the fork's thread/started", |m| {
            m["method"] == "thread/started" && m["params"]["thread"]["id"] == fork.as_str()
        })
        .await;

    assert_eq!(
        ids(&list(&mut p.client, json!({})).await),
        [source.as_str()]
    );
    assert_eq!(
        ids(&list(&mut p.client, json!({"sourceKinds": ALL_KINDS})).await),
        [source.as_str()]
    );
    let view = read(&mut p.client, &fork, true).await;
    assert_eq!(view["ephemeral"], true);
    assert_eq!(view["path"], Value::Null);
    assert_eq!(view["status"]["type"], "idle");
    assert_eq!(turns(&view).len(), 1);
    assert!(loaded(&mut p.client).await.contains(&fork));

    let run = p.run_turn(&fork, "and now?").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(2).await;
    assert_follow_up(&requests[1], ["remember 7", "Base.", "and now?"]);

    let answer = p.client.set_name(&fork, "x").await;
    assert_error(
        answer,
        &format!("ephemeral thread does not support metadata updates: {fork}"),
    );
    for method in ["thread/resume", "thread/fork", "thread/archive"] {
        let answer = p.client.request(method, json!({"threadId": fork})).await;
        assert_error(answer, &format!("no rollout found for thread id {fork}"));
    }
    let on_disk: Vec<_> = rollout_files(p.home.path())
        .into_iter()
        .filter(|path| path.display().to_string().contains(&fork))
        .collect();
    assert!(
        on_disk.is_empty(),
        "an ephemeral fork was written: {on_disk:?}"
    );

    p.restart().await;
    let answer = p
        .client
        .request("thread/read", json!({"threadId": fork}))
        .await;
    assert_error(answer, &format!("thread not loaded: {fork}"));
    assert_eq!(ids(&list(&mut p.client, json!({})).await), [source]);
}

on_both_transports!(
    fork_of_an_idle_thread,
    fork_of_a_busy_thread,
    ephemeral_fork
);
