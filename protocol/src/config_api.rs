//! `config/read` and `configRequirements/read`: the effective configuration with the layers it
//! came from, and what the server requires of it (docs/protocol.md §7.20, §7.21).

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::policy::{
    ApprovalsReviewer, AskForApproval, ReasoningEffort, ReasoningSummary, SandboxMode,
};
use crate::serde_util::null_as_default;

/// `config/read` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReadParams {
    /// Also return every layer, highest precedence first.
    #[serde(default, deserialize_with = "null_as_default")]
    pub include_layers: bool,
    /// The directory the config is seen from. Weft has no per-project layers, so every cwd sees
    /// the same config.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// `config/read` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReadResponse {
    /// The effective configuration.
    pub config: Config,
    /// Which layer set each leaf key (dotted paths, e.g. `model_providers.local.base_url`).
    pub origins: BTreeMap<String, ConfigLayerMetadata>,
    /// Every layer, highest precedence first, when `includeLayers` was set; `null` otherwise.
    pub layers: Option<Vec<ConfigLayer>>,
}

/// The effective configuration: the reference's keys (`null` where Weft has no such setting)
/// and, in `additional`, Weft's other keys with their effective values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Config {
    /// Default model.
    pub model: Option<String>,
    /// The model reviews ask (`review/start`); `null`: the thread's model.
    pub review_model: Option<String>,
    /// The model's context window in tokens, when configured.
    pub model_context_window: Option<i64>,
    /// Tokens in use that start automatic compaction, when configured.
    pub model_auto_compact_token_limit: Option<i64>,
    /// Not a Weft setting.
    pub model_auto_compact_token_limit_scope: Option<Value>,
    /// Default provider id.
    pub model_provider: Option<String>,
    /// Default approval policy.
    pub approval_policy: Option<AskForApproval>,
    /// Who reviews approvals; Weft has only the user.
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Default sandbox mode.
    pub sandbox_mode: Option<SandboxMode>,
    /// Not a Weft setting.
    pub sandbox_workspace_write: Option<Value>,
    /// Not a Weft setting.
    pub forced_chatgpt_workspace_id: Option<Value>,
    /// Not a Weft setting.
    pub forced_login_method: Option<Value>,
    /// Not a Weft setting.
    pub web_search: Option<Value>,
    /// Not a Weft setting.
    pub client_search_provider: Option<Value>,
    /// Not a Weft setting.
    pub tools: Option<Value>,
    /// Not a Weft setting.
    pub instructions: Option<String>,
    /// Not a Weft setting.
    pub developer_instructions: Option<String>,
    /// Not a Weft setting.
    pub compact_prompt: Option<String>,
    /// Default reasoning effort.
    pub model_reasoning_effort: Option<ReasoningEffort>,
    /// Default reasoning summary mode.
    pub model_reasoning_summary: Option<ReasoningSummary>,
    /// Not a Weft setting.
    pub model_verbosity: Option<Value>,
    /// Not a Weft setting.
    pub service_tier: Option<String>,
    /// Not a Weft setting.
    pub analytics: Option<Value>,
    /// Not a Weft setting.
    pub apps: Option<Value>,
    /// Not a Weft setting.
    pub browser_use: Option<Value>,
    /// Not a Weft setting.
    pub computer_use: Option<Value>,
    /// Not a Weft setting.
    pub desktop: Option<Value>,
    /// Weft's other keys (`model_providers`, `hooks`, `shell_environment_policy`, …).
    #[serde(flatten)]
    pub additional: BTreeMap<String, Value>,
}

/// Where a layer came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ConfigLayerSource {
    /// The user's `config.toml` (`$WEFT_HOME/config.toml`), whether or not it exists.
    User {
        /// Its path.
        file: String,
        /// Profile name (Weft has no profiles: `null`).
        #[serde(default)]
        profile: Option<String>,
    },
    /// The command line's `-c key=value`, `--enable`, `--disable`.
    SessionFlags,
}

/// A layer's name and version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConfigLayerMetadata {
    /// Where the layer came from.
    pub name: ConfigLayerSource,
    /// `sha256:` and the hex SHA-256 of the layer's config as compact JSON with sorted keys.
    pub version: String,
}

/// One layer: its source, version and the keys it sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigLayer {
    /// Where the layer came from.
    pub name: ConfigLayerSource,
    /// As in [`ConfigLayerMetadata::version`].
    pub version: String,
    /// The keys this layer sets, as written.
    pub config: Value,
    /// Why the layer is not applied; `null`: Weft applies every layer it lists.
    #[serde(default)]
    pub disabled_reason: Option<String>,
}

/// `configRequirements/read` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigRequirementsReadResponse {
    /// Whether Fast and Ultra Fast speed requirements are enforced independently: `false`,
    /// Weft enforces no speed requirements.
    #[serde(default)]
    pub supports_independent_speed_modes: Option<bool>,
    /// Requirements an administrator imposes on the config: `null`, Weft has none.
    pub requirements: Option<Value>,
}

/// The params of a method that takes none (`configRequirements/read`): absent, `null` or `{}`.
/// Anything else is refused with serde's wording for a unit, as the reference does
/// (``invalid type: map, expected unit``).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoParams;

impl NoParams {
    /// Always true: a request carrying no params is written without `params`.
    pub fn is_absent(&self) -> bool {
        true
    }
}

impl Serialize for NoParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit()
    }
}

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct UnitVisitor;

        impl<'de> Visitor<'de> for UnitVisitor {
            type Value = NoParams;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("unit")
            }

            fn visit_unit<E: de::Error>(self) -> Result<NoParams, E> {
                Ok(NoParams)
            }

            fn visit_none<E: de::Error>(self) -> Result<NoParams, E> {
                Ok(NoParams)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoParams, A::Error> {
                match map.next_key::<de::IgnoredAny>()? {
                    None => Ok(NoParams),
                    Some(_) => Err(de::Error::invalid_type(de::Unexpected::Map, &self)),
                }
            }

            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<NoParams, A::Error> {
                Err(de::Error::invalid_type(de::Unexpected::Seq, &self))
            }
        }

        deserializer.deserialize_any(UnitVisitor)
    }
}

impl JsonSchema for NoParams {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoParams".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "null" })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn no_params_accepts_absent_null_and_empty_only() {
        assert!(serde_json::from_value::<NoParams>(json!(null)).is_ok());
        assert!(serde_json::from_value::<NoParams>(json!({})).is_ok());
        let err = serde_json::from_value::<NoParams>(json!({"x": 1})).unwrap_err();
        assert_eq!(err.to_string(), "invalid type: map, expected unit");
        let err = serde_json::from_value::<NoParams>(json!([])).unwrap_err();
        assert_eq!(err.to_string(), "invalid type: sequence, expected unit");
    }

    #[test]
    fn requirements_answer_in_the_reference_order() {
        let text = serde_json::to_string(&ConfigRequirementsReadResponse {
            supports_independent_speed_modes: Some(false),
            requirements: None,
        })
        .unwrap();
        assert_eq!(
            text,
            r#"{"supportsIndependentSpeedModes":false,"requirements":null}"#
        );
    }

    #[test]
    fn layer_sources_are_tagged_like_the_reference() {
        let user = ConfigLayerSource::User {
            file: "/h/config.toml".into(),
            profile: None,
        };
        assert_eq!(
            serde_json::to_value(&user).unwrap(),
            json!({"type": "user", "file": "/h/config.toml", "profile": null})
        );
        assert_eq!(
            serde_json::to_value(ConfigLayerSource::SessionFlags).unwrap(),
            json!({"type": "sessionFlags"})
        );
    }

    #[test]
    fn config_writes_reference_keys_and_flattens_weft_keys() {
        let mut config = Config {
            model: Some("m".into()),
            ..Config::default()
        };
        config
            .additional
            .insert("thread_idle_timeout_secs".into(), json!(1800));
        let value = serde_json::to_value(&config).unwrap();
        assert_eq!(value["model"], json!("m"));
        assert_eq!(value["web_search"], Value::Null);
        assert!(value.as_object().unwrap().contains_key("desktop"));
        assert_eq!(value["thread_idle_timeout_secs"], json!(1800));
    }
}
