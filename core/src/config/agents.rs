//! `[agents]` and the multi-agent switches of `[features]` (docs/agents.md §2): how many
//! sub-agents a root thread tree may hold, how deep it may grow, and which tool surface the
//! model gets.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::ConfigError;

/// Sub-agents a tree may hold at once (not counting the root), as the reference.
pub const DEFAULT_MAX_THREADS: usize = 6;
/// How deep a tree may grow: the root is depth 0, its children depth 1.
pub const DEFAULT_MAX_DEPTH: u32 = 1;
/// v2's concurrency slots per tree, the root included.
pub const DEFAULT_V2_CONCURRENCY: usize = 4;

/// `[agents]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentsConfig {
    /// Live sub-agents per root tree (`max_threads`); `None` is no cap.
    pub max_threads: Option<usize>,
    /// The deepest a sub-agent may be (`max_depth`).
    pub max_depth: u32,
    /// Agents per tree, the root included (`max_concurrent_threads_per_session`, or v2's own
    /// key of that name, which wins).
    pub max_concurrent_threads_per_session: Option<usize>,
    /// `job_max_runtime_seconds`: accepted for the reference's batch jobs, which Weft has not.
    pub job_max_runtime_seconds: Option<u64>,
    /// The model a sub-agent gets when the spawn names none (`default_subagent_model`);
    /// otherwise the spawning agent's model.
    pub default_subagent_model: Option<String>,
    /// The text a sub-agent's model is told after `interrupt_agent` (`interrupt_message`);
    /// otherwise the ordinary interrupted-turn marker.
    pub interrupt_message: Option<String>,
    /// Every other key: agent roles, by name.
    pub roles: BTreeMap<String, AgentRole>,
}

/// `[agents.NAME]`: a role a spawn may give a sub-agent.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct AgentRole {
    /// What the role is for.
    pub description: Option<String>,
    /// The role's model.
    pub model: Option<String>,
    /// The role's reasoning effort.
    pub model_reasoning_effort: Option<String>,
    /// Developer instructions the role's agents get.
    pub developer_instructions: Option<String>,
    /// The reference's per-role config file (read by the reference, kept for its key).
    pub config_file: Option<String>,
}

/// Which multi-agent tools the model gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentSurface {
    /// No multi-agent tools.
    Off,
    /// `multi_agent_v1` (`[features] multi_agent`, the reference's default).
    V1,
    /// The `collaboration` namespace (`[features.multi_agent_v2] enabled = true`).
    V2,
}

/// `[features.multi_agent_v2]`: `true`/`false`, or a table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MultiAgentV2 {
    /// The v2 surface replaces v1.
    pub enabled: bool,
    /// Agents per tree, the root included.
    pub max_concurrent_threads_per_session: Option<usize>,
}

impl<'de> Deserialize<'de> for MultiAgentV2 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Switch(bool),
            Table {
                #[serde(default)]
                enabled: bool,
                #[serde(default)]
                max_concurrent_threads_per_session: Option<usize>,
            },
        }
        Ok(match Raw::deserialize(deserializer)? {
            Raw::Switch(enabled) => MultiAgentV2 {
                enabled,
                max_concurrent_threads_per_session: None,
            },
            Raw::Table {
                enabled,
                max_concurrent_threads_per_session,
            } => MultiAgentV2 {
                enabled,
                max_concurrent_threads_per_session,
            },
        })
    }
}

/// The keys of `[agents]` that are not roles.
const SETTINGS: &[&str] = &[
    "max_threads",
    "max_depth",
    "max_concurrent_threads_per_session",
    "job_max_runtime_seconds",
    "default_subagent_model",
    "interrupt_message",
];

impl AgentsConfig {
    /// `[agents]` from its TOML table (absent: the defaults).
    pub(super) fn read(table: Option<&toml::Table>, path: &Path) -> Result<Self, ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: format!("agents.{key}"),
            message,
        };
        let mut config = AgentsConfig {
            max_threads: Some(DEFAULT_MAX_THREADS),
            max_depth: DEFAULT_MAX_DEPTH,
            ..AgentsConfig::default()
        };
        let Some(table) = table else {
            return Ok(config);
        };
        let count = |key: &str| -> Result<Option<u64>, ConfigError> {
            match table.get(key) {
                None => Ok(None),
                Some(toml::Value::Integer(n)) if *n >= 0 => Ok(Some(*n as u64)),
                Some(_) => Err(invalid(key, "must be a non-negative integer".into())),
            }
        };
        let text = |key: &str| -> Result<Option<String>, ConfigError> {
            match table.get(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(invalid(key, "must be a string".into())),
            }
        };
        if let Some(n) = count("max_threads")? {
            if n == 0 {
                return Err(invalid("max_threads", "must be at least 1".into()));
            }
            config.max_threads = Some(n as usize);
        }
        if let Some(n) = count("max_depth")? {
            config.max_depth =
                u32::try_from(n).map_err(|_| invalid("max_depth", "is too large".into()))?;
        }
        if let Some(n) = count("max_concurrent_threads_per_session")? {
            if n < 2 {
                return Err(invalid(
                    "max_concurrent_threads_per_session",
                    "must be at least 2 (the root counts)".into(),
                ));
            }
            config.max_concurrent_threads_per_session = Some(n as usize);
        }
        config.job_max_runtime_seconds = count("job_max_runtime_seconds")?;
        config.default_subagent_model = text("default_subagent_model")?;
        config.interrupt_message = text("interrupt_message")?;
        for (name, value) in table {
            if SETTINGS.contains(&name.as_str()) {
                continue;
            }
            let role = value
                .clone()
                .try_into::<AgentRole>()
                .map_err(|err| invalid(name, format!("is not an agent role: {err}")))?;
            config.roles.insert(name.clone(), role);
        }
        Ok(config)
    }

    /// The cap on live sub-agents of one tree under `surface`: v1 counts sub-agents
    /// (`max_threads`); v2 counts agents with the root (`max_concurrent_threads_per_session`,
    /// default 4), so one slot less is left for sub-agents.
    pub fn sub_agent_cap(&self, surface: AgentSurface, v2: &MultiAgentV2) -> Option<usize> {
        match surface {
            AgentSurface::V2 => {
                let slots = v2
                    .max_concurrent_threads_per_session
                    .or(self.max_concurrent_threads_per_session)
                    .unwrap_or(DEFAULT_V2_CONCURRENCY);
                Some(slots.saturating_sub(1).max(1))
            }
            _ => match self.max_concurrent_threads_per_session {
                Some(slots) => Some(self.max_threads.map_or(slots - 1, |cap| cap.min(slots - 1))),
                None => self.max_threads,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<AgentsConfig, ConfigError> {
        let table: toml::Table = text.parse().unwrap();
        AgentsConfig::read(Some(&table), Path::new("config.toml"))
    }

    #[test]
    fn defaults_settings_and_roles() {
        let none = AgentsConfig::read(None, Path::new("c")).unwrap();
        assert_eq!(none.max_threads, Some(6));
        assert_eq!(none.max_depth, 1);
        let config = read(
            "max_threads = 2\nmax_depth = 3\ndefault_subagent_model = \"m\"\n\
             [reviewer]\ndescription = \"reviews\"\nmodel = \"r\"\n",
        )
        .unwrap();
        assert_eq!(config.max_threads, Some(2));
        assert_eq!(config.max_depth, 3);
        assert_eq!(config.default_subagent_model.as_deref(), Some("m"));
        assert_eq!(config.roles["reviewer"].model.as_deref(), Some("r"));
        assert_eq!(
            config.sub_agent_cap(AgentSurface::V1, &MultiAgentV2::default()),
            Some(2)
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        let err = read("max_threads = 0\n").unwrap_err().to_string();
        assert!(err.contains("agents.max_threads"), "{err}");
        let err = read("max_depth = \"x\"\n").unwrap_err().to_string();
        assert!(err.contains("agents.max_depth"), "{err}");
        let err = read("worker = 3\n").unwrap_err().to_string();
        assert!(err.contains("agents.worker"), "{err}");
    }

    #[test]
    fn v2_counts_the_root() {
        let config = read("").unwrap();
        let v2: MultiAgentV2 = toml::Value::Table(
            "enabled = true\nmax_concurrent_threads_per_session = 2\n"
                .parse()
                .unwrap(),
        )
        .try_into()
        .unwrap();
        assert!(v2.enabled);
        assert_eq!(config.sub_agent_cap(AgentSurface::V2, &v2), Some(1));
        let default_v2 = MultiAgentV2 {
            enabled: true,
            ..MultiAgentV2::default()
        };
        assert_eq!(config.sub_agent_cap(AgentSurface::V2, &default_v2), Some(3));
        let switch: MultiAgentV2 = toml::Value::Boolean(true).try_into().unwrap();
        assert!(switch.enabled);
    }
}
