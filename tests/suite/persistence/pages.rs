//! Paginated history (docs/protocol.md §7.24): `thread/start {historyMode: "paginated"}`,
//! `thread/turns/list` and `thread/items/list` paged both ways with the cursors they return,
//! their errors, and the TUI's `codex resume` sequence after a restart (`thread/resume
//! {excludeTurns: true}`, then the two lists from the resume's backwards cursors).

use serde_json::{Value, json};
use weft_mock_model::{Gate, MockModel, Reply};
use weft_test_support::{Client, Daemon, RpcError, TestHome, Transport, mock_model_config};

use super::{Persist, data, ok, read_through, run_turn_on, strings_at};
use crate::turns::wait_gate;

/// `thread/turns/list` with these params (it must succeed).
async fn turns_page(client: &mut Client, params: Value) -> Value {
    ok(client, "thread/turns/list", params).await
}

/// `thread/items/list` with these params (it must succeed).
async fn items_page(client: &mut Client, params: Value) -> Value {
    ok(client, "thread/items/list", params).await
}

/// Start a daemon on `home` whose first connection initializes with `experimentalApi`.
async fn launch_experimental(transport: Transport, home: &TestHome) -> (Daemon, Client) {
    let mut daemon = Daemon::start(transport, home, &[]).await;
    let mut client = daemon.client().await;
    client.initialize_experimental().await;
    (daemon, client)
}

async fn start_experimental(transport: Transport) -> Persist {
    let mock = MockModel::start().await.expect("start the mock model");
    let home = TestHome::with_config(&mock_model_config(&mock.base_url(), "responses"));
    let connection = launch_experimental(transport, &home).await;
    Persist::on(mock, home, transport, connection)
}

/// A new daemon on `p`'s home (the old one stopped), its first client experimental.
async fn start_experimental_again(p: &mut Persist) {
    let (daemon, client) = launch_experimental(p.transport, &p.home).await;
    p.daemon = daemon;
    p.client = client;
}

/// `method` with `params`, which must fail: the error.
async fn refused(client: &mut Client, method: &str, params: Value) -> RpcError {
    match client.request(method, params).await {
        Ok(result) => panic!("expected {method} to fail, got {result}"),
        Err(err) => err,
    }
}

fn turn_ids(page: &Value) -> Vec<String> {
    strings_at(data(page), "id")
}

/// The texts of a `thread/items/list` page (user message or agent message text).
fn item_texts(page: &Value) -> Vec<String> {
    data(page)
        .iter()
        .map(|e| {
            let item = &e["item"];
            item["text"]
                .as_str()
                .or_else(|| item["content"][0]["text"].as_str())
                .unwrap_or("?")
                .to_owned()
        })
        .collect()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

async fn paginated_history(transport: Transport) {
    let mut p = start_experimental(transport).await;
    let cwd = p.cwd();
    let started = ok(
        &mut p.client,
        "thread/start",
        json!({"cwd": cwd.clone(), "approvalPolicy": "never", "historyMode": "paginated"}),
    )
    .await;
    assert_eq!(started["thread"]["historyMode"], "paginated");
    let thread = started["thread"]["id"].as_str().unwrap().to_owned();

    // Before the first user message (the TUI asks at start-up).
    let params = json!({"threadId": thread, "limit": 1});
    let e = refused(&mut p.client, "thread/turns/list", params).await;
    assert_eq!(e.code, -32600);
    assert_eq!(
        e.message,
        format!(
            "thread {thread} is not materialized yet; thread/turns/list is unavailable before first user message"
        )
    );
    let e = refused(
        &mut p.client,
        "thread/items/list",
        json!({"threadId": thread}),
    )
    .await;
    assert_eq!(
        (e.code, e.message.as_str()),
        (-32601, "thread/items/list is not supported yet")
    );

    let mut turns = Vec::new();
    for i in 0..3 {
        p.push(Reply::new().text(format!("answer {i}")));
        let run = run_turn_on(&mut p.client, &thread, &format!("question {i}")).await;
        turns.push(run.turn_id);
    }

    // Turns, newest first by default, summaries by default.
    let page = turns_page(&mut p.client, json!({"threadId": thread, "limit": 2})).await;
    assert_eq!(turn_ids(&page), [turns[2].clone(), turns[1].clone()]);
    assert_eq!(page["data"][0]["itemsView"], "summary");
    assert_eq!(page["data"][0]["status"], "completed");
    let summary: Vec<&str> = page["data"][0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(summary, ["userMessage", "agentMessage"]);
    let next = page["nextCursor"]
        .as_str()
        .expect("a next cursor")
        .to_owned();
    let back = page["backwardsCursor"]
        .as_str()
        .expect("a backwards cursor")
        .to_owned();
    let rest = turns_page(
        &mut p.client,
        json!({"threadId": thread, "limit": 2, "cursor": next, "itemsView": "notLoaded"}),
    )
    .await;
    assert_eq!(turn_ids(&rest), [turns[0].clone()]);
    assert_eq!(rest["nextCursor"], Value::Null);
    assert_eq!(rest["data"][0]["items"], json!([]));
    assert_eq!(rest["data"][0]["itemsView"], "notLoaded");
    // The backwards cursor, ascending, includes its anchor again.
    let again = turns_page(
        &mut p.client,
        json!({"threadId": thread, "cursor": back, "sortDirection": "asc", "itemsView": "full"}),
    )
    .await;
    assert_eq!(turn_ids(&again), [turns[2].clone()]);
    assert_eq!(again["data"][0]["itemsView"], "full");
    let asc = turns_page(
        &mut p.client,
        json!({"threadId": thread, "sortDirection": "asc", "limit": 0}),
    )
    .await;
    assert_eq!(
        turn_ids(&asc),
        [turns[0].clone()],
        "limit 0 is a page of one"
    );

    // Items, oldest first by default, across turns.
    let page = items_page(&mut p.client, json!({"threadId": thread, "limit": 4})).await;
    assert_eq!(
        item_texts(&page),
        strs(&["question 0", "answer 0", "question 1", "answer 1"])
    );
    assert_eq!(page["data"][0]["turnId"], turns[0].as_str());
    assert!(page["data"][0]["startedAtMs"].is_i64());
    let next = page["nextCursor"].as_str().unwrap().to_owned();
    let rest = items_page(
        &mut p.client,
        json!({"threadId": thread, "limit": 4, "cursor": next}),
    )
    .await;
    assert_eq!(item_texts(&rest), strs(&["question 2", "answer 2"]));
    assert_eq!(rest["nextCursor"], Value::Null);
    let back = rest["backwardsCursor"].as_str().unwrap().to_owned();
    let down = items_page(
        &mut p.client,
        json!({"threadId": thread, "limit": 3, "cursor": back, "sortDirection": "desc"}),
    )
    .await;
    assert_eq!(
        item_texts(&down),
        strs(&["question 2", "answer 1", "question 1"])
    );

    // One turn's items, and an item anchor in it.
    let one = items_page(
        &mut p.client,
        json!({"threadId": thread, "turnId": turns[1]}),
    )
    .await;
    assert_eq!(item_texts(&one), strs(&["question 1", "answer 1"]));
    let first_id = one["data"][0]["item"]["id"].as_str().unwrap().to_owned();
    let after = items_page(&mut p.client, json!({"threadId": thread, "turnId": turns[1], "cursor": {"type": "item", "itemId": first_id}}))
    .await;
    assert_eq!(item_texts(&after), strs(&["answer 1"]));
    let none = items_page(
        &mut p.client,
        json!({"threadId": thread, "turnId": "0190f5a4-1b2c-7d3e-8f40-123456789abc"}),
    )
    .await;
    assert_eq!(
        none,
        json!({"data": [], "nextCursor": null, "backwardsCursor": null})
    );

    // Errors.
    let refusals = [
        (
            "thread/items/list",
            json!({"threadId": thread, "cursor": {"type": "item", "itemId": first_id}}),
            (-32602, "turnId is required when cursor is an item anchor"),
        ),
        (
            "thread/items/list",
            json!({"threadId": thread, "turnId": turns[1],
                   "cursor": {"type": "item", "itemId": "nope"}}),
            (
                -32602,
                "cursor.itemId does not identify an item in the requested history scope",
            ),
        ),
        (
            "thread/turns/list",
            json!({"threadId": thread, "cursor": "garbage"}),
            (-32600, "invalid cursor: garbage"),
        ),
    ];
    for (method, params, expected) in refusals {
        let e = refused(&mut p.client, method, params).await;
        assert_eq!((e.code, e.message.as_str()), expected, "{method}");
    }
    // An items cursor is not a turns cursor.
    let params = json!({"threadId": thread, "cursor": back});
    let e = refused(&mut p.client, "thread/turns/list", params).await;
    assert_eq!(e.message, format!("invalid cursor: {back}"));

    // Another thread's cursor is refused.
    p.push(Reply::new().text("other answer"));
    let other = p
        .start_thread_with(json!({"cwd": cwd, "approvalPolicy": "never"}))
        .await;
    run_turn_on(&mut p.client, &other, "other question").await;
    let foreign = turns_page(&mut p.client, json!({"threadId": other})).await;
    let foreign = foreign["backwardsCursor"].as_str().unwrap().to_owned();
    let params = json!({"threadId": thread, "cursor": foreign});
    let e = refused(&mut p.client, "thread/turns/list", params).await;
    assert_eq!(
        (e.code, e.message),
        (-32600, format!("invalid cursor: {foreign}"))
    );

    // `codex resume --last`: after a restart, resume without turns, then page back.
    p.stop().await;
    start_experimental_again(&mut p).await;
    let unloaded = turns_page(
        &mut p.client,
        json!({"threadId": thread, "limit": 1, "itemsView": "notLoaded"}),
    )
    .await;
    assert_eq!(
        turn_ids(&unloaded),
        [turns[2].clone()],
        "an unloaded thread is paged too"
    );
    let resumed = ok(
        &mut p.client,
        "thread/resume",
        json!({"threadId": thread, "excludeTurns": true, "initialTurnsPage": null}),
    )
    .await;
    assert_eq!(resumed["thread"]["turns"], json!([]));
    assert_eq!(resumed["initialTurnsPage"], Value::Null);
    let turns_cursor = resumed["turnsBackwardsCursor"].as_str().unwrap().to_owned();
    let items_cursor = resumed["itemsBackwardsCursor"].as_str().unwrap().to_owned();
    let page = turns_page(&mut p.client, json!({"threadId": thread, "cursor": turns_cursor, "limit": 5, "sortDirection": "desc", "itemsView": "notLoaded"}))
    .await;
    assert_eq!(
        turn_ids(&page),
        [turns[2].clone(), turns[1].clone(), turns[0].clone()]
    );
    assert_eq!(page["nextCursor"], Value::Null);
    assert_eq!(
        page["backwardsCursor"].as_str(),
        Some(turns_cursor.as_str())
    );
    let page = items_page(&mut p.client, json!({"threadId": thread, "turnId": null, "cursor": items_cursor, "limit": 100, "sortDirection": "desc"}))
    .await;
    assert_eq!(
        item_texts(&page),
        strs(&[
            "answer 2",
            "question 2",
            "answer 1",
            "question 1",
            "answer 0",
            "question 0"
        ])
    );
    assert_eq!(
        page["backwardsCursor"].as_str(),
        Some(items_cursor.as_str())
    );

    // The page can come with the resume itself.
    let warm = ok(
        &mut p.client,
        "thread/resume",
        json!({"threadId": thread, "excludeTurns": true, "initialTurnsPage": {"limit": 2, "itemsView": "notLoaded"}}),
    )
    .await;
    let initial = &warm["initialTurnsPage"];
    assert_eq!(turn_ids(initial), [turns[2].clone(), turns[1].clone()]);
    assert!(initial["nextCursor"].is_string());
}

/// A running turn is `inProgress` with the items completed so far; after `kill -9` the same
/// turn is `interrupted`, unloaded and once resumed, and the next turn pages in front of it.
async fn running_and_cut_turns(transport: Transport) {
    let mut p = start_experimental(transport).await;
    let gate = Gate::new();
    p.push(Reply::new().text("first part done").gate(&gate));
    let cwd = p.cwd();
    let paginated = json!({"cwd": cwd, "approvalPolicy": "never", "historyMode": "paginated"});
    let thread = p.start_thread_with(paginated).await;
    let turn = p.begin_turn(&thread, "remember 42").await;
    read_through(&mut p.client, |m| {
        m["method"] == "item/completed" && m["params"]["item"]["text"] == "first part done"
    })
    .await;
    wait_gate(&gate).await;

    let page = turns_page(&mut p.client, json!({"threadId": thread, "limit": 1})).await;
    let running = &page["data"][0];
    assert_eq!(running["id"], turn.as_str());
    assert_eq!(running["status"], "inProgress");
    assert_eq!(running["completedAt"], Value::Null);
    assert_eq!(running["items"][0]["content"][0]["text"], "remember 42");
    assert_eq!(running["items"][1]["text"], "first part done");
    let items = items_page(
        &mut p.client,
        json!({"threadId": thread, "sortDirection": "desc", "limit": 1}),
    )
    .await;
    assert_eq!(items["data"][0]["item"]["text"], "first part done");
    assert!(items["nextCursor"].is_string());

    p.kill().await;
    start_experimental_again(&mut p).await;
    let page = turns_page(
        &mut p.client,
        json!({"threadId": thread, "itemsView": "full"}),
    )
    .await;
    assert_eq!(page["data"][0]["status"], "interrupted");
    assert!(page["data"][0]["completedAt"].is_i64());
    assert_eq!(page["data"][0]["items"].as_array().map(Vec::len), Some(2));
    let resumed = ok(
        &mut p.client,
        "thread/resume",
        json!({"threadId": thread, "excludeTurns": true}),
    )
    .await;
    let cursor = resumed["turnsBackwardsCursor"].as_str().unwrap().to_owned();
    let page = turns_page(
        &mut p.client,
        json!({"threadId": thread, "cursor": cursor, "sortDirection": "desc"}),
    )
    .await;
    assert_eq!(turn_ids(&page), std::slice::from_ref(&turn));
    assert_eq!(
        page["data"][0]["status"], "interrupted",
        "loaded and idle: still cut"
    );

    p.push(Reply::new().text("Recovered."));
    let next = run_turn_on(&mut p.client, &thread, "what happened?").await;
    let page = turns_page(
        &mut p.client,
        json!({"threadId": thread, "itemsView": "notLoaded"}),
    )
    .await;
    assert_eq!(turn_ids(&page), [next.turn_id, turn]);
    assert_eq!(page["data"][0]["status"], "completed");
    assert_eq!(page["data"][1]["status"], "interrupted");
}

/// A thread whose rollout passes 1 MiB keeps its history index on disk when it closes
/// (docs/architecture.md §10.3): the next daemon resumes it from the index's tail (its last 25
/// turns), pages past those from the whole index, and `thread/delete` takes both files with
/// the rollout.
async fn long_thread_paged_from_its_on_disk_index(transport: Transport) {
    let mut p = start_experimental(transport).await;
    let cwd = p.cwd();
    let started = ok(
        &mut p.client,
        "thread/start",
        json!({"cwd": cwd, "approvalPolicy": "never"}),
    )
    .await;
    let thread = started["thread"]["id"].as_str().unwrap().to_owned();
    // More turns than the tail keeps; the one that takes the file past 1 MiB comes late, so
    // that few model requests carry it.
    let big = "x".repeat(1 << 20);
    let answer = |i: usize| {
        if i == 34 {
            big.clone()
        } else {
            format!("answer {i}")
        }
    };
    let mut turns = Vec::new();
    for i in 0..36 {
        p.push(Reply::new().text(answer(i)));
        turns.push(
            run_turn_on(&mut p.client, &thread, &format!("question {i}"))
                .await
                .turn_id,
        );
    }
    p.stop().await;

    let rollout = super::rollout_files(p.home.path())
        .into_iter()
        .find(|f| f.to_string_lossy().contains(&thread))
        .expect("the thread's rollout");
    let name = rollout.file_name().unwrap().to_string_lossy().into_owned();
    let sidecar = p
        .home
        .path()
        .join("rollout-index")
        .join(format!("{name}.idx"));
    let tail = sidecar.with_file_name(format!("{name}.idx.tail"));
    for file in [&sidecar, &tail] {
        assert!(file.is_file(), "no on-disk index at {}", file.display());
    }

    start_experimental_again(&mut p).await;
    let resumed = ok(
        &mut p.client,
        "thread/resume",
        json!({"threadId": thread, "excludeTurns": true, "initialTurnsPage": {"limit": 5, "itemsView": "notLoaded"}}),
    )
    .await;
    let newest: Vec<String> = turns.iter().rev().take(5).cloned().collect();
    assert_eq!(turn_ids(&resumed["initialTurnsPage"]), newest);
    // The rest, newest first: past the turns the tail holds.
    let rest = turns_page(
        &mut p.client,
        json!({"threadId": thread, "cursor": resumed["initialTurnsPage"]["nextCursor"], "limit": 100, "itemsView": "notLoaded"}),
    )
    .await;
    let older: Vec<String> = turns.iter().rev().skip(5).cloned().collect();
    assert_eq!(turn_ids(&rest), older);
    assert!(rest["nextCursor"].is_null());
    let oldest = turns_page(
        &mut p.client,
        json!({"threadId": thread, "limit": 2, "sortDirection": "asc", "itemsView": "notLoaded"}),
    )
    .await;
    assert_eq!(turn_ids(&oldest), turns[..2]);
    let first_items = items_page(
        &mut p.client,
        json!({"threadId": thread, "limit": 4, "sortDirection": "asc"}),
    )
    .await;
    assert_eq!(
        item_texts(&first_items),
        strs(&["question 0", "answer 0", "question 1", "answer 1"])
    );
    let items_cursor = resumed["itemsBackwardsCursor"].as_str().unwrap().to_owned();
    let last_items = items_page(
        &mut p.client,
        json!({"threadId": thread, "cursor": items_cursor, "limit": 4, "sortDirection": "desc"}),
    )
    .await;
    assert_eq!(
        item_texts(&last_items),
        strs(&["answer 35", "question 35", &big, "question 34"])
    );

    ok(&mut p.client, "thread/delete", json!({"threadId": thread})).await;
    for file in [&sidecar, &tail] {
        assert!(!file.exists(), "thread/delete left {}", file.display());
    }
}

on_both_transports!(
    paginated_history,
    running_and_cut_turns,
    long_thread_paged_from_its_on_disk_index
);
