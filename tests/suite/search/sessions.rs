//! `fuzzyFileSearch/sessionStart`, `/sessionUpdate`, `/sessionStop` (experimental): the
//! latest query's `sessionUpdated` then `sessionCompleted`, the reference's errors, the
//! per-connection bound, and the experimental gate.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{experimental, paths_and_scores, workspace};
use crate::turns::{Harness, INVALID_REQUEST};

/// Every session notification up to and including the `sessionCompleted` that follows a
/// `sessionUpdated` for `query` (other messages are kept for later reads).
async fn notifications_through_completion(
    h: &mut Harness,
    session: &str,
    query: &str,
) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let msg = h
            .client
            .wait_for("a fuzzy file search session notification", |m| {
                m["method"]
                    .as_str()
                    .is_some_and(|method| method.starts_with("fuzzyFileSearch/session"))
            })
            .await;
        assert_eq!(msg["params"]["sessionId"], session, "{msg}");
        let completed = msg["method"] == "fuzzyFileSearch/sessionCompleted";
        seen.push(msg);
        let updated_latest = seen.iter().any(|m| {
            m["method"] == "fuzzyFileSearch/sessionUpdated" && m["params"]["query"] == query
        });
        if completed && updated_latest {
            return seen;
        }
    }
}

async fn a_session_reports_the_latest_query_then_completes(transport: Transport) {
    let mut h = experimental(transport, "").await;
    let dir = workspace();
    let root = dir.path().display().to_string();
    let started = h
        .client
        .request_ok(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "s1", "roots": [root]}),
        )
        .await;
    assert_eq!(started, json!({}));
    // Keystrokes, sent back to back: each answers `{}` at once.
    for query in ["m", "ma", "mai"] {
        let updated = h
            .client
            .request_ok(
                "fuzzyFileSearch/sessionUpdate",
                json!({"sessionId": "s1", "query": query}),
            )
            .await;
        assert_eq!(updated, json!({}));
    }
    let seen = notifications_through_completion(&mut h, "s1", "mai").await;
    // Once the latest query is reported, no older one is.
    let first_latest = seen
        .iter()
        .position(|m| m["params"]["query"] == "mai")
        .unwrap();
    assert!(
        seen[first_latest..]
            .iter()
            .all(|m| m["params"].get("query").is_none_or(|q| q == "mai")),
        "{seen:?}"
    );
    let last = seen
        .iter()
        .rev()
        .find(|m| m["method"] == "fuzzyFileSearch/sessionUpdated")
        .unwrap();
    let found = paths_and_scores(&last["params"]["files"]);
    assert_eq!(
        found[..3],
        [
            ("src/main.rs".to_owned(), 65620),
            (".hidden/secret_main.txt".to_owned(), 65616),
            ("Makefile".to_owned(), 65606)
        ],
        "{last}"
    );
    assert_eq!(last["params"]["files"][0]["root"], root.as_str());
    assert_eq!(
        seen.last().unwrap()["params"],
        json!({"sessionId": "s1"}),
        "sessionCompleted carries only the session"
    );

    // A query after the walk: its own update and completion; an empty query finds nothing.
    h.client
        .request_ok(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s1", "query": "button"}),
        )
        .await;
    let seen = notifications_through_completion(&mut h, "s1", "button").await;
    let last = seen
        .iter()
        .rev()
        .find(|m| m["method"] == "fuzzyFileSearch/sessionUpdated")
        .unwrap();
    assert_eq!(last["params"]["files"][0]["path"], "src/widgets/button.rs");
    h.client
        .request_ok(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s1", "query": ""}),
        )
        .await;
    let seen = notifications_through_completion(&mut h, "s1", "").await;
    assert!(
        seen.iter()
            .any(|m| m["params"] == json!({"sessionId": "s1", "query": "", "files": []}))
    );

    // Stopped: updates are refused, and nothing more is reported.
    assert_eq!(
        h.client
            .request_ok("fuzzyFileSearch/sessionStop", json!({"sessionId": "s1"}))
            .await,
        json!({})
    );
    let err = h
        .client
        .request_err(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s1", "query": "x"}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (INVALID_REQUEST, "fuzzy file search session not found: s1")
    );
}

async fn the_references_errors_and_the_session_bound(transport: Transport) {
    let mut h = experimental(
        transport,
        "[file_search]\nmax_sessions_per_connection = 2\n",
    )
    .await;
    let dir = workspace();
    let root = dir.path().display().to_string();
    let err = h
        .client
        .request_err(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "", "roots": [root]}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (INVALID_REQUEST, "sessionId must not be empty")
    );
    let err = h
        .client
        .request_err(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "a", "roots": []}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            -32603,
            "failed to start fuzzy file search session: at least one search directory is required"
        )
    );
    let err = h
        .client
        .request_err(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "nope", "query": "x"}),
        )
        .await;
    assert_eq!(err.message, "fuzzy file search session not found: nope");
    // Stopping an unknown session is no error, as in the reference.
    h.client
        .request_ok("fuzzyFileSearch/sessionStop", json!({"sessionId": "nope"}))
        .await;
    for id in ["a", "b"] {
        h.client
            .request_ok(
                "fuzzyFileSearch/sessionStart",
                json!({"sessionId": id, "roots": [root]}),
            )
            .await;
    }
    // A restart under an id replaces that session; a third session is refused.
    h.client
        .request_ok(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "a", "roots": [root]}),
        )
        .await;
    let err = h
        .client
        .request_err(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "c", "roots": [root]}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            INVALID_REQUEST,
            "at most 2 fuzzy file search sessions may be open on one connection"
        )
    );
    h.client
        .request_ok("fuzzyFileSearch/sessionStop", json!({"sessionId": "b"}))
        .await;
    h.client
        .request_ok(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "c", "roots": [root]}),
        )
        .await;
    h.client
        .request_ok(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "c", "query": "readme"}),
        )
        .await;
    let seen = notifications_through_completion(&mut h, "c", "readme").await;
    assert!(
        seen.iter()
            .any(|m| m["params"]["files"][0]["path"] == "README.md"),
        "{seen:?}"
    );
}

async fn sessions_and_thread_search_need_the_experimental_api(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let dir = workspace();
    let root = dir.path().display().to_string();
    for (method, params) in [
        (
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "s", "roots": [root]}),
        ),
        (
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s", "query": "m"}),
        ),
        ("fuzzyFileSearch/sessionStop", json!({"sessionId": "s"})),
        ("thread/search", json!({"searchTerm": "x"})),
    ] {
        let err = h.client.request_err(method, params).await;
        assert_eq!(
            (err.code, err.message),
            (
                INVALID_REQUEST,
                format!("{method} requires experimentalApi capability")
            )
        );
    }
    // The stable method is everyone's.
    let files = h
        .client
        .request_ok("fuzzyFileSearch", json!({"query": "main", "roots": [root]}))
        .await;
    assert_eq!(files["files"][0]["path"], "src/main.rs");
}

on_both_transports!(
    a_session_reports_the_latest_query_then_completes,
    the_references_errors_and_the_session_bound,
    sessions_and_thread_search_need_the_experimental_api,
);
