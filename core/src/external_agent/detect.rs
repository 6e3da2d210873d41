//! `externalAgentConfig/detect`: what there is to import, home first, then each cwd's
//! repository once, each scope in the reference's order (config, MCP servers, hooks, skills,
//! commands, `AGENTS.md`). A source file that is absent or unreadable offers nothing; one that
//! is not JSON fails the whole detection, with serde's words, as the reference's does.

use std::path::{Path, PathBuf};

use weft_protocol::external_agent_api::{
    CommandMigration, ExternalAgentConfigMigrationItem as Item,
    ExternalAgentConfigMigrationItemType as Type, HookMigration, McpServerMigration,
    MigrationDetails, SkillMigration, SubagentMigration,
};

use super::files::{commands, folder_names, has_text, missing_or_blank, subagents};
use super::session_import::{SessionBounds, detect_sessions, projects_root};
use super::settings::{
    config_values, configured_agent_keys, configured_mcp_servers, configured_stop_commands,
    mcp_servers, missing_values, stop_hooks,
};
use super::{Homes, repo_root, shown};

/// Everything to import for the home (when `include_home`) and the repositories of `cwds`;
/// `Err` with the reference's message when a settings file Weft reads is not JSON.
pub fn detect(
    homes: &Homes,
    include_home: bool,
    cwds: &[String],
    sessions: SessionBounds,
) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    if include_home {
        home_items(homes, &mut items)?;
        session_item(homes, sessions, &mut items);
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    for cwd in cwds {
        let Some(root) = repo_root(Path::new(cwd)) else {
            continue;
        };
        if seen.contains(&root) {
            continue;
        }
        repo_items(homes, &root, &mut items);
        seen.push(root);
    }
    Ok(items)
}

/// A JSON file's value (`None` when it is absent or unreadable), or serde's error.
pub(super) fn read_json(path: &Path) -> Result<Option<serde_json::Value>, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|err| err.to_string())
}

/// Weft's user `config.toml` as a table (absent: empty; malformed: `None`).
pub(super) fn read_weft_config(homes: &Homes) -> Option<toml::Table> {
    match std::fs::read_to_string(homes.weft_config()) {
        Ok(text) => text.parse().ok(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Some(toml::Table::new()),
        Err(_) => None,
    }
}

fn details(fill: impl FnOnce(&mut MigrationDetails)) -> Option<MigrationDetails> {
    let mut details = MigrationDetails::default();
    fill(&mut details);
    Some(details)
}

fn home_items(homes: &Homes, items: &mut Vec<Item>) -> Result<(), String> {
    let (Some(claude), Some(user_home)) = (homes.claude_home(), homes.user_home.as_ref()) else {
        return Ok(());
    };
    let target = homes.weft_config();
    let settings_path = claude.join("settings.json");
    let settings = read_json(&settings_path)?;
    let weft = read_weft_config(homes);
    if let (Some(settings), Some(weft)) = (&settings, &weft)
        && !missing_values(weft, &config_values(settings)).is_empty()
    {
        items.push(Item {
            item_type: Type::Config,
            description: format!("Migrate {} into {}", shown(&settings_path), shown(&target)),
            cwd: None,
            details: None,
        });
    }
    if let (Some(claude_json), Some(weft)) = (
        read_json(&user_home.join(".claude.json"))
            .map_err(|err| format!("invalid MCP config: {err}"))?,
        &weft,
    ) {
        let configured = configured_mcp_servers(weft);
        let names: Vec<McpServerMigration> = mcp_servers(&claude_json)
            .into_iter()
            .filter(|(name, _)| !configured.contains(name))
            .map(|(name, _)| McpServerMigration { name })
            .collect();
        if !names.is_empty() {
            items.push(Item {
                item_type: Type::McpServerConfig,
                description: format!(
                    "Migrate MCP servers from {} into {}",
                    shown(user_home),
                    shown(&target)
                ),
                cwd: None,
                details: details(|d| d.mcp_servers = names),
            });
        }
    }
    if let (Some(settings), Some(weft)) = (&settings, &weft) {
        let configured = configured_stop_commands(weft);
        if stop_hooks(settings)
            .iter()
            .any(|hook| !configured.contains(&hook.command))
        {
            items.push(Item {
                item_type: Type::Hooks,
                description: format!(
                    "Migrate hooks from {} to {}",
                    shown(&claude),
                    shown(&target)
                ),
                cwd: None,
                details: details(|d| {
                    d.hooks = vec![HookMigration {
                        name: "Stop".into(),
                    }]
                }),
            });
        }
    }
    if let Some(skills_target) = homes.user_skills() {
        skills_and_commands(&claude, &skills_target, None, items);
    }
    if let Some(weft) = &weft {
        let configured = configured_agent_keys(weft);
        let source = claude.join("agents");
        let names: Vec<SubagentMigration> = subagents(&source)
            .into_iter()
            .filter(|agent| !configured.contains(&agent.name))
            .map(|agent| SubagentMigration { name: agent.name })
            .collect();
        if !names.is_empty() {
            items.push(Item {
                item_type: Type::Subagents,
                description: format!(
                    "Migrate subagents from {} to {}",
                    shown(&source),
                    shown(&target)
                ),
                cwd: None,
                details: details(|d| d.subagents = names),
            });
        }
    }
    Ok(())
}

/// The `SESSIONS` item: Claude Code's recent sessions (home only).
fn session_item(homes: &Homes, bounds: SessionBounds, items: &mut Vec<Item>) {
    let Some(root) = projects_root(homes) else {
        return;
    };
    let sessions = detect_sessions(homes, bounds, crate::time::now_secs());
    if sessions.is_empty() {
        return;
    }
    items.push(Item {
        item_type: Type::Sessions,
        description: format!("Migrate recent sessions from {}", shown(&root)),
        cwd: None,
        details: details(|d| d.sessions = sessions),
    });
}

fn repo_items(_homes: &Homes, root: &Path, items: &mut Vec<Item>) {
    let cwd = Some(shown(root));
    skills_and_commands(
        &root.join(".claude"),
        &root.join(".agents").join("skills"),
        cwd.clone(),
        items,
    );
    let target = root.join("AGENTS.md");
    if let Some(source) = repo_agents_md_source(root)
        && missing_or_blank(&target)
    {
        items.push(Item {
            item_type: Type::AgentsMd,
            description: format!("Migrate {} to {}", shown(&source), shown(&target)),
            cwd,
            details: None,
        });
    }
}

/// The repository's instructions file to import: `CLAUDE.md`, else `.claude/CLAUDE.md`.
pub(super) fn repo_agents_md_source(root: &Path) -> Option<PathBuf> {
    [
        root.join("CLAUDE.md"),
        root.join(".claude").join("CLAUDE.md"),
    ]
    .into_iter()
    .find(|candidate| has_text(candidate))
}

/// Skill folders of `<claude>/skills` missing from `target`, then the commands of
/// `<claude>/commands` whose skills are missing from it.
fn skills_and_commands(claude: &Path, target: &Path, cwd: Option<String>, items: &mut Vec<Item>) {
    let source = claude.join("skills");
    let present = folder_names(target);
    let skills: Vec<SkillMigration> = folder_names(&source)
        .into_iter()
        .filter(|name| !present.contains(name))
        .map(|name| SkillMigration { name })
        .collect();
    if !skills.is_empty() {
        items.push(Item {
            item_type: Type::Skills,
            description: format!(
                "Migrate skills from {} to {}",
                shown(&source),
                shown(target)
            ),
            cwd: cwd.clone(),
            details: details(|d| d.skills = skills),
        });
    }
    let source = claude.join("commands");
    let commands: Vec<CommandMigration> = commands(&source)
        .into_iter()
        .filter(|command| !present.contains(&command.skill))
        .map(|command| CommandMigration {
            name: command.skill,
        })
        .collect();
    if !commands.is_empty() {
        items.push(Item {
            item_type: Type::Commands,
            description: format!(
                "Migrate commands from {} to {}",
                shown(&source),
                shown(target)
            ),
            cwd,
            details: details(|d| d.commands = commands),
        });
    }
}
