//! `account/read` and `account/bedrock/checkGovCloudRequirements`: Weft signs in to no hosted
//! account and needs none; a provider's key comes from its `env_key` variable
//! (docs/protocol.md §7.18, §7.19).

use weft_protocol::account::{
    BedrockCheckGovCloudRequirementsParams, BedrockCheckGovCloudRequirementsResponse,
    GetAccountParams, GetAccountResponse,
};

use crate::dispatch::{Context, HandlerResult};

/// `account/read`: no account, and none required (`refreshToken` has nothing to refresh).
pub async fn read(
    _cx: Context<'_>,
    _params: GetAccountParams,
) -> HandlerResult<GetAccountResponse> {
    Ok(GetAccountResponse::no_account())
}

/// `account/bedrock/checkGovCloudRequirements`: Weft has no Bedrock authentication, so none
/// resolves to a GovCloud region and there is nothing to warn about.
pub async fn check_gov_cloud(
    _cx: Context<'_>,
    _params: BedrockCheckGovCloudRequirementsParams,
) -> HandlerResult<BedrockCheckGovCloudRequirementsResponse> {
    Ok(BedrockCheckGovCloudRequirementsResponse {
        is_gov_cloud: false,
        should_warn: false,
    })
}
