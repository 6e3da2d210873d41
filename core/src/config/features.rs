//! `[features]` and `[goals]`: the optional features Weft knows (`--enable X` / `--disable X`
//! are `-c features.X=true/false`) and the limits of goal pursuit (docs/protocol.md §7.26).
//! A feature Weft does not know is ignored, as any unknown key is (README, "Configuration").

use std::path::Path;

use serde::Deserialize;

use super::ConfigError;

/// The features Weft knows.
pub const KNOWN_FEATURES: &[&str] = &["goals", "tool_search", "multi_agent", "multi_agent_v2"];

/// `[features]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Features {
    /// Goals are pursued: the model gets the goal tools, and a thread with an active goal
    /// continues on its own. When off, goals are only stored and announced.
    pub goals: bool,
    /// MCP tools are deferred behind a client-executed `tool_search` tool instead of offered
    /// inline (docs/mcp.md §4). Off by default: only OpenAI models that support client tool
    /// search (e.g. gpt-5.5) know its items; other OpenAI-compatible servers do not. Only the
    /// Responses wire API uses it; Chat Completions always gets the tools inline.
    pub tool_search: bool,
    /// The v1 multi-agent tools (`multi_agent_v1`), the reference's default (docs/agents.md).
    pub multi_agent: bool,
    /// `[features.multi_agent_v2]`: the `collaboration` tools instead of v1.
    pub multi_agent_v2: super::MultiAgentV2,
}

impl Features {
    /// Which multi-agent tools the model gets: v2 when it is enabled, else v1 unless
    /// `multi_agent` is off.
    pub fn agent_surface(&self) -> super::AgentSurface {
        if self.multi_agent_v2.enabled {
            super::AgentSurface::V2
        } else if self.multi_agent {
            super::AgentSurface::V1
        } else {
            super::AgentSurface::Off
        }
    }
}

impl Default for Features {
    fn default() -> Self {
        Features {
            goals: true,
            tool_search: false,
            multi_agent: true,
            multi_agent_v2: super::MultiAgentV2::default(),
        }
    }
}

/// `[goals]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GoalsConfig {
    /// Automatic continuation turns in a row, with no user turn between them, after which the
    /// goal is paused.
    pub max_continuation_turns: u32,
}

impl Default for GoalsConfig {
    fn default() -> Self {
        GoalsConfig {
            max_continuation_turns: 50,
        }
    }
}

impl GoalsConfig {
    pub(super) fn validated(self, path: &Path) -> Result<GoalsConfig, ConfigError> {
        if self.max_continuation_turns == 0 {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                key: "goals.max_continuation_turns".into(),
                message: "must be at least 1".into(),
            });
        }
        Ok(self)
    }
}

/// Whether a dotted key names something Weft ignores inside `[features]`: a feature it does
/// not know (`features.plugins`).
pub(super) fn is_unknown_feature(key: &str) -> bool {
    match key.split_once('.') {
        Some(("features", rest)) => {
            let name = rest.split('.').next().unwrap_or_default();
            !KNOWN_FEATURES.contains(&name)
        }
        _ => false,
    }
}

/// Remove the features Weft does not know from a merged config table, returning their dotted
/// keys; an empty `[features]` is removed too.
pub(super) fn strip_unknown_features(table: &mut toml::Table) -> Vec<String> {
    let Some(toml::Value::Table(features)) = table.get_mut("features") else {
        return Vec::new();
    };
    let unknown: Vec<String> = features
        .keys()
        .filter(|name| !KNOWN_FEATURES.contains(&name.as_str()))
        .cloned()
        .collect();
    for name in &unknown {
        features.remove(name);
    }
    if features.is_empty() {
        table.remove("features");
    }
    unknown
        .into_iter()
        .map(|name| format!("features.{name}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_features_are_named_and_stripped() {
        assert!(is_unknown_feature("features.plugins"));
        assert!(!is_unknown_feature("features.goals"));
        assert!(!is_unknown_feature("features.tool_search"));
        assert!(!is_unknown_feature("model"));
        let mut table: toml::Table = "[features]\ngoals = false\nplugins = true\n"
            .parse()
            .unwrap();
        assert_eq!(strip_unknown_features(&mut table), ["features.plugins"]);
        assert_eq!(table.to_string(), "[features]\ngoals = false\n");
        let mut only_unknown: toml::Table = "[features]\nx = 1\n".parse().unwrap();
        assert_eq!(strip_unknown_features(&mut only_unknown), ["features.x"]);
        assert!(only_unknown.is_empty());
    }
}
