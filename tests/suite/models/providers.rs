//! `modelProvider/list` and `modelProvider/capabilities/read` (docs/protocol.md §7.35), as
//! the reference answers them: the configured providers and OpenAI's by id, what of each may
//! be shown, and the default provider; both refuse missing params as the reference does. A
//! provider of the user's file can be edited, and the default changed
//! (`provider_writes.rs`).

use serde_json::json;
use weft_mock_model::WireApi;
use weft_test_support::Transport;

use super::{Config, harness};

const PROVIDERS: &str = r#"
[model_providers.keyed]
base_url = "http://127.0.0.1:9/v1"
env_key = "WEFT_E2E_KEYED"

[model_providers.secret]
name = "Secret"
base_url = "http://user:pw@127.0.0.1:9/v1?key=s"
experimental_bearer_token = "do-not-show"
"#;

async fn providers_are_listed_as_the_reference_lists_them(transport: Transport) {
    let config = Config {
        tables: PROVIDERS,
        ..Config::default()
    };
    let mut h = harness(transport, WireApi::Responses, config).await;
    let mock_url = h.mock.base_url();
    let listed = h.client.request_ok("modelProvider/list", json!({})).await;
    assert_eq!(
        listed,
        json!({
            "data": [
                {"id": "keyed", "name": "keyed", "canEdit": true,
                 "baseUrl": "http://127.0.0.1:9/v1",
                 "settings": {"type": "customGateway",
                              "auth": {"mode": "environmentVariable", "envKey": "WEFT_E2E_KEYED"}}},
                {"id": "mock", "name": "Mock model", "canEdit": true, "baseUrl": mock_url,
                 "settings": {"type": "customGateway", "auth": {"mode": "none"}}},
                {"id": "openai", "name": "OpenAI", "canEdit": false, "baseUrl": null,
                 "settings": {"type": "openai"}},
                {"id": "secret", "name": "Secret", "canEdit": true, "baseUrl": null,
                 "settings": {"type": "customGateway",
                              "auth": {"mode": "externallyConfigured", "envKey": null}}}
            ],
            "defaultProviderId": "mock",
            "canChangeDefault": true
        })
    );
    assert!(!listed.to_string().contains("do-not-show"));
    assert!(!listed.to_string().contains("pw@"));

    let capabilities = h
        .client
        .request_ok("modelProvider/capabilities/read", json!({}))
        .await;
    assert_eq!(
        capabilities,
        json!({"imageGeneration": false, "webSearch": false})
    );

    for method in ["modelProvider/list", "modelProvider/capabilities/read"] {
        let id = json!(format!("no-params-{method}"));
        h.client
            .send_json(json!({"id": id, "method": method}))
            .await;
        let answer = h.client.response_to(&id).await.unwrap_err();
        assert_eq!(
            (answer.code, answer.message.as_str()),
            (-32600, "Invalid request: missing field `params`"),
            "{method}"
        );
    }
    // Unknown params are ignored, as in the reference.
    let again = h
        .client
        .request_ok("modelProvider/list", json!({"bogus": 1}))
        .await;
    assert_eq!(again, listed);
}

on_both_transports!(providers_are_listed_as_the_reference_lists_them);
