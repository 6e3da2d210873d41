//! `externalAgentConfig/import`: one migration item at a time, each importing only what is
//! still missing (so an item imported twice adds nothing the second time), each with its
//! successes and failures; the outcomes grouped by type for the completed notification.

use std::path::{Path, PathBuf};

use weft_protocol::external_agent_api::{
    ExternalAgentConfigImportItemTypeFailure as Failure,
    ExternalAgentConfigImportItemTypeSuccess as Success,
    ExternalAgentConfigImportTypeResult as TypeResult, ExternalAgentConfigMigrationItem as Item,
    ExternalAgentConfigMigrationItemType as Type,
};

use super::detect::{read_json, read_weft_config, repo_agents_md_source};
use super::files::{
    command_skill, commands, copy_skill, folder_names, missing_or_blank, rewrite_terms, subagents,
};
use super::settings::{
    append_stop_hooks, config_values, configured_agent_keys, configured_mcp_servers,
    configured_stop_commands, mcp_servers, missing_values, set_all, stop_hooks,
};
use super::{Homes, repo_root, shown};
use crate::config::Config;
use crate::config::write::write_document;

/// The answer to an import that asks for memory (Weft has no memory to import into).
pub const MEMORY_DISABLED: &str = "external agent memory import is disabled";

/// The order of types in the completed notification and the history.
const COMPLETED_ORDER: [Type; 10] = [
    Type::Config,
    Type::Skills,
    Type::AgentsMd,
    Type::Plugins,
    Type::McpServerConfig,
    Type::Subagents,
    Type::Hooks,
    Type::Commands,
    Type::Memory,
    Type::Sessions,
];

/// What importing one item did, and the config now in effect when it wrote `config.toml`.
#[derive(Debug)]
pub struct Imported {
    /// The item's outcome.
    pub result: TypeResult,
    /// The reloaded config, after a write.
    pub config: Option<Config>,
}

/// Import one item (not `SESSIONS`, see [`super::session_import`]; not `MEMORY`, refused up
/// front).
pub fn import_item(homes: &Homes, item: &Item, current: &Config) -> Imported {
    let kind = item.item_type;
    let repo = item
        .cwd
        .as_deref()
        .filter(|cwd| !cwd.is_empty())
        .map(|cwd| repo_root(Path::new(cwd)));
    let mut result = TypeResult {
        item_type: kind,
        successes: Vec::new(),
        failures: Vec::new(),
    };
    let mut config = None;
    let cwd = repo.as_ref().and_then(|root| root.as_deref().map(shown));
    let outcome: Result<(), String> = match (kind, &repo) {
        // A repository that is not there: nothing to import.
        (_, Some(None)) => Ok(()),
        (Type::Plugins, _) => {
            let message = if item.details.as_ref().is_none_or(|d| d.plugins.is_empty()) {
                "plugins migration item is missing details"
            } else {
                "plugins are not supported by Weft"
            };
            result
                .failures
                .push(failure(kind, "plugin_import", message, None));
            Ok(())
        }
        (Type::Memory | Type::Sessions, _) => {
            result.failures.push(failure(
                kind,
                "unsupported",
                "Weft has no equivalent for this item type",
                None,
            ));
            Ok(())
        }
        (Type::Config | Type::McpServerConfig | Type::Hooks | Type::Subagents, Some(Some(_))) => {
            Ok(())
        }
        (Type::Config, None) => {
            import_settings(homes, current, kind, item, &mut result, &mut config)
        }
        (Type::McpServerConfig | Type::Hooks | Type::Subagents, None) => {
            import_settings(homes, current, kind, item, &mut result, &mut config)
        }
        (Type::Skills | Type::Commands | Type::AgentsMd, repo) => {
            let root = repo.clone().flatten();
            import_files(homes, root.as_deref(), item, &mut result)
        }
    };
    if let Err(message) = outcome {
        let stage = format!("{}_import", stage_name(kind));
        result.failures.push(failure(kind, &stage, &message, None));
    }
    for entry in &mut result.successes {
        entry.cwd.clone_from(&cwd);
    }
    for entry in &mut result.failures {
        entry.cwd.clone_from(&cwd);
    }
    Imported { result, config }
}

fn stage_name(kind: Type) -> &'static str {
    match kind {
        Type::AgentsMd => "agents_md",
        Type::Config => "config",
        Type::Skills => "skills",
        Type::Plugins => "plugin",
        Type::McpServerConfig => "mcp_server_config",
        Type::Subagents => "subagents",
        Type::Hooks => "hooks",
        Type::Commands => "commands",
        Type::Memory => "memory",
        Type::Sessions => "sessions",
    }
}

fn failure(kind: Type, stage: &str, message: &str, source: Option<String>) -> Failure {
    Failure {
        item_type: kind,
        error_type: None,
        sub_error_type: None,
        failure_stage: stage.to_owned(),
        message: message.to_owned(),
        cwd: None,
        source,
    }
}

fn success(kind: Type, source: String, target: String) -> Success {
    Success {
        item_type: kind,
        cwd: None,
        source: Some(source),
        target: Some(target),
        title: None,
    }
}

/// Whether `name` is one the item's details name (all are, without such details).
fn wanted(names: &[String], name: &str) -> bool {
    names.is_empty() || names.iter().any(|wanted| wanted == name)
}

/// `CONFIG`, `MCP_SERVER_CONFIG` or `HOOKS` into the user's `config.toml`.
fn import_settings(
    homes: &Homes,
    current: &Config,
    kind: Type,
    item: &Item,
    result: &mut TypeResult,
    config: &mut Option<Config>,
) -> Result<(), String> {
    let (Some(claude), Some(user_home)) = (homes.claude_home(), homes.user_home.clone()) else {
        return Ok(());
    };
    let weft = read_weft_config(homes).ok_or("the user config.toml does not parse")?;
    let target = shown(&homes.weft_config());
    let settings_path = claude.join("settings.json");
    let written = match kind {
        Type::Config => {
            let Some(settings) = read_json(&settings_path)? else {
                return Ok(());
            };
            let missing = missing_values(&weft, &config_values(&settings));
            if missing.is_empty() {
                return Ok(());
            }
            let written = write_document(current, |doc| set_all(doc, &missing));
            result
                .successes
                .push(success(kind, shown(&settings_path), target));
            written
        }
        Type::McpServerConfig => {
            let Some(claude_json) = read_json(&user_home.join(".claude.json"))
                .map_err(|err| format!("invalid MCP config: {err}"))?
            else {
                return Ok(());
            };
            let names: Vec<String> = item
                .details
                .iter()
                .flat_map(|d| d.mcp_servers.iter().map(|s| s.name.clone()))
                .collect();
            let configured = configured_mcp_servers(&weft);
            let servers: Vec<(Vec<String>, toml::Value)> = mcp_servers(&claude_json)
                .into_iter()
                .filter(|(name, _)| !configured.contains(name) && wanted(&names, name))
                .flat_map(|(name, table)| {
                    // Keys in the order a person writes them, not the table's sorted order.
                    ["command", "url", "args", "env", "http_headers"]
                        .into_iter()
                        .filter_map(move |key| {
                            let value = table.get(key)?.clone();
                            Some((
                                vec!["mcp_servers".to_owned(), name.clone(), key.to_owned()],
                                value,
                            ))
                        })
                })
                .collect();
            if servers.is_empty() {
                return Ok(());
            }
            let written = write_document(current, |doc| set_all(doc, &servers));
            let mut names: Vec<&String> = servers.iter().map(|(path, _)| &path[1]).collect();
            names.dedup();
            for name in names {
                result
                    .successes
                    .push(success(kind, name.clone(), name.clone()));
            }
            written
        }
        Type::Subagents => {
            let names: Vec<String> = item
                .details
                .iter()
                .flat_map(|d| d.subagents.iter().map(|s| s.name.clone()))
                .collect();
            let configured = configured_agent_keys(&weft);
            let agents: Vec<_> = subagents(&claude.join("agents"))
                .into_iter()
                .filter(|agent| !configured.contains(&agent.name) && wanted(&names, &agent.name))
                .collect();
            if agents.is_empty() {
                return Ok(());
            }
            let values: Vec<(Vec<String>, toml::Value)> = agents
                .iter()
                .flat_map(|agent| {
                    let path =
                        |key: &str| vec!["agents".to_owned(), agent.name.clone(), key.to_owned()];
                    [
                        agent
                            .description
                            .clone()
                            .map(|d| (path("description"), toml::Value::String(d))),
                        agent
                            .instructions
                            .clone()
                            .map(|i| (path("developer_instructions"), toml::Value::String(i))),
                    ]
                    .into_iter()
                    .flatten()
                })
                .collect();
            // A role with neither still gets its (empty) table, so it exists.
            let empty: Vec<(Vec<String>, toml::Value)> = agents
                .iter()
                .filter(|agent| agent.description.is_none() && agent.instructions.is_none())
                .map(|agent| {
                    (
                        vec!["agents".to_owned(), agent.name.clone()],
                        toml::Value::Table(toml::Table::new()),
                    )
                })
                .collect();
            let written = write_document(current, |doc| {
                set_all(doc, &values);
                set_all(doc, &empty);
            });
            for agent in &agents {
                result
                    .successes
                    .push(success(kind, agent.name.clone(), agent.name.clone()));
            }
            written
        }
        _ => {
            let Some(settings) = read_json(&settings_path)? else {
                return Ok(());
            };
            let configured = configured_stop_commands(&weft);
            let hooks: Vec<_> = stop_hooks(&settings)
                .into_iter()
                .filter(|hook| !configured.contains(&hook.command))
                .collect();
            if hooks.is_empty() {
                return Ok(());
            }
            let mut appended = true;
            let written = write_document(current, |doc| appended = append_stop_hooks(doc, &hooks));
            if !appended {
                return Err("hooks.stop in config.toml is not an array of tables".into());
            }
            result
                .successes
                .push(success(kind, "Stop".into(), "Stop".into()));
            written
        }
    };
    match written {
        Ok(new_config) => {
            *config = Some(new_config);
            Ok(())
        }
        Err(err) => {
            result.successes.clear();
            Err(err.to_string())
        }
    }
}

/// `SKILLS`, `COMMANDS` or `AGENTS_MD`, home-scoped (`root` none) or for a repository.
fn import_files(
    homes: &Homes,
    root: Option<&Path>,
    item: &Item,
    result: &mut TypeResult,
) -> Result<(), String> {
    let kind = item.item_type;
    let (claude, target): (PathBuf, PathBuf) = match root {
        Some(root) => (root.join(".claude"), root.join(".agents").join("skills")),
        None => match (homes.claude_home(), homes.user_skills()) {
            (Some(claude), Some(skills)) => (claude, skills),
            _ => return Ok(()),
        },
    };
    let io = |err: std::io::Error| err.to_string();
    match kind {
        Type::Skills => {
            let names: Vec<String> = item
                .details
                .iter()
                .flat_map(|d| d.skills.iter().map(|s| s.name.clone()))
                .collect();
            let present = folder_names(&target);
            for name in folder_names(&claude.join("skills")) {
                if present.contains(&name) || !wanted(&names, &name) {
                    continue;
                }
                std::fs::create_dir_all(&target).map_err(io)?;
                match copy_skill(&claude.join("skills").join(&name), &target.join(&name)) {
                    Ok(()) => result.successes.push(success(kind, name.clone(), name)),
                    Err(err) => result.failures.push(failure(
                        kind,
                        "skills_import",
                        &err.to_string(),
                        Some(name),
                    )),
                }
            }
        }
        Type::Commands => {
            let names: Vec<String> = item
                .details
                .iter()
                .flat_map(|d| d.commands.iter().map(|c| c.name.clone()))
                .collect();
            let present = folder_names(&target);
            for command in commands(&claude.join("commands")) {
                if present.contains(&command.skill) || !wanted(&names, &command.skill) {
                    continue;
                }
                let written = std::fs::read_to_string(&command.path).and_then(|text| {
                    let dir = target.join(&command.skill);
                    std::fs::create_dir_all(&dir)?;
                    std::fs::write(dir.join("SKILL.md"), command_skill(&command, &text))
                });
                let name = command.skill.clone();
                match written {
                    Ok(()) => result.successes.push(success(kind, name.clone(), name)),
                    Err(err) => result.failures.push(failure(
                        kind,
                        "commands_import",
                        &err.to_string(),
                        Some(name),
                    )),
                }
            }
        }
        _ => {
            // AGENTS_MD: Weft reads AGENTS.md in repositories only.
            let Some(root) = root else {
                return Ok(());
            };
            let destination = root.join("AGENTS.md");
            let Some(source) = repo_agents_md_source(root) else {
                return Ok(());
            };
            if !missing_or_blank(&destination) {
                return Ok(());
            }
            let text = std::fs::read_to_string(&source).map_err(io)?;
            std::fs::write(&destination, rewrite_terms(&text)).map_err(io)?;
            result
                .successes
                .push(success(kind, shown(&source), shown(&destination)));
        }
    }
    Ok(())
}

/// The outcomes of every item grouped by type, types in the reference's order (only those
/// imported).
pub fn completed(results: &[TypeResult]) -> Vec<TypeResult> {
    COMPLETED_ORDER
        .iter()
        .filter(|kind| results.iter().any(|r| r.item_type == **kind))
        .map(|kind| TypeResult {
            item_type: *kind,
            successes: results
                .iter()
                .filter(|r| r.item_type == *kind)
                .flat_map(|r| r.successes.iter().cloned())
                .collect(),
            failures: results
                .iter()
                .filter(|r| r.item_type == *kind)
                .flat_map(|r| r.failures.iter().cloned())
                .collect(),
        })
        .collect()
}
