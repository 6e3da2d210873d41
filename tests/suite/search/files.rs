//! `fuzzyFileSearch` (stable): `.gitignore`, the reference's scores and order, the result
//! fields, empty queries and roots, limits, and cancellation by `cancellationToken`.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{experimental, paths_and_scores, touch, workspace};
use crate::turns::{Harness, INVALID_REQUEST};

async fn search(h: &mut Harness, query: &str, root: &str) -> Value {
    h.client
        .request_ok("fuzzyFileSearch", json!({"query": query, "roots": [root]}))
        .await["files"]
        .clone()
}

async fn results_honour_gitignore_and_rank_like_the_reference(transport: Transport) {
    // A client without the experimental opt-in: the method is stable.
    let mut h = Harness::responses(transport).await;
    let dir = workspace();
    let root = dir.path().display().to_string();

    // The reference's answer for this tree, field for field (ignored_dir/ and *.log are out).
    let files = search(&mut h, "main", &root).await;
    assert_eq!(
        files,
        json!([
            {"root": root, "path": "src/main.rs", "match_type": "file", "file_name": "main.rs",
             "score": 65645, "indices": [4, 5, 6, 7]},
            {"root": root, "path": ".hidden/secret_main.txt", "match_type": "file",
             "file_name": "secret_main.txt", "score": 65640, "indices": [15, 16, 17, 18]}
        ])
    );
    assert_eq!(
        paths_and_scores(&search(&mut h, "wid", &root).await),
        [
            ("src/widgets".to_owned(), 84),
            ("src/widgets/button.rs".to_owned(), 84),
            ("src/widgets/mod.rs".to_owned(), 84)
        ]
    );
    let wid = search(&mut h, "wid", &root).await;
    assert_eq!(wid[0]["match_type"], "directory");
    assert_eq!(wid[0]["file_name"], "widgets");
    // A directory named as the query first, then files whose names hold it, ties by path.
    assert_eq!(
        paths_and_scores(&search(&mut h, "tool", &root).await)[..4],
        [
            ("tool".to_owned(), 131181),
            ("a/b/c/tool.rs".to_owned(), 65645),
            ("a/toolbox.txt".to_owned(), 65645),
            ("tool/t_o_o_l.txt".to_owned(), 65633)
        ]
    );
    assert_eq!(
        paths_and_scores(&search(&mut h, "makefile", &root).await),
        [("Makefile".to_owned(), 196817)]
    );
    // Ignored files are never found; an empty query, no roots, or a missing root find nothing.
    assert_eq!(search(&mut h, "log", &root).await, json!([]));
    assert_eq!(search(&mut h, "main_ignored", &root).await, json!([]));
    assert_eq!(search(&mut h, "", &root).await, json!([]));
    assert_eq!(
        search(&mut h, "main", "/nonexistent/weft-e2e").await,
        json!([])
    );
    let none = h
        .client
        .request_ok("fuzzyFileSearch", json!({"query": "main", "roots": []}))
        .await;
    assert_eq!(none, json!({"files": []}));
    // Bad params are the decoder's error; the connection goes on.
    let err = h
        .client
        .request_err("fuzzyFileSearch", json!({"roots": [root]}))
        .await;
    assert_eq!(err.code, INVALID_REQUEST);
    assert_eq!(err.message, "Invalid request: missing field `query`");
    assert_eq!(
        search(&mut h, "readme", &root).await[0]["path"],
        "README.md"
    );
}

async fn the_limits_are_config(transport: Transport) {
    let mut h = experimental(
        transport,
        "[file_search]\nmax_results = 3\nmax_roots = 2\nmax_query_bytes = 8\n",
    )
    .await;
    let dir = workspace();
    let root = dir.path().display().to_string();
    assert_eq!(
        search(&mut h, "s", &root).await.as_array().unwrap().len(),
        3
    );
    let err = h
        .client
        .request_err(
            "fuzzyFileSearch",
            json!({"query": "a", "roots": [root, root, root]}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (INVALID_REQUEST, "at most 2 roots may be searched")
    );
    let err = h
        .client
        .request_err(
            "fuzzyFileSearch",
            json!({"query": "123456789", "roots": [root]}),
        )
        .await;
    assert_eq!(err.message, "query is longer than 8 bytes");
    let err = h
        .client
        .request_err(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s", "query": "123456789"}),
        )
        .await;
    assert_eq!(err.message, "query is longer than 8 bytes");
}

/// A search cancelled by a later one with its token answers at once with what it had; the
/// later one, and one under another token, answer in full.
async fn a_later_search_with_the_token_cancels_the_earlier(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let dir = tempfile::tempdir().unwrap();
    // Big enough that a walk takes longer than the next request takes to arrive.
    for d in 0..60 {
        for f in 0..2000 {
            touch(dir.path(), &format!("d{d:02}/file{f:04}.txt"));
        }
        touch(dir.path(), &format!("d{d:02}/needle{d:02}.md"));
    }
    let root = dir.path().display().to_string();
    let first = h
        .client
        .send_request(
            "fuzzyFileSearch",
            json!({"query": "needle", "roots": [root], "cancellationToken": "t"}),
        )
        .await;
    let other = h
        .client
        .send_request(
            "fuzzyFileSearch",
            json!({"query": "needle", "roots": [root], "cancellationToken": "u"}),
        )
        .await;
    let second = h
        .client
        .send_request(
            "fuzzyFileSearch",
            json!({"query": "needle", "roots": [root], "cancellationToken": "t"}),
        )
        .await;
    let count = |answer: Value| answer["files"].as_array().unwrap().len();
    let first = count(h.client.response_to(&first).await.unwrap());
    let second = count(h.client.response_to(&second).await.unwrap());
    let other = count(h.client.response_to(&other).await.unwrap());
    assert_eq!(
        second, 50,
        "the later search runs in full (50 of 60 needles: the limit)"
    );
    assert_eq!(other, 50, "another token is not cancelled");
    assert!(
        first < 40,
        "the earlier search stopped early ({first} of 40)"
    );
}

on_both_transports!(
    results_honour_gitignore_and_rank_like_the_reference,
    the_limits_are_config,
    a_later_search_with_the_token_cancels_the_earlier,
);
