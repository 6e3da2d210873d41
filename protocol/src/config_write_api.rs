//! `config/value/write` and `config/batchWrite`: edits of the user's `config.toml`, with the
//! version a client read (`config/read`) as an optimistic lock (docs/protocol.md §7.34).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config_api::ConfigLayerMetadata;
use crate::serde_util::null_as_default;

/// How a value is written at its key path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MergeStrategy {
    /// The value replaces what is at the path.
    Replace,
    /// A table is merged into the table at the path (key by key, recursively); any other
    /// value replaces what is there.
    Upsert,
}

/// `config/value/write` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigValueWriteParams {
    /// Dotted path (`features.goals`; a segment in double quotes may hold dots).
    pub key_path: String,
    /// The value (`null` removes the key).
    pub value: Value,
    /// How the value is written.
    pub merge_strategy: MergeStrategy,
    /// Path to the config file to write; defaults to the user's `config.toml` when omitted.
    #[serde(default)]
    pub file_path: Option<String>,
    /// The user layer's version the client last read; a different one is a conflict.
    #[serde(default)]
    pub expected_version: Option<String>,
}

/// One edit of `config/batchWrite`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigEdit {
    /// Dotted path.
    pub key_path: String,
    /// The value (`null` removes the key).
    pub value: Value,
    /// How the value is written.
    pub merge_strategy: MergeStrategy,
}

/// `config/batchWrite` params: every edit or none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigBatchWriteParams {
    /// The edits, applied in order.
    pub edits: Vec<ConfigEdit>,
    /// Path to the config file to write; defaults to the user's `config.toml` when omitted.
    #[serde(default)]
    pub file_path: Option<String>,
    /// The user layer's version the client last read.
    #[serde(default)]
    pub expected_version: Option<String>,
    /// When true, hot-reload updated runtime settings into loaded threads after writing.
    /// Session-static model, reasoning-effort, Plan-mode reasoning-effort, and service-tier
    /// defaults are not reloaded. The deprecated personality setting is also not reloaded.
    #[serde(default, deserialize_with = "null_as_default")]
    pub reload_user_config: bool,
}

/// Whether the written value is the one in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WriteStatus {
    /// Written and in effect.
    Ok,
    /// Written, but a higher layer (the command line) sets the path.
    OkOverridden,
}

/// The layer that overrides a written path, and the value in effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverriddenMetadata {
    /// `Overridden by session flags`.
    pub message: String,
    /// The overriding layer.
    pub overriding_layer: ConfigLayerMetadata,
    /// The value in effect at the path.
    pub effective_value: Value,
}

/// The result of both write methods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWriteResponse {
    /// Whether the written values are in effect.
    pub status: WriteStatus,
    /// The user layer's version after the write.
    pub version: String,
    /// Canonical path to the config file that was written.
    pub file_path: String,
    /// The first written path a higher layer overrides, if any.
    pub overridden_metadata: Option<OverriddenMetadata>,
}

/// Why a write was refused: `error.data.config_write_error_code` of the `-32600` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ConfigWriteErrorCode {
    /// `filePath` is not the user's `config.toml`.
    ConfigLayerReadonly,
    /// `expectedVersion` is not the file's version.
    ConfigVersionConflict,
    /// A key path or value is malformed, or the config it would make is invalid.
    ConfigValidationError,
    /// (Not produced by Weft.)
    ConfigPathNotFound,
    /// (Not produced by Weft: keys Weft does not know are kept, as at load.)
    ConfigSchemaUnknownKey,
    /// (Not produced by Weft.)
    UserLayerNotFound,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn params_and_results_use_the_reference_keys() {
        let params: ConfigBatchWriteParams = serde_json::from_value(json!({
            "edits": [{"keyPath": "model", "value": "m", "mergeStrategy": "replace"}],
            "expectedVersion": null, "reloadUserConfig": null}))
        .unwrap();
        assert_eq!(params.edits[0].merge_strategy, MergeStrategy::Replace);
        assert!(!params.reload_user_config);
        let response = ConfigWriteResponse {
            status: WriteStatus::OkOverridden,
            version: "sha256:x".into(),
            file_path: "/h/config.toml".into(),
            overridden_metadata: None,
        };
        assert_eq!(
            serde_json::to_value(&response).unwrap(),
            json!({"status": "okOverridden", "version": "sha256:x",
                "filePath": "/h/config.toml", "overriddenMetadata": null})
        );
        assert_eq!(
            serde_json::to_value(ConfigWriteErrorCode::ConfigVersionConflict).unwrap(),
            json!("configVersionConflict")
        );
    }
}
