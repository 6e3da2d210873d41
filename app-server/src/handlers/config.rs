//! `config/read` and `configRequirements/read`: Weft's effective configuration, where each
//! key came from, and the layers as written (docs/protocol.md §7.20, §7.21).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use weft_core::config::{Config, ConfigLayer, KNOWN_KEYS, LayerSource};
use weft_core::hooks::listing::command_line;
use weft_core::model::provider::WireApi;
use weft_protocol::config_api::{
    self, ConfigLayerMetadata, ConfigLayerSource, ConfigReadParams, ConfigReadResponse,
    ConfigRequirementsReadResponse,
};
use weft_protocol::{AskForApproval, ReasoningEffort, ReasoningSummary, SandboxMode};

use crate::dispatch::{Context, HandlerResult};

/// Secrets are never echoed: a provider's bearer token and the values of its HTTP headers.
const REDACTED: &str = "<redacted>";

/// `config/read`: the same for every `cwd`, since Weft has no per-project layers.
pub async fn read(cx: Context<'_>, params: ConfigReadParams) -> HandlerResult<ConfigReadResponse> {
    // The config as clients last wrote it (the one loaded at start until then, §7.34).
    let config = &cx.state.threads.services().live.current();
    let layers = &config.layers;
    let file_name = ConfigLayerSource::User {
        file: layers.file_path.display().to_string(),
        profile: None,
    };
    let metadata = |layer: &ConfigLayer| ConfigLayerMetadata {
        name: match layer.source {
            LayerSource::User => file_name.clone(),
            LayerSource::SessionFlags => ConfigLayerSource::SessionFlags,
        },
        version: layer.version(),
    };
    let by_source: BTreeMap<&'static str, ConfigLayerMetadata> = layers
        .highest_first()
        .into_iter()
        .map(|layer| (source_key(layer.source), metadata(layer)))
        .collect();
    let origins = layers
        .origins(KNOWN_KEYS)
        .into_iter()
        .filter_map(|(path, source)| Some((path, by_source.get(source_key(source))?.clone())))
        .collect();
    let layers = params.include_layers.then(|| {
        layers
            .highest_first()
            .into_iter()
            .map(|layer| {
                let mut config = layer.to_json();
                redact(&mut config);
                config_api::ConfigLayer {
                    name: metadata(layer).name,
                    version: layer.version(),
                    config,
                    disabled_reason: None,
                }
            })
            .collect()
    });
    Ok(ConfigReadResponse {
        config: effective(config),
        origins,
        layers,
    })
}

/// `configRequirements/read`: Weft imposes no requirements (there is no administrator layer),
/// and so none on speed modes either. The same to every request (the route's mode is `fixed`).
pub fn requirements() -> ConfigRequirementsReadResponse {
    ConfigRequirementsReadResponse {
        supports_independent_speed_modes: Some(false),
        requirements: None,
    }
}

fn source_key(source: LayerSource) -> &'static str {
    match source {
        LayerSource::User => "user",
        LayerSource::SessionFlags => "sessionFlags",
    }
}

/// The values Weft runs with: defaults applied where Weft has one.
fn effective(config: &Config) -> config_api::Config {
    let approval_policy = config
        .approval_policy
        .as_deref()
        .and_then(|name| serde_json::from_value(Value::String(name.into())).ok())
        .unwrap_or(AskForApproval::OnRequest);
    let sandbox_mode = config
        .sandbox_mode
        .as_deref()
        .and_then(|name| serde_json::from_value(Value::String(name.into())).ok())
        .unwrap_or(SandboxMode::WorkspaceWrite);
    let summary: Option<ReasoningSummary> = config
        .model_reasoning_summary
        .as_deref()
        .and_then(|name| serde_json::from_value(Value::String(name.into())).ok());
    let mut additional = BTreeMap::new();
    additional.insert("model_providers".to_string(), providers(config));
    additional.insert(
        "hooks".to_string(),
        json!({"stop": config.stop_hooks.iter().map(|hook| json!({
            "command": command_line(&hook.command),
            "timeout": hook.timeout().as_secs(),
        })).collect::<Vec<_>>()}),
    );
    additional.insert(
        "thread_idle_timeout_secs".to_string(),
        json!(config.thread_idle_timeout_secs),
    );
    let env = &config.shell_environment_policy;
    additional.insert(
        "shell_environment_policy".to_string(),
        json!({
            "inherit": format!("{:?}", env.inherit).to_lowercase(),
            "ignore_default_excludes": env.ignore_default_excludes,
            "exclude": env.exclude,
            "set": env.set,
            "include_only": env.include_only,
        }),
    );
    let limits = &config.limits;
    additional.insert(
        "limits".to_string(),
        json!({
            "max_message_bytes": limits.max_message_bytes,
            "max_connections": limits.max_connections,
            "handshake_timeout_secs": limits.handshake_timeout_secs,
            "shutdown_grace_secs": limits.shutdown_grace_secs,
            "outbound_queue_messages": limits.outbound_queue_messages,
            "outbound_queue_bytes": limits.outbound_queue_bytes,
            "outbound_stall_secs": limits.outbound_stall_secs,
            "max_skill_file_bytes": limits.max_skill_file_bytes,
            "skills_scan_timeout_secs": limits.skills_scan_timeout_secs,
            "max_mcp_questions_per_call": limits.max_mcp_questions_per_call,
            "max_running_requests": limits.max_running_requests,
        }),
    );
    let http = &config.http;
    additional.insert(
        "http".to_string(),
        json!({
            "connect_timeout_ms": http.connect_timeout_ms,
            "read_timeout_ms": http.read_timeout_ms,
            "pool_max_idle_per_host": http.pool_max_idle_per_host,
            "pool_idle_timeout_secs": http.pool_idle_timeout_secs,
            "ca_certificate": http.ca_certificate,
        }),
    );
    additional.insert(
        "features".to_string(),
        json!({"goals": config.features.goals}),
    );
    additional.insert(
        "goals".to_string(),
        json!({"max_continuation_turns": config.goals.max_continuation_turns}),
    );
    additional.insert(
        "review".to_string(),
        json!({
            "max_diff_bytes": config.review.max_diff_bytes,
            "diff_timeout_ms": config.review.diff_timeout_ms,
        }),
    );
    config_api::Config {
        model: Some(config.model.clone()),
        review_model: config.review_model.clone(),
        model_provider: Some(config.model_provider.clone()),
        model_context_window: config
            .model_context_window
            .and_then(|n| i64::try_from(n).ok()),
        model_auto_compact_token_limit: config
            .model_auto_compact_token_limit
            .and_then(|n| i64::try_from(n).ok()),
        approval_policy: Some(approval_policy),
        sandbox_mode: Some(sandbox_mode),
        model_reasoning_effort: config
            .model_reasoning_effort
            .as_deref()
            .filter(|effort| !effort.is_empty())
            .map(ReasoningEffort::from),
        model_reasoning_summary: summary,
        additional,
        ..config_api::Config::default()
    }
}

/// Every provider, built-ins included, with its effective settings.
fn providers(config: &Config) -> Value {
    let providers: serde_json::Map<String, Value> = config
        .model_providers
        .iter()
        .map(|(id, provider)| {
            let mut value = json!({
                "name": provider.name,
                "base_url": provider.base_url,
                "env_key": provider.env_key,
                "env_key_instructions": provider.env_key_instructions,
                "experimental_bearer_token": provider.experimental_bearer_token,
                "wire_api": match provider.wire_api {
                    WireApi::Responses => "responses",
                    WireApi::Chat => "chat",
                },
                "query_params": provider.query_params,
                "http_headers": provider.http_headers,
                "env_http_headers": provider.env_http_headers,
                "request_max_retries": provider.request_max_retries,
                "stream_max_retries": provider.stream_max_retries,
                "stream_idle_timeout_ms": provider.stream_idle_timeout_ms,
            });
            redact_provider(&mut value);
            (id.clone(), value)
        })
        .collect();
    Value::Object(providers)
}

/// Redacts the secrets in a config (a layer as written).
fn redact(config: &mut Value) {
    if let Some(providers) = config
        .get_mut("model_providers")
        .and_then(Value::as_object_mut)
    {
        for provider in providers.values_mut() {
            redact_provider(provider);
        }
    }
}

fn redact_provider(provider: &mut Value) {
    let Some(provider) = provider.as_object_mut() else {
        return;
    };
    if let Some(token) = provider.get_mut("experimental_bearer_token")
        && !token.is_null()
    {
        *token = json!(REDACTED);
    }
    if let Some(headers) = provider
        .get_mut("http_headers")
        .and_then(Value::as_object_mut)
    {
        for value in headers.values_mut() {
            *value = json!(REDACTED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted() {
        let mut layer = json!({"model_providers": {"p": {
            "experimental_bearer_token": "sk-1", "http_headers": {"Authorization": "Bearer x"},
            "env_key": "P_KEY"}}});
        redact(&mut layer);
        assert_eq!(
            layer,
            json!({"model_providers": {"p": {
                "experimental_bearer_token": REDACTED, "http_headers": {"Authorization": REDACTED},
                "env_key": "P_KEY"}}})
        );
        let mut unset = json!({"experimental_bearer_token": null});
        redact_provider(&mut unset);
        assert_eq!(unset, json!({"experimental_bearer_token": null}));
    }
}
