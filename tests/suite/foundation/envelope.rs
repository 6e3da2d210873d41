//! Envelope rules (docs/protocol.md §3, §5): the `jsonrpc` member, ids, bad input, decode
//! errors.

use serde_json::{Value, json};
use weft_test_support::{QUIET_PERIOD, Transport};

use super::{
    INVALID_REQUEST, assert_invalid_request, assert_still_serving, connect, expect_error,
    init_params, initialized,
};
use crate::requests::Requests;

on_both_transports!(
    accepts_messages_with_and_without_jsonrpc,
    ids_are_echoed_exactly,
    input_that_is_not_a_message_gets_no_reply,
    invalid_ids_get_no_reply,
    responses_to_unknown_server_requests_are_dropped,
    batches_are_ignored,
    wrong_types_are_invalid_requests,
    unknown_methods_are_invalid_requests,
    missing_params_are_invalid_requests,
    ten_megabyte_messages,
);

async fn accepts_messages_with_and_without_jsonrpc(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    client
        .send_raw(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"a","version":"1"}}}"#,
        )
        .await;
    let answer = client.response_to(&json!(1)).await;
    assert!(answer.is_ok(), "{answer:?}");
    client
        .send_raw(r#"{"jsonrpc":"2.0","method":"initialized"}"#)
        .await;
    client
        .send_raw(
            r#"{"id":2,"method":"initialize","params":{"clientInfo":{"name":"a","version":"1"}}}"#,
        )
        .await;
    assert_invalid_request(client.response_to(&json!(2)).await, "Already initialized");
    // Every message received was checked for `"jsonrpc":"2.0"` by the support library.
    assert!(client.log().iter().all(|m| m["jsonrpc"] == "2.0"));
}

/// String and integer ids come back with the same JSON type and value, including integers
/// beyond the 53-bit range of a double, negative ones and zero.
async fn ids_are_echoed_exactly(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    client
        .request_with_id(json!("init-1"), "initialize", init_params())
        .await
        .unwrap();
    let ids = [
        json!("7"),
        json!(7),
        json!(""),
        json!("a b/c\u{e9}\u{1f600}"),
        json!(0),
        json!(-5),
        json!(9_007_199_254_740_993_i64),
        json!(i64::MAX),
        json!(i64::MIN),
    ];
    for id in &ids {
        client
            .send_json(json!({"id": id, "method": "initialize", "params": init_params()}))
            .await;
    }
    for id in &ids {
        assert_invalid_request(client.response_to(id).await, "Already initialized");
    }
    // The raw text of a large id must survive too (no float conversion on the way).
    client
        .send_raw(r#"{"id":9007199254740993,"method":"initialize","params":{"clientInfo":{"name":"a","version":"1"}}}"#)
        .await;
    let msg = client.next_message().await;
    assert_eq!(msg["id"].as_i64(), Some(9_007_199_254_740_993));
}

/// Lines or frames that are not JSON, or JSON that is not a message, are ignored: no reply,
/// and the connection keeps working (§3.4).
async fn input_that_is_not_a_message_gets_no_reply(transport: Transport) {
    let (_home, _daemon, mut client) = initialized(transport).await;
    let bad = [
        "hello",
        "{",
        r#"{"id":1,"method":"initi"#,
        r#"{"id":1,"method":"initialize","params":{"clientInfo":{"name":"a","#,
        "42",
        r#""a string""#,
        "null",
        "true",
        "{}",
        r#"{"foo":1}"#,
        r#"{"id":3}"#,
        "\u{7f}\u{1}binary-ish",
    ];
    for text in bad {
        client.send_raw(text).await;
    }
    assert_still_serving(&mut client, true).await;
    client.expect_no_message_within(QUIET_PERIOD).await;
}

/// A request whose id is `null`, a float or another non-(string|integer) type is not valid:
/// dropped without reply (§3.2).
async fn invalid_ids_get_no_reply(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    let init = r#""method":"initialize","params":{"clientInfo":{"name":"a","version":"1"}}"#;
    for id in ["null", "1.5", "1.0", "1e3", "true", "{}", "[1]"] {
        client.send_raw(&format!(r#"{{"id":{id},{init}}}"#)).await;
    }
    // None of them initialized the connection either.
    assert_still_serving(&mut client, false).await;
    client.expect_no_message_within(QUIET_PERIOD).await;
}

/// A client response whose id matches no pending server request is logged and dropped.
async fn responses_to_unknown_server_requests_are_dropped(transport: Transport) {
    let (_home, _daemon, mut client) = initialized(transport).await;
    client.send_raw(r#"{"id":99,"result":{}}"#).await;
    client
        .send_raw(r#"{"id":"x","error":{"code":-1,"message":"no"}}"#)
        .await;
    client
        .send_raw(r#"{"jsonrpc":"2.0","id":0,"result":{"decision":"accept"}}"#)
        .await;
    assert_still_serving(&mut client, true).await;
    client.expect_no_message_within(QUIET_PERIOD).await;
}

/// JSON arrays (JSON-RPC batches) are not supported and are ignored; several objects in one
/// line or frame too.
async fn batches_are_ignored(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    let request = json!({"id": 1, "method": "initialize", "params": init_params()});
    client.send_json(json!([request.clone()])).await;
    client.send_json(json!([])).await;
    client.send_raw(&format!("{request}{request}")).await;
    // The batch must not have initialized the connection.
    assert_still_serving(&mut client, false).await;
    client.expect_no_message_within(QUIET_PERIOD).await;
}

/// Wrong JSON types in params are decode errors with serde's wording (§5.3).
async fn wrong_types_are_invalid_requests(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    assert_invalid_request(
        client
            .request(
                "initialize",
                json!({"clientInfo": {"name": 123, "version": "1"}}),
            )
            .await,
        "Invalid request: invalid type: integer `123`, expected a string",
    );
    for params in [json!("x"), json!(5), json!(true)] {
        let err = expect_error(client.request("initialize", params.clone()).await);
        assert_eq!(err.code, INVALID_REQUEST, "{params}: {err:?}");
        assert!(
            err.message.starts_with("Invalid request: invalid type: "),
            "{params}: {err:?}"
        );
    }
    let err = expect_error(
        client
            .request(
                "initialize",
                json!({"clientInfo": {"name": "a", "version": "1"}, "capabilities": {"experimentalApi": "yes"}}),
            )
            .await,
    );
    assert_eq!(err.code, INVALID_REQUEST);
    assert!(
        err.message
            .starts_with("Invalid request: invalid type: string \"yes\", expected a boolean"),
        "{err:?}"
    );
    // None of these initialized the connection; after them, it still works.
    assert_invalid_request(
        client.request("thread/start", json!({})).await,
        "Not initialized",
    );
    client.initialize().await;
    // After initialize, decode errors keep their wording.
    assert_invalid_request(
        client.interrupt(123, "t").await,
        "Invalid request: invalid type: integer `123`, expected a string",
    );
    assert_invalid_request(
        client
            .request("thread/start", json!({"approvalPolicy": "on-failure"}))
            .await,
        "Invalid request: unknown variant `on-failure`, expected one of `untrusted`, `on-request`, `granular`, `never`",
    );
    let err = expect_error(
        client
            .request("thread/start", json!({"ephemeral": "yes"}))
            .await,
    );
    assert!(
        err.message
            .starts_with("Invalid request: invalid type: string \"yes\", expected a boolean"),
        "{err:?}"
    );
}

/// An unknown method is a decode error: ``Invalid request: unknown variant `foo/bar`,
/// expected one of `initialize`, …`` (Codex lists every method it has; Weft lists its own).
async fn unknown_methods_are_invalid_requests(transport: Transport) {
    let (_home, _daemon, mut client) = initialized(transport).await;
    for method in ["foo/bar", "thread/rollback", "Initialize", ""] {
        let err = expect_error(client.request(method, json!({})).await);
        assert_eq!(err.code, INVALID_REQUEST, "{method}: {err:?}");
        let prefix =
            format!("Invalid request: unknown variant `{method}`, expected one of `initialize`, ");
        assert!(err.message.starts_with(&prefix), "{method}: {err:?}");
    }
    // Without params at all, the method is still what is reported.
    client
        .send_raw(r#"{"id":"no-params","method":"foo/bar"}"#)
        .await;
    let err = expect_error(client.response_to(&json!("no-params")).await);
    assert!(
        err.message.starts_with(
            "Invalid request: unknown variant `foo/bar`, expected one of `initialize`"
        ),
        "{err:?}"
    );
}

/// Params omitted or `null` → ``Invalid request: missing field `params` ``; a missing
/// required field inside params names that field.
async fn missing_params_are_invalid_requests(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    client.send_raw(r#"{"id":1,"method":"initialize"}"#).await;
    assert_invalid_request(
        client.response_to(&json!(1)).await,
        "Invalid request: missing field `params`",
    );
    assert_invalid_request(
        client.request("initialize", Value::Null).await,
        "Invalid request: missing field `params`",
    );
    client.initialize().await;
    client.send_raw(r#"{"id":2,"method":"thread/start"}"#).await;
    assert_invalid_request(
        client.response_to(&json!(2)).await,
        "Invalid request: missing field `params`",
    );
    for (params, field) in [
        (json!({}), "threadId"),
        (json!({"threadId": "x"}), "turnId"),
    ] {
        assert_invalid_request(
            client.request("turn/interrupt", params).await,
            &format!("Invalid request: missing field `{field}`"),
        );
    }
}

/// A 10 MB line or frame: garbage is ignored, a valid request (with a 10 MB unknown field) is
/// answered, and the connection keeps working.
async fn ten_megabyte_messages(transport: Transport) {
    // Over the default `limits.max_message_bytes` (4 MiB; see `security::connections`).
    let home = weft_test_support::TestHome::new();
    let args = ["-c", "limits.max_message_bytes=16777216"];
    let mut daemon = weft_test_support::Daemon::start(transport, &home, &args).await;
    let mut client = daemon.client().await;
    let ten_mb = 10 * 1024 * 1024;
    client.send_raw(&"x".repeat(ten_mb)).await;
    let mut unterminated = String::from(r#"{"id":1,"method":"initialize","params":{"pad":""#);
    unterminated.push_str(&"y".repeat(ten_mb));
    client.send_raw(&unterminated).await;
    let padded = json!({
        "id": "big",
        "method": "initialize",
        "params": {"clientInfo": {"name": "a", "version": "1"}, "padding": "z".repeat(ten_mb)}
    });
    client.send_json(padded).await;
    let answer = client.response_to(&json!("big")).await;
    assert!(answer.is_ok(), "the 10 MB initialize failed: {answer:?}");
    assert_still_serving(&mut client, true).await;
    client.expect_no_message_within(QUIET_PERIOD).await;
}
