//! Thread sections (docs/protocol.md §7.36): the built-in `Pinned`, create / update / delete,
//! moves with `thread/section/changed`, a thread's section where `thread/read` and
//! `thread/list` show it, the section filter and order of `thread/list`, a restart; the
//! refusals with the reference's codes and texts.

use serde_json::{Value, json};
use weft_test_support::{Client, QUIET_PERIOD, Transport};

use super::{INVALID_PARAMS, assert_code, send_through, thread_of};
use crate::persistence::{INVALID_REQUEST, Persist, UNKNOWN_ID, ids, list, ok, read};

const PINNED: &str = "01984de2-8f74-7c91-a3b2-5c5e937cf318";

fn moved(thread: &str, section: Option<&str>, before: Option<&str>) -> Value {
    let mut params = json!({"threadId": thread, "sectionId": section});
    if let Some(before) = before {
        params["beforeThreadId"] = json!(before);
    }
    params
}

/// `thread/section/move`: the response, then `thread/section/changed` (checked).
async fn move_to(client: &mut Client, thread: &str, section: Option<&str>, before: Option<&str>) {
    let (id, messages) = send_through(
        client,
        "thread/section/move",
        moved(thread, section, before),
        |m| m["method"] == "thread/section/changed",
    )
    .await;
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["id"], id);
    assert_eq!(messages[0]["result"], json!({}));
    assert_eq!(
        messages[1]["params"],
        json!({"threadId": thread, "sectionId": section})
    );
}

async fn sections_of(client: &mut Client, params: Value) -> Vec<String> {
    ids(&ok(client, "threadSection/list", params).await)
}

async fn lifecycle_and_moves(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let mut other = p.other_client().await;
    let (a, b, c) = (
        p.start_thread().await,
        p.start_thread().await,
        p.start_thread().await,
    );
    assert_eq!(
        ok(&mut p.client, "threadSection/list", json!({})).await,
        json!({"data": [{"id": PINNED, "name": "Pinned", "appearance": null}], "nextCursor": null})
    );
    let work = ok(
        &mut p.client,
        "threadSection/create",
        json!({"name": "  Work  ", "appearance": {"color": "red"}}),
    )
    .await["section"]
        .clone();
    assert_eq!(work["name"], "Work");
    assert_eq!(work["appearance"], json!({"color": "red", "icon": null}));
    let work_id = work["id"].as_str().unwrap().to_string();
    let play = ok(
        &mut p.client,
        "threadSection/create",
        json!({"name": "Play"}),
    )
    .await["section"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Pages in order, the cursor the last id.
    let first = ok(&mut p.client, "threadSection/list", json!({"limit": 2})).await;
    assert_eq!(ids(&first), [PINNED, work_id.as_str()]);
    assert_eq!(first["nextCursor"], work_id.as_str());
    let rest = sections_of(&mut p.client, json!({"cursor": work_id})).await;
    assert_eq!(rest, [play.as_str()]);

    // a, then b, then c before a: c, a, b.
    move_to(&mut p.client, &a, Some(&work_id), None).await;
    move_to(&mut p.client, &b, Some(&work_id), None).await;
    move_to(&mut p.client, &c, Some(&work_id), Some(&a)).await;
    if let Some(other) = other.as_mut() {
        let seen = other.wait_for_notification("thread/section/changed").await;
        assert_eq!(thread_of(&seen), a, "thread/section/changed is broadcast");
    }
    let positioned = json!({"sectionId": work_id, "sortKey": "section_position"});
    assert_eq!(
        ids(&list(&mut p.client, positioned.clone()).await),
        [c.as_str(), a.as_str(), b.as_str()]
    );
    let mut asc = positioned.clone();
    asc["sortDirection"] = json!("asc");
    assert_eq!(
        ids(&list(&mut p.client, asc).await),
        [c.as_str(), a.as_str(), b.as_str()]
    );
    let mut paged = positioned.clone();
    paged["limit"] = json!(2);
    let page = list(&mut p.client, paged.clone()).await;
    assert_eq!(ids(&page), [c.as_str(), a.as_str()]);
    paged["cursor"] = page["nextCursor"].clone();
    assert_eq!(ids(&list(&mut p.client, paged).await), [b.as_str()]);

    let thread = read(&mut p.client, &a, false).await;
    assert_eq!(thread["section"]["id"], work_id.as_str());
    assert_eq!(thread["section"]["name"], "Work");
    let entered = thread["sectionEnteredAt"]
        .as_i64()
        .expect("sectionEnteredAt");
    // Renamed: every member shows the new name.
    let renamed = ok(
        &mut p.client,
        "threadSection/update",
        json!({"sectionId": work_id, "name": "Projects", "appearance": null}),
    )
    .await;
    assert_eq!(
        renamed["section"],
        json!({"id": work_id, "name": "Projects", "appearance": null})
    );
    let listed = list(&mut p.client, json!({"sectionId": work_id})).await;
    assert!(
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["section"]["name"] == "Projects")
    );
    // Out of its section; the unsectioned filter.
    move_to(&mut p.client, &b, None, None).await;
    assert_eq!(
        ids(&list(&mut p.client, json!({"sectionId": null})).await),
        [b.as_str()]
    );
    assert_eq!(read(&mut p.client, &b, false).await["section"], Value::Null);
    // Moving within its section keeps the time it entered.
    move_to(&mut p.client, &a, Some(&work_id), Some(&c)).await;
    assert_eq!(
        read(&mut p.client, &a, false).await["sectionEnteredAt"],
        entered
    );
    p.client.expect_no_message_within(QUIET_PERIOD).await;

    // Kept across a restart.
    p.restart().await;
    assert_eq!(
        sections_of(&mut p.client, json!({})).await,
        [PINNED, work_id.as_str(), play.as_str()]
    );
    let positioned = json!({"sectionId": work_id, "sortKey": "section_position"});
    assert_eq!(
        ids(&list(&mut p.client, positioned).await),
        [a.as_str(), c.as_str()]
    );
    // Deleted: its threads are unsectioned, with no notification.
    assert_eq!(
        ok(
            &mut p.client,
            "threadSection/delete",
            json!({"sectionId": work_id})
        )
        .await,
        json!({})
    );
    p.client.expect_no_message_within(QUIET_PERIOD).await;
    assert_eq!(read(&mut p.client, &a, false).await["section"], Value::Null);
    assert_eq!(
        read(&mut p.client, &a, false).await["sectionEnteredAt"],
        Value::Null
    );
    // The built-in section takes threads too.
    move_to(&mut p.client, &a, Some(PINNED), None).await;
    assert_eq!(
        read(&mut p.client, &a, false).await["section"]["name"],
        "Pinned"
    );
    // And thread/resume shows it.
    let resumed = ok(&mut p.client, "thread/resume", json!({"threadId": a})).await;
    assert_eq!(resumed["thread"]["section"]["id"], PINNED);
}

async fn refusals(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let thread = p.start_thread().await;
    let section = ok(&mut p.client, "threadSection/create", json!({"name": "S"})).await["section"]
        ["id"]
        .as_str()
        .unwrap()
        .to_string();
    let long = "x".repeat(65);
    let crud = [
        (
            "threadSection/create",
            json!({"name": " "}),
            "section name must not be empty".to_string(),
        ),
        (
            "threadSection/create",
            json!({"name": "n", "appearance": {"icon": long}}),
            "section appearance icon must not exceed 64 bytes".to_string(),
        ),
        (
            "threadSection/update",
            json!({"sectionId": " ", "name": "n"}),
            "sectionId must not be empty".to_string(),
        ),
        (
            "threadSection/update",
            json!({"sectionId": PINNED, "name": "n"}),
            "the built-in pinned section cannot be renamed".to_string(),
        ),
        (
            "threadSection/update",
            json!({"sectionId": UNKNOWN_ID, "name": "n"}),
            format!("thread section not found: {UNKNOWN_ID}"),
        ),
        (
            "threadSection/delete",
            json!({"sectionId": PINNED}),
            "the built-in pinned section cannot be deleted".to_string(),
        ),
        (
            "threadSection/delete",
            json!({"sectionId": UNKNOWN_ID}),
            format!("thread section not found: {UNKNOWN_ID}"),
        ),
    ];
    for (method, params, message) in crud {
        let answer = p.client.request(method, params).await;
        assert_code(answer, INVALID_PARAMS, &message);
    }
    let ephemeral = p.start_thread_with(json!({"ephemeral": true})).await;
    let other = p.start_thread().await;
    let moves = [
        (
            moved(UNKNOWN_ID, Some(&section), None),
            format!("thread not found: {UNKNOWN_ID}"),
        ),
        (
            moved(&ephemeral, Some(&section), None),
            format!("ephemeral thread does not support section moves: {ephemeral}"),
        ),
        (
            moved(&thread, Some(" "), None),
            "sectionId must not be empty".to_string(),
        ),
        (
            moved(&thread, None, Some(&other)),
            "beforeThreadId requires a non-null sectionId".to_string(),
        ),
        (
            moved(&thread, Some(&section), Some(&thread)),
            format!("thread {thread} cannot be moved before itself"),
        ),
        (
            moved(&thread, Some(UNKNOWN_ID), None),
            format!("section {UNKNOWN_ID} does not exist"),
        ),
        (
            moved(&thread, Some(&section), Some(&other)),
            format!("before thread {other} is not in section {section}"),
        ),
    ];
    for (params, message) in moves {
        let answer = p.client.request("thread/section/move", params).await;
        assert_code(answer, INVALID_REQUEST, &message);
    }
    let answer = p
        .client
        .request(
            "thread/list",
            json!({"sortKey": "section_position", "sectionId": null}),
        )
        .await;
    assert_code(
        answer,
        INVALID_REQUEST,
        "section-position sorting requires a section filter",
    );
    assert_eq!(
        read(&mut p.client, &thread, false).await["section"],
        Value::Null
    );
}

on_both_transports!(lifecycle_and_moves, refusals);
