//! `account/read` and `account/bedrock/checkGovCloudRequirements`: Weft signs in to no hosted
//! account and needs none; a provider's key comes from its `env_key` variable
//! (docs/protocol.md §7.18, §7.19). Both answer the same to every request (the route's mode
//! is `fixed`).

use weft_protocol::account::{BedrockCheckGovCloudRequirementsResponse, GetAccountResponse};

/// `account/read`: no account, and none required (`refreshToken` has nothing to refresh).
pub fn read() -> GetAccountResponse {
    GetAccountResponse::no_account()
}

/// `account/bedrock/checkGovCloudRequirements`: Weft has no Bedrock authentication, so none
/// resolves to a GovCloud region and there is nothing to warn about.
pub fn check_gov_cloud() -> BedrockCheckGovCloudRequirementsResponse {
    BedrockCheckGovCloudRequirementsResponse {
        is_gov_cloud: false,
        should_warn: false,
    }
}
