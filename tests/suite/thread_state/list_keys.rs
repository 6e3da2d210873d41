//! `thread/list` as the Codex TUI asks: the `recency_at` and `section_position` sort keys, the
//! source, lineage, id and section filters, `readStates` and `backwardsCursor`, the errors the
//! reference gives, and the experimental gate on the lineage filters.

use serde_json::{Value, json};
use weft_mock_model::MockModel;
use weft_test_support::{Daemon, TestHome, Transport, mock_model_config};

use super::{Tui, thread_param};
use crate::persistence::{UNKNOWN_ID, ids};

/// The section id the TUI sends.
const TUI_SECTION: &str = "01984de2-8f74-7c91-a3b2-5c5e937cf318";

/// The TUI's params: every key it sends, with these overrides.
fn tui_params(overrides: Value) -> Value {
    let mut params = json!({
        "currentAccountOnly": true, "cursor": null, "limit": 100, "includedThreadIds": null,
        "excludedThreadIds": null, "sortKey": null, "sortDirection": null,
        "modelProviders": [], "sourceKinds": [], "originators": null, "archived": false,
        "cwd": null, "useStateDbOnly": true, "searchTerm": null, "parentThreadId": null,
        "ancestorThreadId": null, "attachedToThreadId": null
    });
    for (key, value) in overrides.as_object().unwrap() {
        params[key] = value.clone();
    }
    params
}

fn empty_page() -> Value {
    json!({"data": [], "readStates": {}, "nextCursor": null, "backwardsCursor": null})
}

async fn sort_keys_filters_and_read_states(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let older = t.thread().await;
    let newer = t.thread().await;
    // A turn on the older thread makes it the most recent one (and unread).
    t.turn(&older, "Hi.").await;

    let by_recency = t
        .ok(
            "thread/list",
            tui_params(json!({"sortKey": "recency_at", "limit": 10})),
        )
        .await;
    let data = by_recency["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    // Threads started through the app-server are `vscode` threads, as in the reference.
    assert_eq!(data[0]["source"], "vscode");
    assert!(data[0]["recencyAt"].as_i64().unwrap() >= data[1]["recencyAt"].as_i64().unwrap());
    let unread = &by_recency["readStates"][&older];
    assert_eq!(unread["firstUnread"]["type"], "turn");
    assert_eq!(
        by_recency["readStates"][&newer],
        json!({"firstUnread": null, "revision": format!("initial:{newer}")})
    );
    assert!(by_recency["backwardsCursor"].is_string());
    assert_eq!(by_recency["nextCursor"], Value::Null);

    // One per page, then back with the opposite direction from the second page.
    let first = t
        .ok(
            "thread/list",
            tui_params(json!({"sortKey": "created_at", "limit": 1})),
        )
        .await;
    assert_eq!(ids(&first), [newer.as_str()]);
    let second = t
        .ok(
            "thread/list",
            tui_params(json!({"sortKey": "created_at", "limit": 1, "cursor": first["nextCursor"]})),
        )
        .await;
    assert_eq!(ids(&second), [older.as_str()]);
    let back = t
        .ok(
            "thread/list",
            tui_params(json!({"sortKey": "created_at", "sortDirection": "asc",
                              "cursor": second["backwardsCursor"]})),
        )
        .await;
    assert_eq!(ids(&back), [older.clone(), newer.clone()]);
    let updated = t
        .ok("thread/list", tui_params(json!({"sortKey": "updated_at"})))
        .await;
    assert_eq!(ids(&updated).len(), 2);

    // No thread is in the TUI's section (sections: docs/protocol.md §7.36), and there are no
    // exec/app-server threads, no spawned or attached threads.
    let section = tui_params(json!({"sortKey": "section_position", "sectionId": TUI_SECTION}));
    assert_eq!(t.ok("thread/list", section).await, empty_page());
    let unsectioned = tui_params(json!({"sectionId": null}));
    assert_eq!(ids(&t.ok("thread/list", unsectioned).await).len(), 2);
    let err = t
        .err("thread/list", json!({"sortKey": "section_position"}))
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32600, "section-position sorting requires a section filter")
    );
    let kinds = tui_params(json!({"sourceKinds": ["exec", "appServer"]}));
    assert_eq!(t.ok("thread/list", kinds).await, empty_page());
    let spawned = tui_params(json!({"sourceKinds": ["subAgentThreadSpawn"],
                                    "sortDirection": "desc", "ancestorThreadId": older}));
    assert_eq!(t.ok("thread/list", spawned).await, empty_page());
    let children = tui_params(json!({"parentThreadId": older}));
    assert_eq!(t.ok("thread/list", children).await, empty_page());
    let attached = tui_params(json!({"attachedToThreadId": older}));
    assert_eq!(t.ok("thread/list", attached).await, empty_page());
    let interactive = tui_params(json!({"sourceKinds": ["cli", "vscode"],
                                        "sortKey": "updated_at"}));
    assert_eq!(ids(&t.ok("thread/list", interactive).await).len(), 2);

    // Id filters.
    let only = tui_params(json!({"includedThreadIds": [older, UNKNOWN_ID]}));
    let only = t.ok("thread/list", only).await;
    assert_eq!(ids(&only), [older.as_str()]);
    assert_eq!(only["readStates"].as_object().unwrap().len(), 1);
    let none = tui_params(json!({"includedThreadIds": []}));
    assert_eq!(t.ok("thread/list", none).await, empty_page());
    let without = tui_params(json!({"excludedThreadIds": [older]}));
    assert_eq!(ids(&t.ok("thread/list", without).await), [newer.as_str()]);

    // The reference's errors.
    let err = t
        .err("thread/list", json!({"originators": ["codex-tui"]}))
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            -32602,
            "originator filtering is not supported by the local app-server"
        )
    );
    // The uuid parser's own words follow the prefix (the reference's uuid version words
    // them differently).
    let err = t
        .err("thread/list", json!({"includedThreadIds": ["nope"]}))
        .await;
    assert_eq!(err.code, -32602);
    assert!(
        err.message.starts_with("invalid included thread id: "),
        "{err:?}"
    );
    let err = t
        .err(
            "thread/list",
            json!({"parentThreadId": older, "ancestorThreadId": older}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            -32600,
            "parentThreadId and ancestorThreadId are mutually exclusive"
        )
    );
}

/// Without `experimentalApi` the lineage filters and the experimental methods are refused
/// with the reference's text; `readStates` is sent all the same.
async fn experimental_gate(transport: Transport) {
    let mock = MockModel::start().await.expect("start the mock model");
    let home = TestHome::with_config(&mock_model_config(&mock.base_url(), "responses"));
    let mut daemon = Daemon::start(transport, &home, &[]).await;
    let mut client = daemon.initialized_client().await;
    let page = client.request_ok("thread/list", json!({})).await;
    assert_eq!(page["readStates"], json!({}));
    for (method, params, what) in [
        (
            "thread/list",
            json!({"parentThreadId": UNKNOWN_ID}),
            "thread/list.parentThreadId",
        ),
        (
            "thread/list",
            json!({"ancestorThreadId": UNKNOWN_ID}),
            "thread/list.ancestorThreadId",
        ),
        (
            "thread/readState/update",
            json!({"threadId": UNKNOWN_ID, "operation": {"type": "read"},
                   "expectedRevision": "r"}),
            "thread/readState/update",
        ),
        (
            "thread/backgroundTerminals/list",
            thread_param(UNKNOWN_ID),
            "thread/backgroundTerminals/list",
        ),
        (
            "thread/backgroundTerminals/clean",
            thread_param(UNKNOWN_ID),
            "thread/backgroundTerminals/clean",
        ),
    ] {
        let err = client.request(method, params).await.unwrap_err();
        assert_eq!(
            (err.code, err.message),
            (
                -32600,
                format!("{what} requires experimentalApi capability")
            )
        );
    }
    // `null` lineage filters (as the TUI sends them) are no experimental use.
    let page = client
        .request_ok("thread/list", json!({"parentThreadId": null}))
        .await;
    assert_eq!(page["data"], json!([]));
}

on_both_transports!(sort_keys_filters_and_read_states, experimental_gate);
