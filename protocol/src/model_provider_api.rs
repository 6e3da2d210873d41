//! `modelProvider/list` and `modelProvider/capabilities/read` (docs/protocol.md §7.35), and the
//! structured error data a request naming an unknown provider answers with.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `modelProvider/list` (an empty object).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelProviderListParams {}

/// Result of `modelProvider/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderListResponse {
    /// The configured providers and OpenAI's, by id.
    pub data: Vec<ModelProviderSummary>,
    /// The provider new threads use.
    pub default_provider_id: String,
    /// Whether `modelProvider/default/set` can change the default.
    pub can_change_default: bool,
}

/// One provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderSummary {
    /// Provider id (the `[model_providers.<id>]` key).
    pub id: String,
    /// Display name (the id when unnamed).
    pub name: String,
    /// Whether a supported configuration field can be edited in the active user layer.
    pub can_edit: bool,
    /// Null when the endpoint is absent or cannot be safely displayed.
    pub base_url: Option<String>,
    /// How the provider is set up.
    pub settings: ProviderSettings,
}

/// A provider's kind and what of its setup may be shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ProviderSettings {
    /// OpenAI's API.
    #[schemars(title = "OpenaiProviderSettings")]
    Openai,
    /// An OpenAI-compatible gateway.
    #[schemars(title = "CustomGatewayProviderSettings")]
    CustomGateway {
        /// How requests are authenticated.
        auth: GatewayAuth,
    },
    /// Amazon Bedrock (never produced by Weft).
    #[schemars(title = "BedrockProviderSettings")]
    Bedrock {
        /// AWS profile.
        #[serde(default)]
        profile: Option<String>,
        /// AWS region.
        #[serde(default)]
        region: Option<String>,
    },
    /// Google Cloud (never produced by Weft).
    #[schemars(title = "GcpProviderSettings")]
    Gcp {
        /// Path on the app-server host, without credential-file contents.
        #[serde(default, rename = "credentialFile")]
        credential_file: Option<String>,
        /// Region.
        #[serde(default)]
        location: Option<String>,
        /// Project.
        #[serde(default, rename = "projectId")]
        project_id: Option<String>,
    },
}

/// How a gateway's requests are authenticated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum GatewayAuth {
    /// No credentials.
    #[schemars(title = "NoneGatewayAuth")]
    None,
    /// A bearer token from an environment variable.
    EnvironmentVariable {
        /// The variable's name.
        #[serde(rename = "envKey")]
        env_key: String,
    },
    /// Authentication is configured outside the gateway form. Preserve it on edits.
    #[schemars(title = "ModeGatewayAuth")]
    ExternallyConfigured {
        /// The key variable, when one is set too.
        #[serde(default, rename = "envKey")]
        env_key: Option<String>,
    },
}

/// Params of `modelProvider/capabilities/read` (an empty object).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelProviderCapabilitiesReadParams {}

/// Result of `modelProvider/capabilities/read`: the default provider's hosted tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderCapabilitiesReadResponse {
    /// Whether the image generation tool is available.
    pub image_generation: bool,
    /// Whether the web search tool is available.
    pub web_search: bool,
}

/// The `data` of an error about the provider a request names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ModelProviderError {
    /// The provider is not (or no longer) configured.
    #[serde(rename_all = "camelCase")]
    ModelProviderNotConfigured {
        /// The provider named.
        model_provider: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_wire_shapes_are_the_references() {
        let list = ModelProviderListResponse {
            data: vec![
                ModelProviderSummary {
                    id: "b1".into(),
                    name: "b1".into(),
                    can_edit: false,
                    base_url: Some("http://127.0.0.1:1/v1".into()),
                    settings: ProviderSettings::CustomGateway {
                        auth: GatewayAuth::EnvironmentVariable {
                            env_key: "B1_KEY".into(),
                        },
                    },
                },
                ModelProviderSummary {
                    id: "openai".into(),
                    name: "OpenAI".into(),
                    can_edit: false,
                    base_url: None,
                    settings: ProviderSettings::Openai,
                },
            ],
            default_provider_id: "b1".into(),
            can_change_default: false,
        };
        assert_eq!(
            serde_json::to_value(&list).unwrap(),
            json!({"data": [
                {"id": "b1", "name": "b1", "canEdit": false, "baseUrl": "http://127.0.0.1:1/v1",
                 "settings": {"type": "customGateway",
                              "auth": {"mode": "environmentVariable", "envKey": "B1_KEY"}}},
                {"id": "openai", "name": "OpenAI", "canEdit": false, "baseUrl": null,
                 "settings": {"type": "openai"}}
            ], "defaultProviderId": "b1", "canChangeDefault": false})
        );
        let external = GatewayAuth::ExternallyConfigured { env_key: None };
        assert_eq!(
            serde_json::to_value(&external).unwrap(),
            json!({"mode": "externallyConfigured", "envKey": null})
        );
        assert_eq!(
            serde_json::to_value(ModelProviderError::ModelProviderNotConfigured {
                model_provider: "nope".into()
            })
            .unwrap(),
            json!({"type": "modelProviderNotConfigured", "modelProvider": "nope"})
        );
        let params: ModelProviderListParams = serde_json::from_value(json!({"x": 1})).unwrap();
        assert_eq!(params, ModelProviderListParams {});
    }
}
