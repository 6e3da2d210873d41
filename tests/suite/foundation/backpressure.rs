//! Backpressure (docs/protocol.md §11.6): pipelined requests are all answered, each with its
//! proper answer or `-32001 Server overloaded; retry later.`

use std::collections::HashSet;

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{
    INVALID_REQUEST, OVERLOADED, OVERLOADED_MESSAGE, assert_still_serving, init_params, initialized,
};

on_both_transports!(pipelined_requests_are_all_answered);

/// 1,000 requests written back to back before reading anything; then every one of them is
/// answered exactly once (stdio never drops messages; a WebSocket client this far behind is
/// still within its buffers).
async fn pipelined_requests_are_all_answered(transport: Transport) {
    const COUNT: i64 = 1000;
    let (_home, _daemon, mut client) = initialized(transport).await;
    for i in 0..COUNT {
        client
            .send_json(json!({"id": 10_000 + i, "method": "initialize", "params": init_params()}))
            .await;
    }
    let mut answered = HashSet::new();
    let mut overloaded = 0;
    while answered.len() < COUNT as usize {
        let msg = client.next_message().await;
        let id = msg["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("unexpected message {msg}"));
        assert!(
            (10_000..10_000 + COUNT).contains(&id),
            "unexpected id in {msg}"
        );
        assert!(answered.insert(id), "id {id} answered twice");
        let error = &msg["error"];
        match error["code"].as_i64() {
            Some(INVALID_REQUEST) => assert_eq!(error["message"], "Already initialized", "{msg}"),
            Some(OVERLOADED) => {
                assert_eq!(error["message"], Value::from(OVERLOADED_MESSAGE), "{msg}");
                overloaded += 1;
            }
            _ => panic!("unexpected answer {msg}"),
        }
    }
    eprintln!("{transport:?}: {overloaded} of {COUNT} pipelined requests were overloaded");
    assert_still_serving(&mut client, true).await;
}
