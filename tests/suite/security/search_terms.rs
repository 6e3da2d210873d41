//! `thread/list`'s `searchTerm` with control characters (issue 24 §7): refused with `-32602`
//! and a clear message, never handed to SQLite (which reads a NUL as the end of the term: a
//! raw `unterminated string` error, or every thread listed).

use serde_json::json;
use weft_test_support::Transport;

use crate::persistence::{Persist, list_ids, ok};

const INVALID_PARAMS: i64 = -32602;

#[tokio::test]
async fn a_search_term_with_a_control_character_is_refused() {
    let mut p = Persist::start(Transport::Stdio).await;
    let mut threads = Vec::new();
    for name in ["plain sailing", "rough seas", "calm water"] {
        let thread = p.start_thread().await;
        ok(
            &mut p.client,
            "thread/name/set",
            json!({"threadId": thread, "name": name}),
        )
        .await;
        threads.push(thread);
    }
    for (term, code) in [
        ("plain\u{0}NOPE", "U+0000"),
        ("\u{0}", "U+0000"),
        ("plain\nsailing", "U+000A"),
        ("\u{1b}[31m", "U+001B"),
    ] {
        let answer = p
            .client
            .request("thread/list", json!({"searchTerm": term}))
            .await;
        let err = answer.expect_err(&format!("{term:?} was accepted"));
        assert_eq!(err.code, INVALID_PARAMS, "{term:?}: {err:?}");
        assert_eq!(
            err.message,
            format!("invalid searchTerm: control character {code} is not allowed")
        );
    }
    // Ordinary terms still search, literally.
    assert_eq!(
        list_ids(&mut p.client, json!({"searchTerm": "plain"})).await,
        [threads[0].as_str()]
    );
    assert!(
        list_ids(&mut p.client, json!({"searchTerm": "plain%"}))
            .await
            .is_empty()
    );
    assert_eq!(list_ids(&mut p.client, json!({})).await.len(), 3);
}
