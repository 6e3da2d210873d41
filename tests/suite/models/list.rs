//! `model/list` (docs/protocol.md §7.16): the default model, the `[model_catalog]` entries and
//! what the provider's `GET /models` lists, each described by the catalog; the answer of
//! `/models` cached; a provider whose `/models` fails or hangs falls back to the catalog within
//! the configured timeout; an unknown provider answers the reference's structured error.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use weft_mock_model::WireApi;
use weft_test_support::Transport;

use super::{Config, harness};
use crate::turns::ids;

const CATALOG: &str = r#"
[model_catalog]
fetch_timeout_ms = 1500
[model_catalog.models."my-local"]
display_name = "My local model"
description = "Configured by hand."
context_window = 32768
reasoning_efforts = []
input_modalities = ["text"]
[model_catalog.models."hidden-one"]
hidden = true

[model_providers.down]
name = "Down"
base_url = "http://127.0.0.1:9/v1"
wire_api = "chat"
"#;

fn model<'a>(result: &'a Value, id: &str) -> &'a Value {
    result["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {result}"))
}

fn efforts(model: &Value) -> Vec<&str> {
    model["supportedReasoningEfforts"]
        .as_array()
        .expect("efforts")
        .iter()
        .map(|e| e["reasoningEffort"].as_str().expect("effort"))
        .collect()
}

async fn catalog_config_and_provider_models_merge(transport: Transport) {
    let config = Config {
        tables: CATALOG,
        ..Config::default()
    };
    let mut h = harness(transport, WireApi::Chat, config).await;
    h.mock
        .set_models(["gpt-oss:20b", "mock-model", "qwen3-coder:30b", "embed-x"]);
    let all = h.client.request_ok("model/list", json!({})).await;
    assert_eq!(
        ids(&all),
        [
            "mock-model",
            "my-local",
            "gpt-oss:20b",
            "qwen3-coder:30b",
            "embed-x"
        ],
        "the default, the configured entries, then the provider's list; hidden ones left out"
    );
    assert_eq!(all["nextCursor"], Value::Null);
    let default = model(&all, "mock-model");
    assert_eq!(default["isDefault"], true);
    assert_eq!(
        efforts(default),
        ["low", "medium", "high"],
        "assumed for an unknown model"
    );
    let oss = model(&all, "gpt-oss:20b");
    assert_eq!(oss["isDefault"], false);
    assert_eq!(
        oss["model"], "gpt-oss:20b",
        "the server's spelling is what is sent"
    );
    assert_eq!(oss["displayName"], "gpt-oss-20b");
    assert_eq!(oss["inputModalities"], json!(["text"]));
    assert_eq!(efforts(oss), ["low", "medium", "high"]);
    assert_eq!(oss["defaultReasoningEffort"], "medium");
    let qwen = model(&all, "qwen3-coder:30b");
    assert_eq!(qwen["displayName"], "Qwen3-Coder");
    assert_eq!(efforts(qwen), Vec::<&str>::new());
    assert_eq!(qwen["defaultReasoningEffort"], "none");
    let mine = model(&all, "my-local");
    assert_eq!(mine["displayName"], "My local model");
    assert_eq!(mine["description"], "Configured by hand.");
    assert_eq!(mine["inputModalities"], json!(["text"]));

    let hidden = h
        .client
        .request_ok("model/list", json!({"includeHidden": true}))
        .await;
    assert!(ids(&hidden).contains(&"hidden-one"), "{hidden}");
    assert_eq!(model(&hidden, "hidden-one")["hidden"], true);

    let first = h.client.request_ok("model/list", json!({"limit": 2})).await;
    assert_eq!(ids(&first), ["mock-model", "my-local"]);
    assert_eq!(first["nextCursor"], "2");
    let second = h
        .client
        .request_ok("model/list", json!({"limit": 2, "cursor": "2"}))
        .await;
    assert_eq!(ids(&second), ["gpt-oss:20b", "qwen3-coder:30b"]);
    assert_eq!(second["nextCursor"], "4");

    // Four listings, one `GET /models`: the answer is cached (`cache_ttl_secs`, 300 s).
    let gets = h
        .mock
        .all_requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path == "/v1/models")
        .count();
    assert_eq!(gets, 1);
}

async fn a_provider_without_models_falls_back_within_the_timeout(transport: Transport) {
    let config = Config {
        tables: CATALOG,
        ..Config::default()
    };
    let mut h = harness(transport, WireApi::Chat, config).await;
    let started = Instant::now();
    let down = h
        .client
        .request_ok("model/list", json!({"modelProvider": "down"}))
        .await;
    assert_eq!(
        ids(&down),
        ["my-local"],
        "not the default provider: only the configured entries"
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    let err = h
        .client
        .request_err("model/list", json!({"modelProvider": "nope"}))
        .await;
    assert_eq!(err.code, -32600);
    assert_eq!(
        err.message,
        "This chat uses model provider “nope”, which is no longer configured. \
         Restore this provider’s configuration to continue."
    );
    assert_eq!(
        err.data,
        Some(json!({"type": "modelProviderNotConfigured", "modelProvider": "nope"}))
    );
    let err = h
        .client
        .request_err("model/list", json!({"cursor": "x"}))
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32600, "invalid cursor: x")
    );
    // The connection and the daemon go on serving.
    h.client.request_ok("model/list", json!({})).await;
}

async fn a_hanging_models_endpoint_is_cut_by_the_timeout(transport: Transport) {
    // A listener that accepts and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let tables = format!(
        "[model_catalog]\nfetch_timeout_ms = 300\n\n[model_providers.silent]\nname = \"Silent\"\n\
         base_url = \"http://127.0.0.1:{port}/v1\"\n"
    );
    let config = Config {
        tables: &tables,
        ..Config::default()
    };
    let mut h = harness(transport, WireApi::Responses, config).await;
    let started = Instant::now();
    let silent = h
        .client
        .request_ok("model/list", json!({"modelProvider": "silent"}))
        .await;
    assert_eq!(ids(&silent), Vec::<&str>::new());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    drop(listener);
}

async fn the_openai_provider_lists_the_catalog(transport: Transport) {
    // No key for OpenAI: its `/models` fails at once and the catalog answers alone.
    let mut h = harness(transport, WireApi::Responses, Config::default()).await;
    let listed = h
        .client
        .request_ok("model/list", json!({"modelProvider": "openai"}))
        .await;
    let listed_ids = ids(&listed);
    assert_eq!(listed_ids[0], "gpt-5.5", "{listed}");
    assert!(
        !listed_ids.contains(&"gpt-5"),
        "hidden by default: {listed}"
    );
    assert!(
        !listed_ids.contains(&"gpt-oss-20b"),
        "open models are not OpenAI's"
    );
    let five = model(&listed, "gpt-5.5");
    assert_eq!(five["isDefault"], false, "the default model is mock-model");
    assert_eq!(efforts(five), ["low", "medium", "high", "xhigh"]);
    assert_eq!(five["inputModalities"], json!(["text", "image"]));
    let hidden = h
        .client
        .request_ok(
            "model/list",
            json!({"modelProvider": "openai", "includeHidden": true}),
        )
        .await;
    assert!(ids(&hidden).contains(&"gpt-5"));
    assert!(ids(&hidden).contains(&"o3"));
    assert_eq!(efforts(model(&hidden, "gpt-4.1")), Vec::<&str>::new());
}

on_both_transports!(
    catalog_config_and_provider_models_merge,
    a_provider_without_models_falls_back_within_the_timeout,
    a_hanging_models_endpoint_is_cut_by_the_timeout,
    the_openai_provider_lists_the_catalog,
);
