//! `experimentalFeature/list`, `experimentalFeature/enablement/set` and
//! `permissionProfile/list`.

use serde_json::json;
use weft_test_support::Transport;

use crate::turns::{Harness, Setup};

async fn features_are_weft_s_with_the_reference_s_stages(transport: Transport) {
    let mut h = Harness::start(Setup::new(transport).config("[features]\ngoals = false\n")).await;
    let c = &mut h.client;
    let list = c.request_ok("experimentalFeature/list", json!({})).await;
    let features = list["data"].as_array().unwrap();
    let summary: Vec<(String, String, bool, bool)> = features
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["stage"].as_str().unwrap().to_owned(),
                f["enabled"].as_bool().unwrap(),
                f["defaultEnabled"].as_bool().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("goals", "stable", false, true),
        ("tool_search", "beta", false, false),
        ("multi_agent", "stable", true, true),
        ("multi_agent_v2", "stable", false, false),
    ]
    .map(|(n, s, e, d)| (n.to_owned(), s.to_owned(), e, d));
    assert_eq!(summary, expected);
    assert_eq!(list["nextCursor"], json!(null));
    assert_eq!(features[1]["displayName"], "Tool search");
    assert_eq!(features[0]["displayName"], json!(null));
    // Pages: the cursor is where the next page starts.
    let first = c
        .request_ok("experimentalFeature/list", json!({"limit": 3}))
        .await;
    assert_eq!(first["data"].as_array().unwrap().len(), 3);
    assert_eq!(first["nextCursor"], "3");
    let rest = c
        .request_ok(
            "experimentalFeature/list",
            json!({"limit": 3, "cursor": "3"}),
        )
        .await;
    assert_eq!(rest["data"][0]["name"], "multi_agent_v2");
    assert_eq!(rest["nextCursor"], json!(null));
    let bad = c
        .request_err("experimentalFeature/list", json!({"cursor": "zz"}))
        .await;
    assert_eq!(
        (bad.code, bad.message.as_str()),
        (-32600, "invalid cursor: zz")
    );
    let past = c
        .request_err("experimentalFeature/list", json!({"cursor": "9"}))
        .await;
    assert_eq!(past.message, "cursor 9 exceeds total feature flags 4");
    let unknown = c
        .request_err(
            "experimentalFeature/list",
            json!({"threadId": "00000000-0000-0000-0000-000000000000"}),
        )
        .await;
    assert_eq!(
        unknown.message,
        "thread not found: 00000000-0000-0000-0000-000000000000"
    );
    // Only tool_search switches at runtime; the rest of the request is left out of the answer.
    let set = c
        .request_ok(
            "experimentalFeature/enablement/set",
            json!({"enablement": {"tool_search": true, "goals": true, "nope": true}}),
        )
        .await;
    assert_eq!(set, json!({"enablement": {"tool_search": true}}));
    let list = c.request_ok("experimentalFeature/list", json!({})).await;
    assert_eq!(list["data"][1]["enabled"], true);
    assert_eq!(list["data"][0]["enabled"], false);
    let empty = c
        .request_ok(
            "experimentalFeature/enablement/set",
            json!({"enablement": {}}),
        )
        .await;
    assert_eq!(empty, json!({"enablement": {}}));
}

async fn permission_profiles_are_the_built_ins(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let c = &mut h.client;
    let all = c.request_ok("permissionProfile/list", json!({})).await;
    assert_eq!(
        all,
        json!({"data": [
            {"id": ":read-only", "description": null, "allowed": true},
            {"id": ":workspace", "description": null, "allowed": true},
            {"id": ":danger-full-access", "description": null, "allowed": true}
        ], "nextCursor": null})
    );
    let page = c
        .request_ok("permissionProfile/list", json!({"limit": 2, "cwd": "/"}))
        .await;
    assert_eq!(page["nextCursor"], "2");
    let last = c
        .request_ok("permissionProfile/list", json!({"cursor": "2"}))
        .await;
    assert_eq!(last["data"][0]["id"], ":danger-full-access");
    let past = c
        .request_err("permissionProfile/list", json!({"cursor": "4"}))
        .await;
    assert_eq!(
        (past.code, past.message.as_str()),
        (-32600, "cursor 4 exceeds total permission profiles 3")
    );
    let bad = c
        .request_err("permissionProfile/list", json!({"cursor": "x"}))
        .await;
    assert_eq!(bad.message, "invalid cursor: x");
}

on_both_transports!(
    features_are_weft_s_with_the_reference_s_stages,
    permission_profiles_are_the_built_ins,
);
