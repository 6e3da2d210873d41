//! The start-up methods the Codex TUI sends (`account/read`, `config/read`, `hooks/list`,
//! `skills/list`, …): what Weft answers validates against both schemas and writes every key.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{REF_EXPERIMENTAL, Schemas, to_value};
use crate::account::{BedrockCheckGovCloudRequirementsResponse, GetAccountResponse};
use crate::config_api::{
    Config, ConfigLayer, ConfigLayerMetadata, ConfigLayerSource, ConfigReadResponse,
    ConfigRequirementsReadResponse,
};
use crate::hooks_api::{
    HookErrorInfo, HookEventName, HookHandlerType, HookMetadata, HookSource, HookTrustStatus,
    HooksListEntry, HooksListResponse,
};
use crate::skills_api::{
    SkillDependencies, SkillErrorInfo, SkillInterface, SkillMetadata, SkillScope,
    SkillToolDependency, SkillsListEntry, SkillsListResponse,
};
use crate::test_support::read_reference_json;
use crate::{AskForApproval, SandboxMode, methods};

/// Like [`Schemas::check`], against the experimental reference (for methods the stable one
/// lacks).
fn check_experimental(schemas: &mut Schemas, file: &str, instance: &Value, what: &str) {
    let key = format!("experimental:{file}");
    if !schemas.reference.contains_key(&key) {
        let value = read_reference_json(&format!("{REF_EXPERIMENTAL}{file}"));
        schemas.reference.insert(key.clone(), Box::new(value));
    }
    schemas.assert_valid_in(
        schemas.ours(file),
        instance,
        &format!("{what} vs our {file}"),
    );
    let reference = &schemas.reference[&key];
    schemas.assert_valid_in(reference, instance, &format!("{what} vs reference {file}"));
    let mut missing = Vec::new();
    schemas.all_keys_present(instance, reference, reference, "$", &mut missing);
    assert!(missing.is_empty(), "{what}: keys not written: {missing:?}");
}

#[test]
fn account_and_requirements_answers_validate() {
    let mut schemas = Schemas::load();
    schemas.check_result::<methods::AccountRead>(&GetAccountResponse::no_account());
    check_experimental(
        &mut schemas,
        "v2/BedrockCheckGovCloudRequirementsResponse.json",
        &to_value(&BedrockCheckGovCloudRequirementsResponse {
            is_gov_cloud: false,
            should_warn: false,
        }),
        "account/bedrock/checkGovCloudRequirements",
    );
    schemas.check_result::<methods::ConfigRequirementsRead>(&ConfigRequirementsReadResponse {
        supports_independent_speed_modes: Some(false),
        requirements: None,
    });
}

#[test]
fn config_read_answer_validates() {
    let mut schemas = Schemas::load();
    let user = ConfigLayerSource::User {
        file: "/home/me/.weft/config.toml".into(),
        profile: None,
    };
    let mut additional = BTreeMap::new();
    additional.insert(
        "model_providers".to_string(),
        json!({"mock": {"name": "mock", "base_url": "http://127.0.0.1:1/v1"}}),
    );
    let config = Config {
        model: Some("mock-model".into()),
        model_provider: Some("mock".into()),
        approval_policy: Some(AskForApproval::OnRequest),
        sandbox_mode: Some(SandboxMode::WorkspaceWrite),
        model_context_window: Some(128_000),
        model_reasoning_effort: Some("high".into()),
        additional,
        ..Config::default()
    };
    let mut origins = BTreeMap::new();
    origins.insert(
        "model".to_string(),
        ConfigLayerMetadata {
            name: user.clone(),
            version: "sha256:00".into(),
        },
    );
    let layers = vec![
        ConfigLayer {
            name: ConfigLayerSource::SessionFlags,
            version: "sha256:01".into(),
            config: json!({"model_context_window": 128000}),
            disabled_reason: None,
        },
        ConfigLayer {
            name: user,
            version: "sha256:00".into(),
            config: json!({"model": "mock-model"}),
            disabled_reason: None,
        },
    ];
    for layers in [Some(layers), None] {
        let response = ConfigReadResponse {
            config: config.clone(),
            origins: origins.clone(),
            layers,
        };
        schemas.check_result::<methods::ConfigRead>(&response);
    }
}

#[test]
fn hooks_list_answer_validates() {
    let mut schemas = Schemas::load();
    let hook = HookMetadata {
        key: "/h/config.toml:stop:0:0".into(),
        event_name: HookEventName::Stop,
        handler_type: HookHandlerType::Command,
        command: "echo hi".into(),
        is_async: false,
        matcher: None,
        timeout_sec: 60,
        status_message: None,
        additional_context_limit: None,
        source_path: "/h/config.toml".into(),
        source: HookSource::User,
        plugin_id: None,
        environment_id: None,
        display_order: 0,
        enabled: true,
        is_managed: false,
        current_hash: "sha256:ab".into(),
        trust_status: HookTrustStatus::Trusted,
    };
    let value = to_value(&hook);
    assert_eq!(value["async"], json!(false));
    assert_eq!(value["handlerType"], json!("command"));
    let response = HooksListResponse {
        data: vec![HooksListEntry {
            cwd: "/w".into(),
            hooks: vec![hook],
            warnings: vec!["skipping …".into()],
            errors: vec![HookErrorInfo {
                path: "/h/config.toml".into(),
                message: "invalid TOML".into(),
            }],
        }],
    };
    schemas.check_result::<methods::HooksList>(&response);
}

#[test]
fn skills_list_answer_validates() {
    let mut schemas = Schemas::load();
    let plain = SkillMetadata {
        name: "a".into(),
        description: "d".into(),
        short_description: None,
        interface: None,
        dependencies: None,
        path: "/w/.agents/skills/a/SKILL.md".into(),
        scope: SkillScope::Repo,
        enabled: true,
        plugin_id: None,
    };
    let rich = SkillMetadata {
        name: "b".into(),
        short_description: Some("short".into()),
        interface: Some(SkillInterface {
            display_name: Some("B".into()),
            icon_small: Some("/h/skills/b/assets/s.svg".into()),
            brand_color: Some("#112233".into()),
            ..SkillInterface::default()
        }),
        dependencies: Some(SkillDependencies {
            tools: vec![SkillToolDependency {
                kind: "mcp".into(),
                value: "server".into(),
                description: None,
                transport: None,
                command: None,
                url: None,
            }],
        }),
        path: "/h/skills/b/SKILL.md".into(),
        scope: SkillScope::User,
        ..plain.clone()
    };
    let response = SkillsListResponse {
        data: vec![SkillsListEntry {
            cwd: "/w".into(),
            skills: vec![plain, rich],
            errors: vec![SkillErrorInfo {
                path: "/h/skills/bad/SKILL.md".into(),
                message: "missing YAML frontmatter delimited by ---".into(),
            }],
        }],
    };
    schemas.check_result::<methods::SkillsList>(&response);
}
