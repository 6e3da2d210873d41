//! `modelProvider/config/write` and `modelProvider/default/set` (docs/protocol.md §7.35): a
//! client adds or edits a custom gateway (any OpenAI-compatible server) in the user's
//! `config.toml`, and picks the provider new threads use.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model_provider_api::ModelProviderSummary;

/// Params of `modelProvider/config/write`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelProviderConfigWriteParams {
    /// What to write.
    pub settings: ProviderSettingsPatch,
}

/// Omitted patch fields preserve their values. Explicit null clears a nullable field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum ProviderSettingsPatch {
    /// A custom provider: an OpenAI-compatible server.
    #[serde(rename_all = "camelCase")]
    #[schemars(title = "CustomGatewayProviderSettingsPatch")]
    CustomGateway {
        /// Omit or pass null to allocate a new custom provider ID.
        #[serde(default)]
        provider_id: Option<String>,
        /// The name shown for it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Its address (`http(s)`, without credentials, query or fragment).
        #[serde(
            default,
            deserialize_with = "crate::serde_util::present_or_null",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(schema_with = "crate::schema_base::nullable_string")]
        base_url: Option<Option<String>>,
        /// The environment variable holding its API key.
        #[serde(
            default,
            deserialize_with = "crate::serde_util::present_or_null",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(schema_with = "crate::schema_base::nullable_string")]
        env_key: Option<Option<String>>,
    },
    /// AWS configuration fields for built-in Bedrock providers (Weft has none: refused).
    #[serde(rename_all = "camelCase")]
    #[schemars(title = "BedrockProviderSettingsPatch")]
    Bedrock {
        /// `amazon-bedrock` or `amazon-bedrock-runtime`.
        provider_id: BedrockProviderId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(schema_with = "crate::schema_base::nullable_string")]
        /// The AWS profile.
        profile: Option<Option<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(schema_with = "crate::schema_base::nullable_string")]
        /// The AWS region.
        region: Option<Option<String>>,
    },
    /// GCP configuration fields (Weft has no GCP provider: refused).
    #[serde(rename_all = "camelCase")]
    #[schemars(title = "GcpProviderSettingsPatch")]
    Gcp {
        /// `gcp`.
        provider_id: GcpProviderId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(schema_with = "crate::schema_base::nullable_string")]
        /// A credential file on the app-server host.
        credential_file: Option<Option<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(schema_with = "crate::schema_base::nullable_string")]
        /// The GCP location.
        location: Option<Option<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(schema_with = "crate::schema_base::nullable_string")]
        /// The GCP project.
        project_id: Option<Option<String>>,
    },
}

/// The reference's Bedrock provider ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum BedrockProviderId {
    /// `amazon-bedrock`.
    #[serde(rename = "amazon-bedrock")]
    AmazonBedrock,
    /// `amazon-bedrock-runtime`.
    #[serde(rename = "amazon-bedrock-runtime")]
    AmazonBedrockRuntime,
}

/// The reference's GCP provider id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum GcpProviderId {
    /// `gcp`.
    #[serde(rename = "gcp")]
    Gcp,
}

/// Result of `modelProvider/config/write`: the provider as `modelProvider/list` now lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderConfigWriteResponse {
    /// The provider.
    pub provider: ModelProviderSummary,
}

/// Params of `modelProvider/default/set` (the result is `config/value/write`'s).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderDefaultSetParams {
    /// Configured provider to use by default for new threads and unscoped model lists.
    pub provider_id: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_patch_tells_omitted_from_null() {
        let params: ModelProviderConfigWriteParams = serde_json::from_value(json!({
            "settings": {"type": "customGateway", "providerId": "p", "baseUrl": null}
        }))
        .unwrap();
        assert_eq!(
            params.settings,
            ProviderSettingsPatch::CustomGateway {
                provider_id: Some("p".into()),
                name: None,
                base_url: Some(None),
                env_key: None,
            }
        );
        assert!(
            serde_json::from_value::<ModelProviderConfigWriteParams>(
                json!({"settings": {"type": "customGateway"}, "extra": 1})
            )
            .is_err()
        );
        let bedrock: ProviderSettingsPatch = serde_json::from_value(
            json!({"type": "bedrock", "providerId": "amazon-bedrock", "region": "r"}),
        )
        .unwrap();
        assert!(matches!(bedrock, ProviderSettingsPatch::Bedrock { .. }));
    }
}
