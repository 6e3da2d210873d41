//! `initialize` / `initialized` (docs/protocol.md §4.1) and experimental gating (§4.2).

use serde_json::json;
use weft_test_support::{Daemon, TestHome, Transport};

use super::{assert_invalid_request, connect, expect_error, init_params, initialized};
use crate::requests::interrupt_params;

on_both_transports!(
    initialize_result_fields,
    requests_before_initialize_are_not_initialized,
    decode_errors_come_before_the_initialization_check,
    second_initialize_is_already_initialized,
    failed_initialize_can_be_retried,
    initialized_notification_is_optional,
    experimental_field_requires_opt_in,
);

async fn initialize_result_fields(transport: Transport) {
    let (home, _daemon, mut client) = connect(transport).await;
    let result = client
        .initialize_with(json!({
            "clientInfo": {"name": "my_ide", "title": "My IDE", "version": "1.2.0"},
            "capabilities": {"experimentalApi": false, "optOutNotificationMethods": []}
        }))
        .await;
    let user_agent = result["userAgent"].as_str().expect("userAgent is a string");
    assert!(
        user_agent.starts_with("my_ide/"),
        "userAgent should start with `<clientInfo.name>/` like Codex's: {user_agent}"
    );
    assert_eq!(
        result["codexHome"].as_str(),
        home.path().to_str(),
        "codexHome must be WEFT_HOME"
    );
    assert_eq!(result["platformFamily"], "unix");
    assert_eq!(result["platformOs"], std::env::consts::OS);
}

/// A well-formed request other than `initialize` before it gets `Not initialized`.
async fn requests_before_initialize_are_not_initialized(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    let interrupt = interrupt_params("019a0000-0000-7000-8000-000000000000", "t");
    for (method, params) in [
        ("thread/start", json!({})),
        ("model/list", json!({})),
        ("turn/interrupt", interrupt),
    ] {
        let answer = client.request(method, params).await;
        assert_invalid_request(answer, "Not initialized");
    }
    client.initialize().await;
}

/// Decoding comes first: an unknown method or bad params before `initialize` get the decode
/// error, not `Not initialized` (§5.2, the order of checks).
async fn decode_errors_come_before_the_initialization_check(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    let err = expect_error(client.request("foo/bar", json!({})).await);
    assert_eq!(err.code, -32600);
    assert!(
        err.message.starts_with(
            "Invalid request: unknown variant `foo/bar`, expected one of `initialize`, "
        ),
        "{}",
        err.message
    );
    assert_invalid_request(
        client
            .request("thread/start", serde_json::Value::Null)
            .await,
        "Invalid request: missing field `params`",
    );
    client.initialize().await;
}

async fn second_initialize_is_already_initialized(transport: Transport) {
    let (_home, _daemon, mut client) = initialized(transport).await;
    assert_invalid_request(
        client.request("initialize", init_params()).await,
        "Already initialized",
    );
    // Still rejected after the `initialized` notification and a second try.
    assert_invalid_request(
        client.request("initialize", init_params()).await,
        "Already initialized",
    );
}

/// A failed `initialize` leaves the connection uninitialized; a retry works.
async fn failed_initialize_can_be_retried(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    assert_invalid_request(
        client.request("initialize", json!({})).await,
        "Invalid request: missing field `clientInfo`",
    );
    assert_invalid_request(
        client.request("thread/start", json!({})).await,
        "Not initialized",
    );
    assert_invalid_request(
        client
            .request("initialize", json!({"clientInfo": {"name": "x"}}))
            .await,
        "Invalid request: missing field `version`",
    );
    let result = client.request("initialize", init_params()).await;
    assert!(result.is_ok(), "retry failed: {result:?}");
    assert_invalid_request(
        client.request("initialize", init_params()).await,
        "Already initialized",
    );
}

/// The server accepts requests as soon as `initialize` is answered, without waiting for
/// `initialized`; `initialized` and unknown client notifications get no reply.
async fn initialized_notification_is_optional(transport: Transport) {
    let (_home, _daemon, mut client) = connect(transport).await;
    client.request_ok("initialize", init_params()).await;
    assert_invalid_request(
        client.request("initialize", init_params()).await,
        "Already initialized",
    );
    client.notify("initialized", None).await;
    client.notify("initialized", Some(json!({}))).await;
    client.notify("foo/bar", Some(json!({"x": 1}))).await;
    super::assert_still_serving(&mut client, true).await;
    client
        .expect_no_message_within(weft_test_support::QUIET_PERIOD)
        .await;
}

/// An experimental field without `experimentalApi` is refused with
/// `<method>.<field> requires experimentalApi capability`; with the opt-in it is not.
async fn experimental_field_requires_opt_in(transport: Transport) {
    let (_home, _daemon, mut client) = initialized(transport).await;
    assert_invalid_request(
        client
            .request("thread/start", json!({"dynamicTools": []}))
            .await,
        "thread/start.dynamicTools requires experimentalApi capability",
    );
    // A plain boolean experimental field sent with its default (`false`), as third-party
    // clients do, is not a use of it (the reference's rule); `true` is.
    client
        .request_ok(
            "thread/start",
            json!({"experimentalRawEvents": false, "allowProviderModelFallback": false,
                   "ephemeral": true}),
        )
        .await;
    assert_invalid_request(
        client
            .request("thread/start", json!({"experimentalRawEvents": true}))
            .await,
        "thread/start.experimentalRawEvents requires experimentalApi capability",
    );

    let home = TestHome::new();
    let mut daemon = Daemon::start(transport, &home, &[]).await;
    let mut opted_in = daemon.client().await;
    opted_in
        .initialize_with(json!({
            "clientInfo": {"name": "weft-e2e", "version": "0.1.0"},
            "capabilities": {"experimentalApi": true}
        }))
        .await;
    let answer = opted_in
        .request(
            "thread/start",
            json!({"dynamicTools": [], "ephemeral": true}),
        )
        .await;
    if let Err(err) = answer {
        assert!(
            !err.message.contains("requires experimentalApi capability"),
            "opted-in connection was refused: {err:?}"
        );
    }
}

/// Each WebSocket connection has its own handshake state; capability variants are accepted.
#[tokio::test]
async fn websocket_connections_have_their_own_handshake() {
    let (_home, mut daemon, mut first) = initialized(Transport::Ws).await;
    let mut second = daemon.client().await;
    assert_invalid_request(
        second.request("thread/start", json!({})).await,
        "Not initialized",
    );
    assert_invalid_request(
        first.request("initialize", init_params()).await,
        "Already initialized",
    );
    let variants = [
        json!({"clientInfo": {"name": "a", "version": "1"}, "capabilities": null}),
        json!({"clientInfo": {"name": "b", "title": null, "version": "1"},
               "capabilities": {"experimentalApi": true, "optOutNotificationMethods": null}}),
        json!({"clientInfo": {"name": "c", "version": "1"},
               "capabilities": {"requestAttestation": false, "someFutureCapability": {"x": 1}},
               "someFutureParam": true}),
    ];
    second.initialize_with(variants[0].clone()).await;
    for params in &variants[1..] {
        let mut client = daemon.client().await;
        client.initialize_with(params.clone()).await;
    }
}

/// `WEFT_HOME` is created on first use and reported as `codexHome`.
#[tokio::test]
async fn weft_home_is_created_and_reported() {
    let home = TestHome::new();
    let nested = home.path().join("not/yet/there");
    let mut daemon = Daemon::builder(&home).weft_home(&nested).start().await;
    let mut client = daemon.client().await;
    let result = client.initialize().await;
    assert_eq!(result["codexHome"].as_str(), nested.to_str());
    assert!(
        nested.is_dir(),
        "WEFT_HOME {} was not created",
        nested.display()
    );
}

/// The typed helper: `initialize` through the protocol crate's types.
#[tokio::test]
async fn typed_initialize_round_trip() {
    use weft_protocol::{ClientInfo, InitializeCapabilities, InitializeParams, methods};
    let (home, _daemon, mut client) = connect(Transport::Stdio).await;
    let response = client
        .call::<methods::Initialize>(InitializeParams {
            client_info: ClientInfo {
                name: "typed".into(),
                title: Some("Typed client".into()),
                version: "9.9.9".into(),
            },
            capabilities: Some(InitializeCapabilities {
                opt_out_notification_methods: Some(vec!["thread/started".into()]),
                ..InitializeCapabilities::default()
            }),
        })
        .await
        .expect("initialize");
    assert_eq!(response.codex_home, home.path().to_str().unwrap());
    assert!(
        response.user_agent.starts_with("typed/"),
        "{}",
        response.user_agent
    );
}
