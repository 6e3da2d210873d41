//! `modelProvider/config/write` and `modelProvider/default/set` (docs/protocol.md §7.35), as
//! the reference 0.171.0 answers them: a custom gateway added (its id made from its name, a
//! taken one numbered), edited field by field (omitted kept, `null` cleared), the file's
//! comments kept; the default provider chosen, so a new thread's turn goes to the gateway;
//! and the refusals with the reference's texts and codes.

use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{MockModel, Reply, WireApi};
use weft_test_support::Transport;

use super::{Config, harness};

const COMMENTED: &str = "# my providers, by hand\n";

fn gateway(name: &str, base_url: &str, env_key: Option<&str>) -> Value {
    let mut settings = json!({"type": "customGateway", "name": name, "baseUrl": base_url});
    if let Some(key) = env_key {
        settings["envKey"] = json!(key);
    }
    json!({ "settings": settings })
}

async fn a_gateway_is_added_edited_and_made_the_default(transport: Transport) {
    let config = Config {
        top: COMMENTED,
        ..Config::default()
    };
    let mut h = harness(transport, WireApi::Responses, config).await;
    let gateway_model = MockModel::start().await.expect("second mock model");
    let url = gateway_model.base_url();

    let written = h
        .client
        .request_ok(
            "modelProvider/config/write",
            gateway("My Gateway", &url, Some("MY_GATEWAY_KEY")),
        )
        .await;
    assert_eq!(
        written,
        json!({"provider": {"id": "my-gateway", "name": "My Gateway", "canEdit": true,
            "baseUrl": url, "settings": {"type": "customGateway",
            "auth": {"mode": "environmentVariable", "envKey": "MY_GATEWAY_KEY"}}}})
    );
    let file = std::fs::read_to_string(h.home.config_path()).unwrap();
    assert!(file.contains(COMMENTED.trim()), "{file}");
    assert!(
        file.contains(&format!(
            "[model_providers.my-gateway]\nbase_url = \"{url}\"\nenv_key = \"MY_GATEWAY_KEY\"\nname = \"My Gateway\"\nwire_api = \"responses\"\n"
        )),
        "{file}"
    );
    // The same name again gets the next free id.
    let second = h
        .client
        .request_ok(
            "modelProvider/config/write",
            gateway("My Gateway", "http://127.0.0.1:9/v1", None),
        )
        .await;
    assert_eq!(second["provider"]["id"], "my-gateway-2");
    assert_eq!(
        second["provider"]["settings"]["auth"],
        json!({"mode": "none"})
    );
    // An edit: the key cleared, the name kept.
    let edited = h
        .client
        .request_ok(
            "modelProvider/config/write",
            json!({"settings": {"type": "customGateway", "providerId": "my-gateway", "envKey": null}}),
        )
        .await;
    assert_eq!(edited["provider"]["name"], "My Gateway");
    assert_eq!(edited["provider"]["baseUrl"], json!(url));
    assert_eq!(
        edited["provider"]["settings"]["auth"],
        json!({"mode": "none"})
    );
    let listed = h.client.request_ok("modelProvider/list", json!({})).await;
    let ids: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mock", "my-gateway", "my-gateway-2", "openai"]);
    assert_eq!(listed["defaultProviderId"], "mock");
    assert_eq!(listed["canChangeDefault"], true);

    // The default: a new thread uses it, and its turn reaches the gateway.
    let set = h
        .client
        .request_ok(
            "modelProvider/default/set",
            json!({"providerId": "my-gateway"}),
        )
        .await;
    assert_eq!(set["status"], "ok");
    assert!(set["version"].as_str().unwrap().starts_with("sha256:"));
    let file = std::fs::read_to_string(h.home.config_path()).unwrap();
    assert!(file.contains("model_provider = \"my-gateway\""), "{file}");
    gateway_model.push(
        Reply::new()
            .text("From the gateway.")
            .render(WireApi::Responses),
    );
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hello").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = gateway_model
        .wait_for_requests(1, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(requests.len(), 1);
    assert!(
        h.mock.requests().is_empty(),
        "the old default got no request"
    );
    let listed = h.client.request_ok("modelProvider/list", json!({})).await;
    assert_eq!(listed["defaultProviderId"], "my-gateway");
}

async fn bad_writes_get_the_reference_answers(transport: Transport) {
    let mut h = harness(transport, WireApi::Responses, Config::default()).await;
    let before = std::fs::read_to_string(h.home.config_path()).unwrap();
    let validation = json!({"config_write_error_code": "configValidationError"});
    let cases = [
        (
            json!({"settings": {"type": "customGateway"}}),
            "Enter a provider name.",
        ),
        (
            json!({"settings": {"type": "customGateway", "name": "  "}}),
            "Enter a provider name.",
        ),
        (
            json!({"settings": {"type": "customGateway", "name": "x"}}),
            "A base URL is required to create a custom provider.",
        ),
        (
            gateway("x", "http://u:p@127.0.0.1:6/v1", None),
            "Enter an HTTP(S) base URL without credentials, a query, or a fragment.",
        ),
        (
            gateway("x", "ftp://127.0.0.1:6/v1", None),
            "Enter an HTTP(S) base URL without credentials, a query, or a fragment.",
        ),
        (
            gateway("x", "http://127.0.0.1:6/v1", Some("my-key")),
            "Invalid API key environment variable name.",
        ),
        (
            json!({"settings": {"type": "customGateway", "providerId": "openai", "name": "x"}}),
            "A custom provider or gateway cannot use a built-in provider ID.",
        ),
        (
            json!({"settings": {"type": "bedrock", "providerId": "amazon-bedrock", "region": "r"}}),
            "Weft has no Amazon Bedrock or Google Cloud providers: only a custom gateway (an OpenAI-compatible server) can be written",
        ),
    ];
    for (params, message) in cases {
        let error = h
            .client
            .request_err("modelProvider/config/write", params.clone())
            .await;
        assert_eq!(
            (error.code, error.message.as_str(), error.data.as_ref()),
            (-32600, message, Some(&validation)),
            "{params}"
        );
    }
    let error = h
        .client
        .request_err(
            "modelProvider/config/write",
            json!({"settings": {"type": "customGateway", "providerId": "ghost", "name": "x"}}),
        )
        .await;
    assert_eq!(
        (error.code, error.message.as_str(), error.data),
        (
            -32600,
            "Unknown provider ID.",
            Some(json!({"config_write_error_code": "configPathNotFound"}))
        )
    );
    let error = h
        .client
        .request_err("modelProvider/default/set", json!({"providerId": "nope"}))
        .await;
    assert_eq!(
        (error.code, error.message.as_str(), error.data),
        (
            -32600,
            "Model provider `nope` is not configured.",
            Some(validation.clone())
        )
    );
    let error = h
        .client
        .request_err(
            "modelProvider/config/write",
            json!({"settings": {"type": "customGateway", "name": "x"}, "extra": 1}),
        )
        .await;
    assert_eq!(error.code, -32600, "{}", error.message);
    let after = std::fs::read_to_string(h.home.config_path()).unwrap();
    assert_eq!(before, after, "a refused write leaves the file as it was");
}

on_both_transports!(
    a_gateway_is_added_edited_and_made_the_default,
    bad_writes_get_the_reference_answers,
);
