//! The other agent's settings as Weft config: `CONFIG` (`env`, `sandbox.enabled`),
//! `MCP_SERVER_CONFIG` (`mcpServers`) and `HOOKS` (`Stop` command hooks), each as the keys to
//! add to `config.toml`, only where the file has none yet.

use serde_json::Value as Json;
use toml_edit::DocumentMut;

use crate::config::edit::set_path;

/// The `config.toml` values `settings.json` stands for: `env` as
/// `[shell_environment_policy]` (`inherit = "core"`, `set`), `sandbox.enabled = true` as
/// `sandbox_mode = "workspace-write"`. Only strings, numbers and booleans of `env` are kept.
pub fn config_values(settings: &Json) -> toml::Table {
    let mut root = toml::Table::new();
    if let Some(env) = settings.get("env").and_then(Json::as_object)
        && !env.is_empty()
    {
        let set: toml::Table = env
            .iter()
            .filter_map(|(key, value)| {
                let text = match value {
                    Json::String(text) => text.clone(),
                    Json::Bool(b) => b.to_string(),
                    Json::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some((key.clone(), toml::Value::String(text)))
            })
            .collect();
        let mut policy = toml::Table::new();
        policy.insert("inherit".into(), toml::Value::String("core".into()));
        policy.insert("set".into(), toml::Value::Table(set));
        root.insert(
            "shell_environment_policy".into(),
            toml::Value::Table(policy),
        );
    }
    if settings
        .get("sandbox")
        .and_then(|sandbox| sandbox.get("enabled"))
        .and_then(Json::as_bool)
        == Some(true)
    {
        root.insert(
            "sandbox_mode".into(),
            toml::Value::String("workspace-write".into()),
        );
    }
    root
}

/// The key paths of `values` (down to non-table values) that `existing` lacks, each with its
/// value; a path through a non-table value of `existing` is left out.
pub fn missing_values(
    existing: &toml::Table,
    values: &toml::Table,
) -> Vec<(Vec<String>, toml::Value)> {
    let mut missing = Vec::new();
    collect_missing(Some(existing), values, &mut Vec::new(), &mut missing);
    missing
}

fn collect_missing(
    existing: Option<&toml::Table>,
    values: &toml::Table,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, toml::Value)>,
) {
    for (key, value) in values {
        path.push(key.clone());
        match (existing.and_then(|table| table.get(key)), value) {
            (None, toml::Value::Table(inner)) if existing.is_some() && !inner.is_empty() => {
                collect_missing(None, inner, path, out);
            }
            (None, value) => out.push((path.clone(), value.clone())),
            (Some(toml::Value::Table(there)), toml::Value::Table(inner)) => {
                collect_missing(Some(there), inner, path, out);
            }
            (Some(_), _) => {}
        }
        path.pop();
    }
}

/// Write each of `values` into `doc` (comments and layout elsewhere kept).
pub fn set_all(doc: &mut DocumentMut, values: &[(Vec<String>, toml::Value)]) {
    for (path, value) in values {
        set_path(doc, path, value);
    }
}

/// The servers of `mcpServers` in `~/.claude.json` Weft can run, as `[mcp_servers.NAME]`
/// tables, sorted by name: a `command` (with `args`, `env`) or a `url` (with `headers` as
/// `http_headers`); other entries are left out.
pub fn mcp_servers(claude_json: &Json) -> Vec<(String, toml::Table)> {
    let Some(servers) = claude_json.get("mcpServers").and_then(Json::as_object) else {
        return Vec::new();
    };
    let strings = |value: Option<&Json>| -> Vec<toml::Value> {
        value
            .and_then(Json::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Json::as_str)
                    .map(|s| toml::Value::String(s.to_owned()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let string_map = |value: Option<&Json>| -> toml::Table {
        value
            .and_then(Json::as_object)
            .map(|map| {
                map.iter()
                    .filter_map(|(k, v)| {
                        Some((k.clone(), toml::Value::String(v.as_str()?.to_owned())))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut found: Vec<(String, toml::Table)> = servers
        .iter()
        .filter_map(|(name, server)| {
            let mut table = toml::Table::new();
            if let Some(command) = server.get("command").and_then(Json::as_str) {
                table.insert("command".into(), toml::Value::String(command.to_owned()));
                let args = strings(server.get("args"));
                if !args.is_empty() {
                    table.insert("args".into(), toml::Value::Array(args));
                }
                let env = string_map(server.get("env"));
                if !env.is_empty() {
                    table.insert("env".into(), toml::Value::Table(env));
                }
            } else if let Some(url) = server.get("url").and_then(Json::as_str) {
                table.insert("url".into(), toml::Value::String(url.to_owned()));
                let headers = string_map(server.get("headers"));
                if !headers.is_empty() {
                    table.insert("http_headers".into(), toml::Value::Table(headers));
                }
            } else {
                return None;
            }
            Some((name.clone(), table))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// The role names under `[agents]` of a config table (settings keys included: a subagent of
/// such a name is not offered).
pub fn configured_agent_keys(config: &toml::Table) -> Vec<String> {
    config
        .get("agents")
        .and_then(toml::Value::as_table)
        .map(|agents| agents.keys().cloned().collect())
        .unwrap_or_default()
}

/// The names under `[mcp_servers]` of a config table.
pub fn configured_mcp_servers(config: &toml::Table) -> Vec<String> {
    config
        .get("mcp_servers")
        .and_then(toml::Value::as_table)
        .map(|servers| servers.keys().cloned().collect())
        .unwrap_or_default()
}

/// One `Stop` command hook of `settings.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopHook {
    /// Its command line (run with `sh -c`, as both agents run it).
    pub command: String,
    /// Its timeout in seconds.
    pub timeout: Option<u64>,
}

/// The `type: "command"` hooks of `hooks.Stop` in `settings.json`, in order.
pub fn stop_hooks(settings: &Json) -> Vec<StopHook> {
    let Some(groups) = settings
        .get("hooks")
        .and_then(|hooks| hooks.get("Stop"))
        .and_then(Json::as_array)
    else {
        return Vec::new();
    };
    groups
        .iter()
        .filter_map(|group| group.get("hooks").and_then(Json::as_array))
        .flatten()
        .filter(|hook| hook.get("type").and_then(Json::as_str) == Some("command"))
        .filter_map(|hook| {
            let command = hook.get("command").and_then(Json::as_str)?.trim();
            (!command.is_empty()).then(|| StopHook {
                command: command.to_owned(),
                timeout: hook.get("timeout").and_then(Json::as_u64),
            })
        })
        .collect()
}

/// The string commands of the `[[hooks.stop]]` entries of a config table.
pub fn configured_stop_commands(config: &toml::Table) -> Vec<String> {
    config
        .get("hooks")
        .and_then(|hooks| hooks.get("stop"))
        .and_then(toml::Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|entry| entry.get("command")?.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Append `hooks` to `[[hooks.stop]]` in `doc`; false (nothing changed) when `hooks.stop` is
/// there but not an array of tables.
pub fn append_stop_hooks(doc: &mut DocumentMut, hooks: &[StopHook]) -> bool {
    let root = doc.as_table_mut();
    let hooks_item = root.entry("hooks").or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let Some(hooks_table) = hooks_item.as_table_like_mut() else {
        return false;
    };
    let stop = hooks_table
        .entry("stop")
        .or_insert(toml_edit::Item::ArrayOfTables(Default::default()));
    let Some(entries) = stop.as_array_of_tables_mut() else {
        return false;
    };
    for hook in hooks {
        let mut entry = toml_edit::Table::new();
        entry.insert("command", toml_edit::value(hook.command.as_str()));
        if let Some(timeout) = hook.timeout.and_then(|t| i64::try_from(t).ok()) {
            entry.insert("timeout", toml_edit::value(timeout));
        }
        entries.push(entry);
    }
    true
}
