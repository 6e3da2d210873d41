//! `model/list` (docs/protocol.md §7.16): the configured default model, the `[model_catalog]`
//! entries, and what the provider's `GET /models` lists (for OpenAI's API: the catalog's OpenAI
//! models), each described by the model catalog (docs/architecture.md §7.7).

use weft_core::model::catalog::{self, ModelInfo};
use weft_core::model::{ModelClient, provider_models};
use weft_protocol::ReasoningEffort;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::model_provider_api::ModelProviderError;
use weft_protocol::models::{
    InputModality, Model, ModelListParams, ModelListResponse, ReasoningEffortOption,
};

use crate::dispatch::{Context, HandlerResult};
use crate::handlers::page;

/// `model/list`.
pub async fn list(cx: Context<'_>, params: ModelListParams) -> HandlerResult<ModelListResponse> {
    let config = cx.state.threads.services().live.current();
    let provider_id = params
        .model_provider
        .clone()
        .unwrap_or_else(|| config.model_provider.clone());
    let Some(provider) = config.provider(&provider_id).cloned() else {
        return Err(provider_not_configured(&provider_id));
    };
    let catalog = &config.model_catalog;
    let openai = catalog::is_openai(&provider);
    let mut ids: Vec<String> = Vec::new();
    let mut add = |id: &str| {
        if !ids.iter().any(|known| known == id) {
            ids.push(id.to_string());
        }
    };
    let default_model = (provider_id == config.model_provider).then_some(config.model.as_str());
    if let Some(model) = default_model {
        add(model);
    }
    for slug in &catalog.configured {
        add(slug);
    }
    if openai {
        for model in catalog.openai_models() {
            add(&model.slug);
        }
    }
    let client = ModelClient::new(provider, cx.state.threads.services().http());
    match provider_models(&client, catalog).await {
        // OpenAI's list holds every model of the account (embeddings, audio…): only the ones
        // the catalog knows are coding models.
        Ok(listed) => listed
            .iter()
            .filter(|id| !openai || catalog.lookup(id).is_some())
            .for_each(|id| add(id)),
        Err(err) => tracing::debug!(%err, provider = %provider_id, "provider does not list models"),
    }
    let include_hidden = params.include_hidden == Some(true);
    let models: Vec<ModelInfo> = ids
        .iter()
        .map(|id| catalog.describe(id))
        .filter(|model| {
            include_hidden || !model.hidden || Some(model.slug.as_str()) == default_model
        })
        .collect();
    let start = match &params.cursor {
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| JsonRpcError::invalid_request(format!("invalid cursor: {cursor}")))?,
        None => 0,
    };
    let (models_page, more) = page(&models, start, params.limit);
    let data: Vec<Model> = models_page
        .iter()
        .map(|model| model_entry(model, Some(model.slug.as_str()) == default_model))
        .collect();
    let end = start + data.len();
    Ok(ModelListResponse {
        data,
        next_cursor: more.then(|| end.to_string()),
    })
}

/// The reference's error for a provider that is not configured, with its structured data.
pub fn provider_not_configured(provider: &str) -> JsonRpcError {
    let data = ModelProviderError::ModelProviderNotConfigured {
        model_provider: provider.to_string(),
    };
    JsonRpcError::invalid_request(format!(
        "This chat uses model provider “{provider}”, which is no longer configured. \
         Restore this provider’s configuration to continue."
    ))
    .with_data(serde_json::to_value(data).unwrap_or_default())
}

/// One catalog entry on the wire.
fn model_entry(model: &ModelInfo, is_default: bool) -> Model {
    let supported_reasoning_efforts = model
        .reasoning_efforts
        .iter()
        .map(|effort| ReasoningEffortOption {
            reasoning_effort: ReasoningEffort(effort.clone()),
            description: effort_description(effort),
        })
        .collect();
    let default_effort = model
        .default_reasoning_effort
        .clone()
        .or_else(|| model.reasoning_efforts.first().cloned())
        .unwrap_or_else(|| "none".to_string());
    let description = if model.description.is_empty() {
        format!(
            "{} (listed by the provider or the configuration)",
            model.slug
        )
    } else {
        model.description.clone()
    };
    let display_name = if model.display_name.is_empty() {
        model.slug.clone()
    } else {
        model.display_name.clone()
    };
    Model {
        id: model.slug.clone(),
        model: model.slug.clone(),
        upgrade: None,
        upgrade_info: None,
        availability_nux: None,
        display_name,
        description,
        hidden: model.hidden,
        supported_reasoning_efforts,
        default_reasoning_effort: ReasoningEffort(default_effort),
        input_modalities: model
            .input_modalities
            .iter()
            .filter_map(|modality| match modality.as_str() {
                "text" => Some(InputModality::Text),
                "image" => Some(InputModality::Image),
                _ => None,
            })
            .collect(),
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

/// Weft's words for a reasoning effort.
fn effort_description(effort: &str) -> String {
    match effort {
        "none" => "No reasoning",
        "minimal" => "The least reasoning, for the quickest answers",
        "low" => "Light reasoning, quicker answers",
        "medium" => "Reasoning and speed in balance",
        "high" => "Deep reasoning for hard problems",
        "xhigh" => "The deepest reasoning, for the hardest problems",
        other => other,
    }
    .to_string()
}
