//! `externalAgentConfig/*` (docs/protocol.md §7.39): params, results and notifications validate
//! against both schemas with every key present and with the optional ones absent.

use serde_json::json;

use super::*;
use crate::external_agent_api::*;
use crate::notifications::ServerNotification;

fn item(details: Option<MigrationDetails>, cwd: Option<&str>) -> ExternalAgentConfigMigrationItem {
    ExternalAgentConfigMigrationItem {
        item_type: ExternalAgentConfigMigrationItemType::Skills,
        description: "Migrate skills from /h/.claude/skills to /h/.agents/skills".into(),
        cwd: cwd.map(str::to_string),
        details,
    }
}

fn full_details() -> MigrationDetails {
    MigrationDetails {
        plugins: vec![PluginsMigration {
            marketplace_name: "m".into(),
            plugin_names: vec!["p".into()],
        }],
        skills: vec![SkillMigration { name: "s".into() }],
        sessions: vec![SessionMigration {
            path: "/h/.claude/projects/p/s.jsonl".into(),
            cwd: "/r".into(),
            title: Some("t".into()),
        }],
        mcp_servers: vec![McpServerMigration { name: "m".into() }],
        hooks: vec![HookMigration {
            name: "Stop".into(),
        }],
        subagents: vec![SubagentMigration { name: "a".into() }],
        commands: vec![CommandMigration {
            name: "source-command-c".into(),
        }],
        memory: Some(vec!["/h/m.md".into()]),
    }
}

fn results() -> Vec<ExternalAgentConfigImportTypeResult> {
    vec![ExternalAgentConfigImportTypeResult {
        item_type: ExternalAgentConfigMigrationItemType::Sessions,
        successes: vec![ExternalAgentConfigImportItemTypeSuccess {
            item_type: ExternalAgentConfigMigrationItemType::Skills,
            cwd: Some("/r".into()),
            source: Some("s".into()),
            target: Some("s".into()),
            title: None,
        }],
        failures: vec![ExternalAgentConfigImportItemTypeFailure {
            item_type: ExternalAgentConfigMigrationItemType::Sessions,
            error_type: None,
            sub_error_type: Some("session_not_detected".into()),
            failure_stage: "session_missing".into(),
            message: "external agent session was not detected for import: /x".into(),
            cwd: None,
            source: Some("/x".into()),
        }],
    }]
}

/// One progress and one completed notification.
pub(super) fn sample_notifications() -> Vec<ServerNotification> {
    vec![
        ExternalAgentConfigImportProgressNotification {
            import_id: "i".into(),
            item_type_results: results(),
        }
        .into(),
        ExternalAgentConfigImportCompletedNotification {
            import_id: "i".into(),
            item_type_results: results(),
        }
        .into(),
    ]
}

#[test]
fn external_agent_params_and_results_validate() {
    let mut schemas = Schemas::load();
    schemas.check_params::<methods::ExternalAgentConfigDetect>(
        &ExternalAgentConfigDetectParams::default(),
    );
    schemas.check_params::<methods::ExternalAgentConfigDetect>(&ExternalAgentConfigDetectParams {
        include_home: true,
        cwds: Some(vec!["/r".into()]),
        max_session_age_days: Some(30),
        max_sessions: Some(5),
        migration_source: Some("claude".into()),
        source: Some("x".into()),
    });
    schemas.check_result::<methods::ExternalAgentConfigDetect>(
        &ExternalAgentConfigDetectResponse {
            items: vec![item(None, None), item(Some(full_details()), Some("/r"))],
            connectors: vec![ExternalAgentDetectedConnectorCandidate {
                name: "c".into(),
                session_count: 1,
                source: ExternalAgentDetectedConnectorSource::SessionToolUse,
            }],
        },
    );
    for provider in [None, Some("p".to_string())] {
        schemas.check_params::<methods::ExternalAgentConfigImport>(
            &ExternalAgentConfigImportParams {
                migration_items: vec![item(Some(full_details()), None)],
                migration_source: provider.clone(),
                provider_id: provider.clone(),
                source: provider,
            },
        );
    }
    schemas.check_result::<methods::ExternalAgentConfigImport>(
        &ExternalAgentConfigImportResponse {
            import_id: "i".into(),
        },
    );
    schemas.check_params::<methods::ExternalAgentConfigImportHistoryRecord>(
        &ExternalAgentConfigImportHistoryRecordParams {
            provider_id: "p".into(),
            item_type_results: vec![ExternalAgentConfigImportHistoryRecordTypeResultParams {
                item_type: ExternalAgentConfigMigrationItemType::Hooks,
                successes: vec![ExternalAgentConfigImportHistoryRecordSuccessParams {
                    item_type: ExternalAgentConfigMigrationItemType::Hooks,
                    cwd: None,
                    source: Some("Stop".into()),
                    target: Some("Stop".into()),
                    title: Some("t".into()),
                }],
                failures: results().remove(0).failures,
            }],
        },
    );
    schemas.check_result::<methods::ExternalAgentConfigImportHistoryRecord>(
        &ExternalAgentConfigImportHistoryRecordResponse {
            import_id: "i".into(),
        },
    );
    let result = results().remove(0);
    schemas.check_result::<methods::ExternalAgentConfigImportHistoriesRead>(
        &ExternalAgentConfigImportHistoriesReadResponse {
            data: vec![ExternalAgentConfigImportHistory {
                import_id: "i".into(),
                provider_id: Some("p".into()),
                completed_at_ms: 1,
                successes: result.successes,
                failures: result.failures,
            }],
            connectors: vec![ExternalAgentImportedConnectorCandidate {
                name: "c".into(),
                session_count: 0,
                source: ExternalAgentImportedConnectorSource::RemoteMcpServersConfig,
            }],
        },
    );
    // Details without `memory` leave the key out, as the reference writes them.
    assert_eq!(
        serde_json::to_value(MigrationDetails::default()).unwrap(),
        json!({"plugins": [], "skills": [], "sessions": [], "mcpServers": [], "hooks": [],
            "subagents": [], "commands": []})
    );
}
