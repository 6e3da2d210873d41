//! `account/read` and `account/bedrock/checkGovCloudRequirements`: what a client learns about
//! the account the server signs in with. Weft signs in to no hosted account: a provider's key
//! comes from its `env_key` variable (docs/protocol.md §7.18).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::serde_util::null_as_default;

/// `account/read` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAccountParams {
    /// Asks for a proactive token refresh; Weft holds no tokens, so there is nothing to refresh.
    #[serde(default, deserialize_with = "null_as_default")]
    pub refresh_token: bool,
}

/// `account/read` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAccountResponse {
    /// The signed-in account: always `null` from Weft.
    pub account: Option<Value>,
    /// The hosted user id: always `null` from Weft.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Whether the client must sign in to OpenAI before it can work: `false`, Weft never needs it.
    pub requires_openai_auth: bool,
    /// Hosted workspace routing: always `null` from Weft.
    #[serde(default)]
    pub workspace_routing: Option<Value>,
}

impl GetAccountResponse {
    /// Weft's answer: no account, none needed.
    pub fn no_account() -> Self {
        GetAccountResponse {
            account: None,
            user_id: None,
            requires_openai_auth: false,
            workspace_routing: None,
        }
    }
}

/// `account/bedrock/checkGovCloudRequirements` params (none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BedrockCheckGovCloudRequirementsParams {}

/// `account/bedrock/checkGovCloudRequirements` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BedrockCheckGovCloudRequirementsResponse {
    /// Whether the active Bedrock authentication resolves to a GovCloud region.
    pub is_gov_cloud: bool,
    /// Whether the client should warn about missing GovCloud requirements.
    pub should_warn: bool,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn no_account_is_written_whole_and_in_the_reference_order() {
        let text = serde_json::to_string(&GetAccountResponse::no_account()).unwrap();
        assert_eq!(
            text,
            r#"{"account":null,"userId":null,"requiresOpenaiAuth":false,"workspaceRouting":null}"#
        );
    }

    #[test]
    fn params_accept_omitted_and_null_refresh_token() {
        for params in [
            json!({}),
            json!({"refreshToken": null}),
            json!({"refreshToken": false}),
        ] {
            let decoded: GetAccountParams = serde_json::from_value(params).unwrap();
            assert!(!decoded.refresh_token);
        }
        let decoded: GetAccountParams =
            serde_json::from_value(json!({"refreshToken": true})).unwrap();
        assert!(decoded.refresh_token);
    }
}
