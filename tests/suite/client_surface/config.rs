//! `config/read`: the effective values, where each came from, and the layers as written.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::Surface;

on_both_transports!(
    effective_values_origins_and_layers,
    without_include_layers_layers_are_null,
    secrets_are_not_echoed,
    limits_and_http_settings_are_reported,
);

/// `sha256:` of `value` as sorted compact JSON (the reference's layer version).
fn version(value: &Value) -> String {
    use sha2::{Digest, Sha256};
    fn sorted(value: &Value) -> String {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let parts: Vec<String> = keys
                    .into_iter()
                    .map(|k| format!("{}:{}", Value::String(k.clone()), sorted(&map[k])))
                    .collect();
                format!("{{{}}}", parts.join(","))
            }
            Value::Array(items) => {
                format!(
                    "[{}]",
                    items.iter().map(sorted).collect::<Vec<_>>().join(",")
                )
            }
            scalar => scalar.to_string(),
        }
    }
    let digest = Sha256::digest(sorted(value).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

async fn effective_values_origins_and_layers(transport: Transport) {
    let mut s = Surface::start(
        transport,
        "approval_policy = \"untrusted\"\nmodel_reasoning_effort = \"high\"\n",
        "[features]\nplugins = false\n",
        &[
            "-c",
            "model_context_window=64000",
            "--enable",
            "guardian_approval",
        ],
    )
    .await;
    let file = s.home.config_path().display().to_string();
    let answer = s
        .client
        .request_ok("config/read", json!({"includeLayers": true, "cwd": "."}))
        .await;
    let config = &answer["config"];
    assert_eq!(config["model"], "mock-model");
    assert_eq!(config["approval_policy"], "untrusted");
    // Weft's default where the file sets nothing.
    assert_eq!(config["sandbox_mode"], "workspace-write");
    assert_eq!(config["model_context_window"], 64000);
    assert_eq!(config["model_reasoning_effort"], "high");
    // Keys Weft has no setting for are null, and Weft's own keys carry its values.
    assert_eq!(config["web_search"], Value::Null);
    assert_eq!(config["thread_idle_timeout_secs"], 1800);
    assert_eq!(
        config["model_providers"]["mock"]["base_url"],
        s.mock.base_url()
    );
    assert_eq!(config["model_providers"]["mock"]["request_max_retries"], 0);
    assert_eq!(
        config["model_providers"]["openai"]["env_key"],
        "OPENAI_API_KEY"
    );
    assert_eq!(config["hooks"], json!({"stop": []}));
    // The one feature Weft knows, with its default; the file's unknown `plugins` is not applied.
    assert_eq!(config["features"], json!({"goals": true}));
    assert_eq!(config["goals"], json!({"max_continuation_turns": 50}));

    let user = json!({"type": "user", "file": file, "profile": null});
    let layers = answer["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 2, "{layers:?}");
    // Highest precedence first; unknown overrides (`--enable`) are not applied, so not listed.
    assert_eq!(layers[0]["name"], json!({"type": "sessionFlags"}));
    assert_eq!(layers[0]["config"], json!({"model_context_window": 64000}));
    assert_eq!(layers[0]["version"], version(&layers[0]["config"]));
    assert_eq!(layers[0]["disabledReason"], Value::Null);
    assert_eq!(layers[1]["name"], user);
    // The file as written, unknown tables included.
    assert_eq!(layers[1]["config"]["features"], json!({"plugins": false}));
    assert_eq!(layers[1]["config"]["approval_policy"], "untrusted");
    assert_eq!(layers[1]["version"], version(&layers[1]["config"]));

    let origins = answer["origins"].as_object().unwrap();
    let from_file = json!({"name": user, "version": layers[1]["version"]});
    assert_eq!(origins["approval_policy"], from_file);
    assert_eq!(origins["model_providers.mock.base_url"], from_file);
    assert_eq!(
        origins["model_context_window"],
        json!({"name": {"type": "sessionFlags"}, "version": layers[0]["version"]})
    );
    // Only what Weft applies has an origin; defaults have none.
    assert!(!origins.contains_key("features.plugins"));
    assert!(!origins.contains_key("sandbox_mode"));
}

async fn without_include_layers_layers_are_null(transport: Transport) {
    let mut s = Surface::start(transport, "", "", &[]).await;
    let answer = s
        .client
        .request_ok("config/read", json!({"cwd": "/somewhere/else"}))
        .await;
    assert_eq!(answer["layers"], Value::Null);
    assert_eq!(answer["config"]["model"], "mock-model");
    assert!(answer["origins"].as_object().unwrap().contains_key("model"));
}

async fn secrets_are_not_echoed(transport: Transport) {
    let mut s = Surface::start(
        transport,
        "",
        "experimental_bearer_token = \"sk-secret\"\nhttp_headers = { \"X-Api-Key\" = \"k-secret\" }\n",
        &[],
    )
    .await;
    let answer = s
        .client
        .request_ok("config/read", json!({"includeLayers": true}))
        .await;
    let text = answer.to_string();
    assert!(
        !text.contains("sk-secret") && !text.contains("k-secret"),
        "{text}"
    );
    let mock = &answer["config"]["model_providers"]["mock"];
    assert_eq!(mock["experimental_bearer_token"], "<redacted>");
    assert_eq!(mock["http_headers"], json!({"X-Api-Key": "<redacted>"}));
}

/// Every `[limits]` and `[http]` key is reported with its effective value: the file's where it
/// sets one, the default elsewhere.
async fn limits_and_http_settings_are_reported(transport: Transport) {
    let mut s = Surface::start(
        transport,
        "",
        "[limits]\nmax_mcp_questions_per_call = 3\noutbound_stall_secs = 30\n\n\
         [http]\nconnect_timeout_ms = 2500\n",
        &[],
    )
    .await;
    let answer = s
        .client
        .request_ok("config/read", json!({"cwd": "."}))
        .await;
    let config = &answer["config"];
    assert_eq!(
        config["limits"],
        json!({
            "max_message_bytes": 4194304,
            "max_connections": 256,
            "handshake_timeout_secs": 10,
            "shutdown_grace_secs": 10,
            "outbound_queue_messages": 4096,
            "outbound_queue_bytes": 33554432,
            "outbound_stall_secs": 30,
            "max_skill_file_bytes": 1048576,
            "skills_scan_timeout_secs": 5,
            "max_mcp_questions_per_call": 3,
            "max_running_requests": 256,
        })
    );
    assert_eq!(
        config["http"],
        json!({
            "connect_timeout_ms": 2500,
            "read_timeout_ms": 300000,
            "pool_max_idle_per_host": 8,
            "pool_idle_timeout_secs": 90,
            "ca_certificate": null,
        })
    );
}
