//! `thread/search` (experimental): stored threads found by name, by preview and by what was
//! said in them, with snippets, pages, and the reference's errors.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::experimental;
use crate::turns::{Harness, INVALID_REQUEST};

fn found_ids(answer: &Value) -> Vec<String> {
    answer["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data: {answer}"))
        .iter()
        .map(|r| r["thread"]["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn search(h: &mut Harness, params: Value) -> Value {
    h.client.request_ok("thread/search", params).await
}

async fn threads_are_found_by_name_and_by_content(transport: Transport) {
    let mut h = experimental(transport, "").await;
    h.push(Reply::new().text("The quokka lives on Rottnest Island."));
    let animals = h.start_thread().await;
    h.run_turn(&animals, "tell me about marsupials").await;
    h.push(Reply::new().text("Done."));
    let build = h.start_thread().await;
    h.run_turn(&build, "fix the build").await;
    h.client
        .request_ok(
            "thread/name/set",
            json!({"threadId": build, "name": "Parser refactor"}),
        )
        .await;

    // By name, case ignored; the snippet is the name.
    let answer = search(&mut h, json!({"searchTerm": "parser"})).await;
    assert_eq!(found_ids(&answer), [build.as_str()]);
    assert_eq!(answer["data"][0]["snippet"], "Parser refactor");
    assert_eq!(answer["data"][0]["thread"]["name"], "Parser refactor");
    assert_eq!(answer["nextCursor"], Value::Null);
    // By preview (the first message).
    let answer = search(&mut h, json!({"searchTerm": "marsupials"})).await;
    assert_eq!(found_ids(&answer), [animals.as_str()]);
    // By content: the agent's answer is in the rollout only.
    let answer = search(&mut h, json!({"searchTerm": "  QUOKKA  "})).await;
    assert_eq!(found_ids(&answer), [animals.as_str()]);
    assert_eq!(
        answer["data"][0]["snippet"],
        "The quokka lives on Rottnest Island."
    );
    assert_eq!(
        search(&mut h, json!({"searchTerm": "wombat"})).await,
        json!({"data": [], "nextCursor": null, "backwardsCursor": null})
    );

    // Newest first by default; pages of one follow the cursor.
    let both = search(&mut h, json!({"searchTerm": "t"})).await;
    assert_eq!(found_ids(&both), [build.as_str(), animals.as_str()]);
    let first = search(&mut h, json!({"searchTerm": "t", "limit": 1})).await;
    assert_eq!(found_ids(&first), [build.as_str()]);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let second = search(
        &mut h,
        json!({"searchTerm": "t", "limit": 1, "cursor": cursor}),
    )
    .await;
    assert_eq!(found_ids(&second), [animals.as_str()]);
    assert_eq!(second["nextCursor"], Value::Null);
    let oldest_first = search(
        &mut h,
        json!({"searchTerm": "t", "sortDirection": "asc", "sortKey": "updated_at"}),
    )
    .await;
    assert_eq!(found_ids(&oldest_first), [animals.as_str(), build.as_str()]);
    // Archived threads are searched only when asked for.
    h.client
        .request_ok("thread/archive", json!({"threadId": animals}))
        .await;
    assert!(found_ids(&search(&mut h, json!({"searchTerm": "quokka"})).await).is_empty());
    let archived = search(&mut h, json!({"searchTerm": "quokka", "archived": true})).await;
    assert_eq!(found_ids(&archived), [animals.as_str()]);
}

async fn bad_search_terms_and_cursors_are_the_references_errors(transport: Transport) {
    let mut h = experimental(transport, "").await;
    for term in ["", "   "] {
        let err = h
            .client
            .request_err("thread/search", json!({"searchTerm": term}))
            .await;
        assert_eq!(
            (err.code, err.message.as_str()),
            (
                INVALID_REQUEST,
                "thread/search requires a non-empty searchTerm"
            )
        );
    }
    let err = h
        .client
        .request_err(
            "thread/search",
            json!({"searchTerm": "x", "cursor": "garbage"}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (INVALID_REQUEST, "invalid cursor: garbage")
    );
    let err = h
        .client
        .request_err("thread/search", json!({"searchTerm": "a\u{1}b"}))
        .await;
    assert_eq!(err.code, -32602);
    let err = h.client.request_err("thread/search", json!({})).await;
    assert_eq!(err.message, "Invalid request: missing field `searchTerm`");
    assert_eq!(
        h.client
            .request_ok("thread/search", json!({"searchTerm": "x", "limit": 0}))
            .await,
        json!({"data": [], "nextCursor": null, "backwardsCursor": null})
    );
}

on_both_transports!(
    threads_are_found_by_name_and_by_content,
    bad_search_terms_and_cursors_are_the_references_errors,
);
