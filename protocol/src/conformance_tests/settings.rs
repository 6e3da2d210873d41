//! Writing settings (docs/protocol.md §7.34): the params and results of the config writes,
//! the feature methods, `permissionProfile/list` and `thread/settings/update` validate against
//! both schemas with every key present.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::config_api::{ConfigLayerMetadata, ConfigLayerSource};
use crate::config_write_api::*;
use crate::features_api::*;
use crate::thread_settings_api::*;

#[test]
fn settings_params_and_results_validate() {
    let mut schemas = Schemas::load();
    for (expected_version, file_path) in [(None, None), (Some("sha256:x"), Some("/h/config.toml"))]
    {
        schemas.check_params::<methods::ConfigValueWrite>(&ConfigValueWriteParams {
            key_path: "features.goals".into(),
            value: json!(false),
            merge_strategy: MergeStrategy::Replace,
            file_path: file_path.map(str::to_string),
            expected_version: expected_version.map(str::to_string),
        });
        schemas.check_params::<methods::ConfigBatchWrite>(&ConfigBatchWriteParams {
            edits: vec![ConfigEdit {
                key_path: "model".into(),
                value: json!({"a": [1]}),
                merge_strategy: MergeStrategy::Upsert,
            }],
            file_path: file_path.map(str::to_string),
            expected_version: expected_version.map(str::to_string),
            reload_user_config: expected_version.is_some(),
        });
    }
    for overridden_metadata in [
        None,
        Some(OverriddenMetadata {
            message: "Overridden by session flags".into(),
            overriding_layer: ConfigLayerMetadata {
                name: ConfigLayerSource::SessionFlags,
                version: "sha256:y".into(),
            },
            effective_value: json!("m"),
        }),
    ] {
        let response = ConfigWriteResponse {
            status: if overridden_metadata.is_some() {
                WriteStatus::OkOverridden
            } else {
                WriteStatus::Ok
            },
            version: "sha256:x".into(),
            file_path: "/h/config.toml".into(),
            overridden_metadata,
        };
        schemas.check_result::<methods::ConfigValueWrite>(&response);
        schemas.check_result::<methods::ConfigBatchWrite>(&response);
    }
    schemas.check_params::<methods::ExperimentalFeatureList>(&ExperimentalFeatureListParams {
        cursor: Some("1".into()),
        limit: Some(2),
        thread_id: Some("t".into()),
    });
    schemas.check_result::<methods::ExperimentalFeatureList>(&ExperimentalFeatureListResponse {
        data: vec![
            ExperimentalFeature {
                name: "tool_search".into(),
                stage: ExperimentalFeatureStage::Beta,
                display_name: Some("Tool search".into()),
                description: Some("d".into()),
                announcement: Some(String::new()),
                enabled: false,
                default_enabled: false,
            },
            ExperimentalFeature {
                name: "goals".into(),
                stage: ExperimentalFeatureStage::Stable,
                display_name: None,
                description: None,
                announcement: None,
                enabled: true,
                default_enabled: true,
            },
        ],
        next_cursor: Some("2".into()),
    });
    let enablement = BTreeMap::from([("tool_search".to_string(), true)]);
    schemas.check_params::<methods::ExperimentalFeatureEnablementSet>(
        &ExperimentalFeatureEnablementSetParams {
            enablement: enablement.clone(),
        },
    );
    schemas.check_result::<methods::ExperimentalFeatureEnablementSet>(
        &ExperimentalFeatureEnablementSetResponse { enablement },
    );
    schemas.check_params::<methods::PermissionProfileList>(&PermissionProfileListParams {
        cursor: None,
        limit: Some(1),
        cwd: Some("/w".into()),
    });
    schemas.check_result::<methods::PermissionProfileList>(&PermissionProfileListResponse {
        data: vec![PermissionProfileSummary {
            id: ":read-only".into(),
            description: None,
            allowed: true,
        }],
        next_cursor: None,
    });
    schemas.check_params::<methods::ThreadSettingsUpdate>(&ThreadSettingsUpdateParams {
        thread_id: "t".into(),
        cwd: Some("/w".into()),
        approval_policy: Some(crate::AskForApproval::Never),
        approvals_reviewer: None,
        sandbox_policy: None,
        permissions: Some(":workspace".into()),
        model: Some("m".into()),
        service_tier: None,
        effort: Some("high".into()),
        summary: None,
        collaboration_mode: None,
        personality: None,
        multi_agent_mode: None,
        disabled_plugin_ids: Some(vec![]),
        environments: Some(vec![]),
    });
    schemas.check_result::<methods::ThreadSettingsUpdate>(&ThreadSettingsUpdateResponse {});
    for (path, name) in [(Some("/s/SKILL.md"), None), (None, Some("demo"))] {
        schemas.check_params::<methods::SkillsConfigWrite>(
            &crate::skills_write_api::SkillsConfigWriteParams {
                path: path.map(str::to_string),
                name: name.map(str::to_string),
                enabled: false,
            },
        );
    }
    schemas.check_result::<methods::SkillsConfigWrite>(
        &crate::skills_write_api::SkillsConfigWriteResponse {
            effective_enabled: false,
        },
    );
    provider_writes_validate(&mut schemas);
}

fn provider_writes_validate(schemas: &mut Schemas) {
    use crate::model_provider_api::{GatewayAuth, ModelProviderSummary, ProviderSettings};
    use crate::model_provider_write_api::{
        ModelProviderConfigWriteParams, ModelProviderConfigWriteResponse,
        ModelProviderDefaultSetParams, ProviderSettingsPatch,
    };
    for settings in [
        ProviderSettingsPatch::CustomGateway {
            provider_id: None,
            name: Some("My Gateway".into()),
            base_url: Some(Some("http://127.0.0.1:1/v1".into())),
            env_key: Some(Some("MY_KEY".into())),
        },
        ProviderSettingsPatch::CustomGateway {
            provider_id: Some("my-gateway".into()),
            name: Some("Renamed".into()),
            base_url: Some(None),
            env_key: Some(None),
        },
    ] {
        schemas.check_params::<methods::ModelProviderConfigWrite>(
            &ModelProviderConfigWriteParams { settings },
        );
    }
    schemas.check_result::<methods::ModelProviderConfigWrite>(&ModelProviderConfigWriteResponse {
        provider: ModelProviderSummary {
            id: "my-gateway".into(),
            name: "My Gateway".into(),
            can_edit: true,
            base_url: Some("http://127.0.0.1:1/v1".into()),
            settings: ProviderSettings::CustomGateway {
                auth: GatewayAuth::None,
            },
        },
    });
    schemas.check_params::<methods::ModelProviderDefaultSet>(&ModelProviderDefaultSetParams {
        provider_id: "my-gateway".into(),
    });
    schemas.check_result::<methods::ModelProviderDefaultSet>(&ConfigWriteResponse {
        status: WriteStatus::Ok,
        version: "sha256:x".into(),
        file_path: "/h/config.toml".into(),
        overridden_metadata: None,
    });
}
