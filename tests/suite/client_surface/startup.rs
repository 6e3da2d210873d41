//! The TUI's start-up requests, in its order and with its exact params, and what each answers.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{Surface, assert_invalid_request};
use crate::turns::ids;

on_both_transports!(
    the_tui_start_up_sequence_is_answered,
    account_and_gov_cloud_answer_no_account,
    the_experimental_method_needs_the_opt_in,
    requirements_take_no_params,
    model_list_serves_the_configured_model_the_provider_does_not_list,
);

/// As captured: `account/read {}`, `model/list {includeHidden: true}`, `hooks/list`,
/// `checkGovCloudRequirements {}`, `config/read {includeLayers, cwd: "."}`,
/// `configRequirements/read` without params, `skills/list {cwds, forceReload}`.
async fn the_tui_start_up_sequence_is_answered(transport: Transport) {
    let mut s = Surface::start(transport, "", "", &[]).await;
    let ws = s.ws().display().to_string();
    let c = &mut s.client;
    let account = c.request_ok("account/read", json!({})).await;
    assert_eq!(
        account,
        json!({"account": null, "userId": null, "requiresOpenaiAuth": false, "workspaceRouting": null})
    );
    let models = c
        .request_ok(
            "model/list",
            json!({"modelProvider": null, "cursor": null, "limit": null, "includeHidden": true}),
        )
        .await;
    assert_eq!(models["data"][0]["id"], "mock-model");
    assert_eq!(models["data"][0]["isDefault"], true);
    let hooks = c
        .request_ok("hooks/list", json!({"cwds": [ws], "threadId": null}))
        .await;
    assert_eq!(
        hooks,
        json!({"data": [{"cwd": ws, "hooks": [], "warnings": [], "errors": []}]})
    );
    let gov = c
        .request_ok("account/bedrock/checkGovCloudRequirements", json!({}))
        .await;
    assert_eq!(gov, json!({"isGovCloud": false, "shouldWarn": false}));
    let config = c
        .request_ok("config/read", json!({"includeLayers": true, "cwd": "."}))
        .await;
    assert_eq!(config["config"]["model"], "mock-model");
    assert_eq!(config["config"]["model_provider"], "mock");
    assert_eq!(config["layers"].as_array().map(Vec::len), Some(1));
    c.send_json(json!({"id": 4, "method": "configRequirements/read"}))
        .await;
    let requirements = c.response_to(&json!(4)).await.unwrap();
    assert_eq!(
        requirements,
        json!({"supportsIndependentSpeedModes": false, "requirements": null})
    );
    let skills = c
        .request_ok("skills/list", json!({"cwds": [ws], "forceReload": true}))
        .await;
    assert_eq!(
        skills,
        json!({"data": [{"cwd": ws, "skills": [], "errors": []}]})
    );
}

async fn account_and_gov_cloud_answer_no_account(transport: Transport) {
    let mut s = Surface::start(transport, "", "", &[]).await;
    let c = &mut s.client;
    // `refreshToken` has nothing to refresh.
    let account = c
        .request_ok("account/read", json!({"refreshToken": true}))
        .await;
    assert_eq!(account["account"], Value::Null);
    assert_eq!(account["requiresOpenaiAuth"], false);
    // Like every method with params, these need them.
    for method in ["account/read", "account/bedrock/checkGovCloudRequirements"] {
        c.send_json(json!({"id": "p", "method": method})).await;
        assert_invalid_request(
            c.response_to(&json!("p")).await,
            "Invalid request: missing field `params`",
        );
    }
}

async fn the_experimental_method_needs_the_opt_in(transport: Transport) {
    let mut s = Surface::start(transport, "", "", &[]).await;
    let mut plain = match transport {
        Transport::Ws => s.daemon.client().await,
        // One connection per stdio daemon: start a second daemon for the plain client.
        Transport::Stdio => {
            let mut daemon = weft_test_support::Daemon::stdio(&s.home, &[]).await;
            let client = daemon.client().await;
            s.daemon = daemon;
            client
        }
    };
    plain.initialize().await;
    assert_invalid_request(
        plain
            .request("account/bedrock/checkGovCloudRequirements", json!({}))
            .await,
        "account/bedrock/checkGovCloudRequirements requires experimentalApi capability",
    );
    // The stable methods need no opt-in.
    assert!(plain.request("account/read", json!({})).await.is_ok());
}

/// Absent, `null` and `{}` are fine; anything else is serde's unit error, as the reference's.
async fn requirements_take_no_params(transport: Transport) {
    let mut s = Surface::start(transport, "", "", &[]).await;
    let c = &mut s.client;
    for (id, params) in [(1, None), (2, Some(json!(null))), (3, Some(json!({})))] {
        let mut request = json!({"id": id, "method": "configRequirements/read"});
        if let Some(params) = params {
            request["params"] = params;
        }
        c.send_json(request).await;
        assert!(c.response_to(&json!(id)).await.is_ok(), "params case {id}");
    }
    assert_invalid_request(
        c.request("configRequirements/read", json!({"x": 1})).await,
        "Invalid request: invalid type: map, expected unit",
    );
    assert_invalid_request(
        c.request("configRequirements/read", json!([])).await,
        "Invalid request: invalid type: sequence, expected unit",
    );
}

/// The TUI exits on an empty list and needs the configured model in it: a model the provider
/// does not list is still served first, as the default.
async fn model_list_serves_the_configured_model_the_provider_does_not_list(transport: Transport) {
    let mut s = Surface::start(transport, "", "", &[]).await;
    s.mock.set_models(["other-model"]);
    let models = s
        .client
        .request_ok("model/list", json!({"includeHidden": true}))
        .await;
    assert_eq!(ids(&models), ["mock-model", "other-model"]);
    assert_eq!(models["data"][0]["isDefault"], true);
    assert_eq!(models["data"][1]["isDefault"], false);
    assert!(
        models["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["hidden"] == false)
    );
}
