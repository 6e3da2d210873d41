//! `modelProvider/config/write` and `modelProvider/default/set` (docs/protocol.md §7.35):
//! a custom gateway added or edited, the default provider chosen, each one config write
//! (`weft_core::config::provider_write`, then the writer every config write goes through).

use weft_core::config::provider_write::{default_edit, provider_edits};
use weft_protocol::ConfigWriteResponse;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::model_provider_write_api::{
    ModelProviderConfigWriteParams, ModelProviderConfigWriteResponse, ModelProviderDefaultSetParams,
};

use super::config_write::write_edits;
use super::model_providers::listed;
use crate::dispatch::{Context, HandlerResult};

/// `modelProvider/config/write`: the provider as it is listed after the write.
pub async fn config_write(
    cx: Context<'_>,
    params: ModelProviderConfigWriteParams,
) -> HandlerResult<ModelProviderConfigWriteResponse> {
    let (_, config, id) = write_edits(&cx, None, None, move |current| {
        let (id, edits) = provider_edits(current, &params.settings)?;
        Ok((edits, id))
    })
    .await?;
    let provider = listed(&config, &id).ok_or_else(|| {
        JsonRpcError::internal(format!("provider `{id}` is missing after the write"))
    })?;
    Ok(ModelProviderConfigWriteResponse { provider })
}

/// `modelProvider/default/set`: `model_provider` written; the answer is a config write's.
pub async fn default_set(
    cx: Context<'_>,
    params: ModelProviderDefaultSetParams,
) -> HandlerResult<ConfigWriteResponse> {
    let (response, _, ()) = write_edits(&cx, None, None, move |current| {
        Ok((vec![default_edit(current, &params.provider_id)?], ()))
    })
    .await?;
    Ok(response)
}
