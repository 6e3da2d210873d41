//! `model/list` (the configured model plus the provider's `GET /models`) and
//! `thread/loaded/list` (docs/protocol.md §7.7, §7.16).

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{Harness, ids};

/// A page's `nextCursor`, which must be there.
fn next_cursor(page: &Value) -> String {
    page["nextCursor"]
        .as_str()
        .expect("a next cursor")
        .to_owned()
}

async fn model_list_from_the_provider(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    h.mock
        .set_models(["other-model", "mock-model", "third-model"]);
    let all = h.client.request_ok("model/list", json!({})).await;
    assert_eq!(
        ids(&all),
        ["mock-model", "other-model", "third-model"],
        "{all}"
    );
    assert_eq!(all["nextCursor"], Value::Null);
    let defaults: Vec<(&Value, &Value)> = all["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|m| (&m["id"], &m["isDefault"]))
        .collect();
    assert_eq!(
        defaults,
        [
            (&json!("mock-model"), &json!(true)),
            (&json!("other-model"), &json!(false)),
            (&json!("third-model"), &json!(false))
        ]
    );
    let listed = h
        .mock
        .all_requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path == "/v1/models")
        .count();
    assert!(listed >= 1, "the provider's model list was not asked for");

    // Paging.
    let first = h.client.request_ok("model/list", json!({"limit": 2})).await;
    assert_eq!(ids(&first), ["mock-model", "other-model"]);
    let cursor = next_cursor(&first);
    let rest = h
        .client
        .request_ok("model/list", json!({"cursor": cursor}))
        .await;
    assert_eq!(ids(&rest), ["third-model"]);
    assert_eq!(rest["nextCursor"], Value::Null);
}

async fn thread_loaded_list(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let empty = h.client.request_ok("thread/loaded/list", json!({})).await;
    assert_eq!(empty["data"], json!([]));
    let a = h.start_thread().await;
    let b = h.start_thread().await;
    let mut expected = vec![a.clone(), b.clone()];
    expected.sort();
    let all = h.client.request_ok("thread/loaded/list", json!({})).await;
    assert_eq!(all["data"], json!(expected));
    assert_eq!(all["nextCursor"], Value::Null);

    let first = h
        .client
        .request_ok("thread/loaded/list", json!({"limit": 1}))
        .await;
    assert_eq!(first["data"], json!([expected[0]]));
    let cursor = next_cursor(&first);
    let second = h
        .client
        .request_ok("thread/loaded/list", json!({"limit": 1, "cursor": cursor}))
        .await;
    assert_eq!(second["data"], json!([expected[1]]));
    assert_eq!(second["nextCursor"], Value::Null);
}

on_both_transports!(model_list_from_the_provider, thread_loaded_list);
