//! `account/read` and `account/bedrock/checkGovCloudRequirements`: Weft signs in to no hosted
//! account and needs none; a provider's key comes from its `env_key` variable
//! (docs/protocol.md §7.18, §7.19).

use std::sync::Arc;

use weft_protocol::account::{
    BedrockCheckGovCloudRequirementsParams, BedrockCheckGovCloudRequirementsResponse,
    GetAccountParams, GetAccountResponse,
};
use weft_protocol::jsonrpc::JsonRpcError;

use crate::connection::Connection;
use crate::state::AppState;

/// `account/read`: no account, and none required (`refreshToken` has nothing to refresh).
pub async fn read(
    _state: &AppState,
    _connection: &Arc<Connection>,
    _params: GetAccountParams,
) -> Result<GetAccountResponse, JsonRpcError> {
    Ok(GetAccountResponse::no_account())
}

/// `account/bedrock/checkGovCloudRequirements`: Weft has no Bedrock authentication, so none
/// resolves to a GovCloud region and there is nothing to warn about.
pub async fn check_gov_cloud(
    _state: &AppState,
    _connection: &Arc<Connection>,
    _params: BedrockCheckGovCloudRequirementsParams,
) -> Result<BedrockCheckGovCloudRequirementsResponse, JsonRpcError> {
    Ok(BedrockCheckGovCloudRequirementsResponse {
        is_gov_cloud: false,
        should_warn: false,
    })
}
