//! Issue 28 part 6, thread management (docs/protocol.md §7.36): `thread/delete` with
//! `thread/deleted`, `thread/metadata/update`, `thread/inject_items`, and the thread sections
//! (`threadSection/*`, `thread/section/move`, `thread/section/changed`), end to end on both
//! transports, their texts and orders as the reference's.

mod delete;
mod inject;
mod metadata;
mod sections;

use serde_json::{Value, json};
use weft_test_support::{Client, RpcError, TestHome, Transport, mock_model_config};

use crate::persistence::{Persist, launch};

/// JSON-RPC "invalid params", which the reference answers for section CRUD refusals.
pub const INVALID_PARAMS: i64 = -32602;

/// A harness whose `config.toml` ends with `extra` (tables after the mock provider).
pub async fn with_tables(transport: Transport, extra: &str) -> Persist {
    let mock = weft_mock_model::MockModel::start()
        .await
        .expect("start the mock model");
    let home = TestHome::with_config(&format!(
        "{}\n{extra}",
        mock_model_config(&mock.base_url(), "responses")
    ));
    let connection = launch(transport, &home).await;
    Persist::on(mock, home, transport, connection)
}

/// Check an error answer: `code` with exactly `message`.
pub fn assert_code(answer: Result<Value, RpcError>, code: i64, message: &str) {
    match answer {
        Ok(result) => panic!("expected `{message}`, got the result {result}"),
        Err(err) => {
            assert_eq!(
                (err.code, err.message.as_str()),
                (code, message),
                "unexpected error"
            );
        }
    }
}

/// Send `method` and read through the message `until` says is the last one.
pub async fn send_through(
    client: &mut Client,
    method: &str,
    params: Value,
    until: impl Fn(&Value) -> bool,
) -> (Value, Vec<Value>) {
    let id = client.send_request(method, params).await;
    let messages = crate::turns::read_through(client, until).await;
    (id, messages)
}

/// The `params.threadId` of `message` (a notification about one thread).
pub fn thread_of(message: &Value) -> &str {
    message["params"]["threadId"].as_str().unwrap_or("?")
}

/// `{"threadId": thread}`.
pub fn on(thread: &str) -> Value {
    json!({"threadId": thread})
}
