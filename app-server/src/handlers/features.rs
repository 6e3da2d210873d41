//! `experimentalFeature/list` and `experimentalFeature/enablement/set` (docs/protocol.md
//! §7.34): Weft's feature switches (`[features]`, `weft_core::config::Features`) with the
//! reference's stage names, and the runtime switch of the one feature a loaded thread reads at
//! each turn (`tool_search`).

use weft_core::config::Config;
use weft_core::config::live::LiveConfig;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{
    ExperimentalFeature, ExperimentalFeatureEnablementSetParams,
    ExperimentalFeatureEnablementSetResponse, ExperimentalFeatureListParams,
    ExperimentalFeatureListResponse, ExperimentalFeatureStage, ThreadId,
};

use crate::dispatch::{Context, HandlerResult};
use crate::handlers::{loaded_thread, page};

/// One of Weft's features: its key, stage, default, and (for a beta one) how clients show it.
struct FeatureSpec {
    name: &'static str,
    stage: ExperimentalFeatureStage,
    default_enabled: bool,
    beta: Option<(&'static str, &'static str)>,
    enabled: fn(&Config, &LiveConfig) -> bool,
}

/// Weft's features, in the order `[features]` documents them (README, "Configuration").
const FEATURES: &[FeatureSpec] = &[
    FeatureSpec {
        name: "goals",
        stage: ExperimentalFeatureStage::Stable,
        default_enabled: true,
        beta: None,
        enabled: |config, _| config.features.goals,
    },
    FeatureSpec {
        name: "tool_search",
        stage: ExperimentalFeatureStage::Beta,
        default_enabled: false,
        beta: Some((
            "Tool search",
            "Defer MCP tools behind a tool_search tool the model calls to find them (Responses wire API, models that support client tool search).",
        )),
        enabled: |_, live| live.tool_search(),
    },
    FeatureSpec {
        name: "multi_agent",
        stage: ExperimentalFeatureStage::Stable,
        default_enabled: true,
        beta: None,
        enabled: |config, _| config.features.multi_agent,
    },
    FeatureSpec {
        name: "multi_agent_v2",
        stage: ExperimentalFeatureStage::Stable,
        default_enabled: false,
        beta: None,
        enabled: |config, _| config.features.multi_agent_v2.enabled,
    },
];

/// `experimentalFeature/list`: a page of features (all of them without `limit`), the cursor
/// an offset. With `threadId` the thread must be loaded (its features are the daemon's).
pub async fn list(
    cx: Context<'_>,
    params: ExperimentalFeatureListParams,
) -> HandlerResult<ExperimentalFeatureListResponse> {
    if let Some(thread_id) = &params.thread_id {
        loaded_thread(cx.state, &ThreadId::from(thread_id.as_str()))?;
    }
    let start = match params.cursor.as_deref() {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| JsonRpcError::invalid_request(format!("invalid cursor: {cursor}")))?,
    };
    if start > FEATURES.len() {
        return Err(JsonRpcError::invalid_request(format!(
            "cursor {start} exceeds total feature flags {}",
            FEATURES.len()
        )));
    }
    let live = &cx.state.threads.services().live;
    let config = live.current();
    let (items, more) = page(FEATURES, start, params.limit);
    let data = items
        .iter()
        .map(|spec| ExperimentalFeature {
            name: spec.name.to_string(),
            stage: spec.stage,
            display_name: spec.beta.map(|(name, _)| name.to_string()),
            description: spec.beta.map(|(_, description)| description.to_string()),
            announcement: spec.beta.map(|_| String::new()),
            enabled: (spec.enabled)(&config, live),
            default_enabled: spec.default_enabled,
        })
        .collect();
    Ok(ExperimentalFeatureListResponse {
        data,
        next_cursor: more.then(|| (start + items.len()).to_string()),
    })
}

/// `experimentalFeature/enablement/set`: the runtime switches this request applied. Only
/// `tool_search` switches at runtime, and only when the config's `[features]` does not set it
/// (the config wins); other names are left out of the answer, as the reference leaves out what
/// it does not apply.
pub async fn enablement_set(
    cx: Context<'_>,
    params: ExperimentalFeatureEnablementSetParams,
) -> HandlerResult<ExperimentalFeatureEnablementSetResponse> {
    let live = &cx.state.threads.services().live;
    Ok(ExperimentalFeatureEnablementSetResponse {
        enablement: live.set_enablement(&params.enablement),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_feature_is_listed_once() {
        let names: Vec<&str> = FEATURES.iter().map(|spec| spec.name).collect();
        assert_eq!(names, weft_core::config::KNOWN_FEATURES);
        for spec in FEATURES {
            assert_eq!(
                spec.beta.is_some(),
                spec.stage == ExperimentalFeatureStage::Beta
            );
        }
    }
}
