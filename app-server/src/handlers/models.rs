//! `model/list`.

use weft_protocol::ReasoningEffort;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::models::{
    InputModality, Model, ModelListParams, ModelListResponse, ReasoningEffortOption,
};

use crate::dispatch::{Context, HandlerResult};
use crate::handlers::page;

/// `model/list`: the configured default model, plus what the provider's `GET /models` lists
/// when it serves one.
pub async fn list(cx: Context<'_>, params: ModelListParams) -> HandlerResult<ModelListResponse> {
    let config = &cx.state.config;
    let provider_id = params
        .model_provider
        .clone()
        .unwrap_or_else(|| config.model_provider.clone());
    let Some(provider) = config.provider(&provider_id).cloned() else {
        return Err(JsonRpcError::invalid_request(format!(
            "unknown model provider `{provider_id}`"
        )));
    };
    let mut ids = vec![config.model.clone()];
    let client = weft_core::model::ModelClient::new(provider, cx.state.threads.services().http());
    match client.list_models().await {
        Ok(listed) => {
            for model in listed {
                if !ids.contains(&model) {
                    ids.push(model);
                }
            }
        }
        Err(err) => tracing::debug!(%err, provider = %provider_id, "provider does not list models"),
    }
    let start = match &params.cursor {
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| JsonRpcError::invalid_request(format!("invalid cursor: {cursor}")))?,
        None => 0,
    };
    let (ids_page, more) = page(&ids, start, params.limit);
    let data: Vec<Model> = ids_page
        .iter()
        .map(|id| model_entry(id, id == &config.model))
        .collect();
    let end = start + data.len();
    Ok(ModelListResponse {
        data,
        next_cursor: more.then(|| end.to_string()),
    })
}

fn model_entry(id: &str, is_default: bool) -> Model {
    let effort = |name: &str, description: &str| ReasoningEffortOption {
        reasoning_effort: ReasoningEffort(name.to_string()),
        description: description.to_string(),
    };
    Model {
        id: id.to_string(),
        model: id.to_string(),
        upgrade: None,
        upgrade_info: None,
        availability_nux: None,
        display_name: id.to_string(),
        description: format!("{id} (from Weft's configuration or the provider's model list)"),
        hidden: false,
        supported_reasoning_efforts: vec![
            effort("low", "Faster answers, less reasoning"),
            effort("medium", "Balanced"),
            effort("high", "More reasoning for hard problems"),
        ],
        default_reasoning_effort: ReasoningEffort("medium".into()),
        input_modalities: vec![InputModality::Text, InputModality::Image],
        supports_personality: false,
        additional_speed_tiers: Vec::new(),
        service_tiers: Vec::new(),
        default_service_tier: None,
        model_specialty: None,
        multi_agent_version: None,
        available_access_programs: None,
        is_default,
    }
}
