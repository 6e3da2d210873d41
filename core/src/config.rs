//! Weft's configuration: `$WEFT_HOME/config.toml` plus `-c key=value` overrides.
//!
//! The keys are Codex's where the meaning is the same, so one file can serve both. Unknown keys
//! are ignored (debug log for the file, a warning for command-line overrides); a file that cannot
//! be parsed, or a known key with the wrong type, is a [`ConfigError`] that names the file and key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config_base::one_line;
use crate::exec::{ShellEnvironmentPolicy, ShellEnvironmentPolicyToml};
use crate::hooks::StopHookConfig;
use crate::hooks::config::{HooksOrigin, SESSION_FLAGS_PATH, StopHooks};
use crate::http_client::HttpConfig;
use crate::mcp::McpServers;
use crate::model::provider::{ProviderConfig, WireApi};

mod agents;
pub mod edit;
mod features;
mod fs;
mod guardian;
pub mod live;
pub mod provider_write;
mod review;
mod search;
pub mod skill_switches;
mod snapshots;
mod web;
pub mod write;

pub use crate::config_base::{
    ConfigError, ConfigLayer, ConfigLayers, LayerSource, toml_to_json, version_of,
};
pub use crate::limits::Limits;
pub use agents::{AgentRole, AgentSurface, AgentsConfig, MultiAgentV2};
pub use features::{Features, GoalsConfig, KNOWN_FEATURES};
pub use fs::FsConfig;
pub use guardian::GuardianConfig;
pub use review::ReviewConfig;
pub use search::FileSearchConfig;
pub use snapshots::SnapshotsConfig;
pub use web::{WebConfig, normalize_origin};

/// Keys of the top level of `config.toml` that Weft understands.
pub const KNOWN_KEYS: &[&str] = &[
    "model",
    "model_provider",
    "model_providers",
    "approval_policy",
    "sandbox_mode",
    "model_context_window",
    "model_auto_compact_token_limit",
    "model_max_output_tokens",
    "model_catalog",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "hooks",
    "thread_idle_timeout_secs",
    "shell_environment_policy",
    "limits",
    "http",
    "mcp_servers",
    "mcp",
    "features",
    "goals",
    "review",
    "review_model",
    "snapshots",
    "approvals_reviewer",
    "guardian",
    "agents",
    "web",
    "fs",
    "file_search",
];

/// The default model when neither config nor request names one.
pub const DEFAULT_MODEL: &str = "gpt-5.5";
/// The default provider id.
pub const DEFAULT_PROVIDER: &str = "openai";

/// The raw, typed view of the known keys. Everything is optional: defaults are applied in
/// [`Config::from_toml`].
#[derive(Debug, Default, Deserialize)]
struct ConfigToml {
    model: Option<String>,
    model_provider: Option<String>,
    #[serde(default)]
    model_providers: BTreeMap<String, ProviderConfig>,
    approval_policy: Option<String>,
    sandbox_mode: Option<String>,
    model_context_window: Option<u64>,
    model_auto_compact_token_limit: Option<u64>,
    model_max_output_tokens: Option<u64>,
    #[serde(default)]
    model_catalog: crate::model::catalog::ModelCatalogToml,
    model_reasoning_effort: Option<String>,
    model_reasoning_summary: Option<String>,
    thread_idle_timeout_secs: Option<u64>,
    #[serde(default)]
    shell_environment_policy: ShellEnvironmentPolicyToml,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    http: HttpConfig,
    #[serde(default)]
    mcp: McpToml,
    #[serde(default)]
    features: Features,
    #[serde(default)]
    goals: GoalsConfig,
    #[serde(default)]
    review: ReviewConfig,
    review_model: Option<String>,
    #[serde(default)]
    snapshots: SnapshotsConfig,
    approvals_reviewer: Option<String>,
    #[serde(default)]
    guardian: GuardianConfig,
    #[serde(default)]
    web: WebConfig,
    #[serde(default)]
    fs: FsConfig,
    #[serde(default)]
    file_search: FileSearchConfig,
}

/// `[mcp]`: Weft's own MCP settings (the servers are `[mcp_servers.*]`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct McpToml {
    #[serde(default)]
    eager_start: bool,
}

/// The resolved configuration of one daemon (immutable; shared as `Arc<Config>`).
#[derive(Debug, Clone)]
pub struct Config {
    /// `$WEFT_HOME`.
    pub home: PathBuf,
    /// Default model for new threads.
    pub model: String,
    /// Default provider id for new threads.
    pub model_provider: String,
    /// Every provider, built-ins included, by id.
    pub model_providers: BTreeMap<String, ProviderConfig>,
    /// Default approval policy (Codex spelling, e.g. `on-request`).
    pub approval_policy: Option<String>,
    /// Default sandbox mode (`read-only`, `workspace-write`, `danger-full-access`).
    pub sandbox_mode: Option<String>,
    /// The model's context window in tokens, when known.
    pub model_context_window: Option<u64>,
    /// Token count at which automatic compaction starts.
    pub model_auto_compact_token_limit: Option<u64>,
    /// `[model_catalog]` over the built-in catalog: what each model can do
    /// (docs/architecture.md §7.7).
    pub model_catalog: crate::model::catalog::ModelCatalog,
    /// Default reasoning effort.
    pub model_reasoning_effort: Option<String>,
    /// Default reasoning summary mode.
    pub model_reasoning_summary: Option<String>,
    /// `[[hooks.stop]]` entries that parse (the ones that run).
    pub stop_hooks: Vec<StopHookConfig>,
    /// `[[hooks.stop]]` as configured: where, each entry's index, and what was skipped.
    pub hooks: StopHooks,
    /// The layers the config was built from, as written.
    pub layers: ConfigLayers,
    /// Seconds a thread with no subscribers and no activity stays loaded.
    pub thread_idle_timeout_secs: u64,
    /// `[shell_environment_policy]`: the environment of the model's commands, with every
    /// provider's `env_key` always removed.
    pub shell_environment_policy: ShellEnvironmentPolicy,
    /// `[limits]`: what one client may cost the daemon.
    pub limits: Limits,
    /// `[http]`: how the daemon's HTTP clients connect (timeouts, pool, extra CA bundle).
    pub http: HttpConfig,
    /// `[mcp_servers.*]` (entries that do not parse are left out, with warnings).
    pub mcp_servers: McpServers,
    /// `[features]`: the optional features that are on.
    pub features: Features,
    /// `[goals]`: how far a goal is pursued without the user.
    pub goals: GoalsConfig,
    /// `[review]`: what a review attaches to its prompt (README, docs/protocol.md §7.28).
    pub review: ReviewConfig,
    /// `review_model`: the model reviews ask (the thread's model when unset).
    pub review_model: Option<String>,
    /// `[snapshots]`: the ghost snapshots of the workspace and their limits.
    pub snapshots: SnapshotsConfig,
    /// Who answers approval questions by default: `user` (unset), or `auto_review` /
    /// `guardian_subagent` for the guardian (docs/protocol.md §9.8).
    pub approvals_reviewer: Option<String>,
    /// `[guardian]`: the reviewer's model, timeout and input limits.
    pub guardian: GuardianConfig,
    /// `[agents]`: the limits of sub-agent trees (docs/agents.md §2).
    pub agents: AgentsConfig,
    /// `[web]`: the browser client and the origins admitted to the socket (docs/web.md).
    pub web: WebConfig,
    /// `[fs]`: what the `fs/*` methods may reach, and the bounds of their watches
    /// (docs/protocol.md §7.31).
    pub fs: FsConfig,
    /// `[file_search]`: the bounds of fuzzy file search and thread search (docs/protocol.md
    /// §7.33).
    pub file_search: FileSearchConfig,
}

/// What loading found besides the config itself: keys that were ignored.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Unknown keys from the file (reported at debug level).
    pub ignored_file_keys: Vec<String>,
    /// Unknown keys from `-c` / `--enable` / `--disable` (reported as warnings).
    pub ignored_override_keys: Vec<String>,
}

impl Config {
    /// The home directory: `$WEFT_HOME`, else `~/.weft` ([`crate::config_base::default_home`]).
    pub fn default_home() -> PathBuf {
        crate::config_base::default_home()
    }

    /// Load `home/config.toml` (if present) with `overrides` (`key=value` strings, value parsed
    /// as TOML with a fallback to a plain string) applied on top.
    pub fn load(home: &Path, overrides: &[String]) -> Result<(Config, LoadReport), ConfigError> {
        let path = home.join("config.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.clone(),
                    source,
                });
            }
        };
        let overrides = overrides
            .iter()
            .map(|raw| parse_override(raw))
            .collect::<Result<Vec<_>, _>>()?;
        Config::load_text(home, text.as_deref(), &overrides)
    }

    /// [`Config::load`] with the file's text given (`None`: no file) and the overrides parsed:
    /// what a config write checks before it replaces the file (`edit`, docs/protocol.md §7.34).
    pub fn load_text(
        home: &Path,
        text: Option<&str>,
        overrides: &[(String, toml::Value)],
    ) -> Result<(Config, LoadReport), ConfigError> {
        let path = home.join("config.toml");
        let mut table = match text {
            Some(text) => text
                .parse::<toml::Table>()
                .map_err(|err| ConfigError::Parse {
                    path: path.clone(),
                    message: one_line(&err.to_string()),
                })?,
            None => toml::Table::new(),
        };
        let mut report = LoadReport::default();
        for key in table.keys() {
            if !KNOWN_KEYS.contains(&key.as_str()) {
                report.ignored_file_keys.push(key.clone());
            }
        }
        let file_table = table.clone();
        let mut override_table = toml::Table::new();
        for (key, value) in overrides {
            let (key, value) = (key.clone(), value.clone());
            let top = key.split('.').next().unwrap_or_default();
            if !KNOWN_KEYS.contains(&top) || features::is_unknown_feature(&key) {
                report.ignored_override_keys.push(key.clone());
                continue;
            }
            let invalid = |message| ConfigError::Invalid {
                path: PathBuf::from("command line"),
                key: key.clone(),
                message,
            };
            set_dotted(&mut table, &key, value.clone()).map_err(invalid)?;
            set_dotted(&mut override_table, &key, value).map_err(invalid)?;
        }
        // Features Weft does not know are ignored like unknown keys: kept in the file's layer
        // as written, left out of what is applied.
        report
            .ignored_file_keys
            .extend(features::strip_unknown_features(&mut table));
        let layers = ConfigLayers {
            file_path: path.clone(),
            file: ConfigLayer {
                source: LayerSource::User,
                table: file_table,
            },
            overrides: (!override_table.is_empty()).then_some(ConfigLayer {
                source: LayerSource::SessionFlags,
                table: override_table,
            }),
            merged: table,
        };
        let config = Config::from_toml(home, &path, layers)?;
        Ok((config, report))
    }

    /// Build the config from a parsed table (file plus overrides).
    fn from_toml(home: &Path, path: &Path, layers: ConfigLayers) -> Result<Config, ConfigError> {
        let raw = typed(path, &layers.merged)?;
        let hooks_from_flags = layers
            .overrides
            .as_ref()
            .and_then(|layer| layer.table.get("hooks"))
            .and_then(toml::Value::as_table)
            .is_some_and(|hooks| hooks.contains_key("stop"));
        let hooks_origin = if hooks_from_flags {
            HooksOrigin {
                source: LayerSource::SessionFlags,
                path: SESSION_FLAGS_PATH.to_string(),
            }
        } else {
            HooksOrigin {
                source: LayerSource::User,
                path: path.display().to_string(),
            }
        };
        let hooks = StopHooks::read(layers.merged.get("hooks"), hooks_origin);
        let mcp_value = layers.merged.get("mcp_servers").cloned();
        let layers_mcp = mcp_value.as_ref();
        let mut providers = builtin_providers();
        for (id, mut provider) in raw.model_providers {
            provider.id = id.clone();
            providers.insert(id, provider);
        }
        // `model_max_output_tokens` caps every model request (docs/architecture.md §7.3).
        for provider in providers.values_mut() {
            provider.max_output_tokens = raw.model_max_output_tokens;
        }
        let model_provider = raw
            .model_provider
            .unwrap_or_else(|| DEFAULT_PROVIDER.to_string());
        if !providers.contains_key(&model_provider) {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                key: "model_provider".into(),
                message: format!("no provider `{model_provider}` in [model_providers]"),
            });
        }
        for (key, value) in [
            ("approval_policy", &raw.approval_policy),
            ("sandbox_mode", &raw.sandbox_mode),
        ] {
            if let Some(value) = value {
                let allowed: &[&str] = if key == "approval_policy" {
                    &["untrusted", "on-request", "never"]
                } else {
                    &["read-only", "workspace-write", "danger-full-access"]
                };
                if !allowed.contains(&value.as_str()) {
                    return Err(ConfigError::Invalid {
                        path: path.to_path_buf(),
                        key: key.into(),
                        message: format!(
                            "unknown value `{value}`, expected one of {}",
                            allowed.join(", ")
                        ),
                    });
                }
            }
        }
        let provider_keys = providers
            .values()
            .filter_map(|provider| provider.env_key.clone())
            .collect();
        let shell_environment_policy =
            ShellEnvironmentPolicy::from_toml(raw.shell_environment_policy, provider_keys);
        let agents = AgentsConfig::read(
            layers.merged.get("agents").and_then(toml::Value::as_table),
            path,
        )?;
        Ok(Config {
            home: home.to_path_buf(),
            model: raw.model.unwrap_or_else(|| DEFAULT_MODEL.to_string()),
            model_provider,
            model_providers: providers,
            approval_policy: raw.approval_policy,
            sandbox_mode: raw.sandbox_mode,
            model_context_window: raw.model_context_window,
            model_auto_compact_token_limit: raw.model_auto_compact_token_limit,
            model_catalog: crate::model::catalog::ModelCatalog::from_toml(raw.model_catalog, path)?,
            model_reasoning_effort: raw.model_reasoning_effort,
            model_reasoning_summary: raw.model_reasoning_summary,
            stop_hooks: hooks.configs(),
            hooks,
            layers,
            thread_idle_timeout_secs: raw.thread_idle_timeout_secs.unwrap_or(30 * 60),
            shell_environment_policy,
            limits: raw.limits.validated(path)?,
            http: raw.http.validated(home, path)?,
            mcp_servers: McpServers {
                eager_start: raw.mcp.eager_start,
                ..McpServers::read(layers_mcp)
            },
            features: raw.features,
            goals: raw.goals.validated(path)?,
            review: raw.review.validated(path)?,
            review_model: raw.review_model.filter(|model| !model.trim().is_empty()),
            snapshots: raw.snapshots.validated(path)?,
            approvals_reviewer: guardian::validated_reviewer(raw.approvals_reviewer, path)?,
            guardian: raw.guardian.validated(path)?,
            web: raw.web.validated(path)?,
            fs: raw.fs.validated(path)?,
            file_search: raw.file_search.validated(path)?,
            agents,
        })
    }

    /// The provider with this id.
    pub fn provider(&self, id: &str) -> Option<&ProviderConfig> {
        self.model_providers.get(id)
    }
}

/// Deserialize the known keys one by one, so an error names the key it is about.
fn typed(path: &Path, table: &toml::Table) -> Result<ConfigToml, ConfigError> {
    let mut known = toml::Table::new();
    // `hooks` and `mcp_servers` are read entry by entry (`hooks::config`, `mcp::config`): a
    // bad entry is skipped, not fatal.
    for key in KNOWN_KEYS
        .iter()
        .filter(|key| **key != "hooks" && **key != "mcp_servers")
    {
        let Some(value) = table.get(*key) else {
            continue;
        };
        let mut single = toml::Table::new();
        single.insert((*key).to_string(), value.clone());
        if let Err(err) = toml::Value::Table(single).try_into::<ConfigToml>() {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                key: (*key).to_string(),
                message: one_line(&err.to_string()),
            });
        }
        known.insert((*key).to_string(), value.clone());
    }
    toml::Value::Table(known)
        .try_into::<ConfigToml>()
        .map_err(|err| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: "(config)".into(),
            message: one_line(&err.to_string()),
        })
}

/// The providers every Weft knows without configuration.
fn builtin_providers() -> BTreeMap<String, ProviderConfig> {
    let mut providers = BTreeMap::new();
    let mut openai = ProviderConfig::new("openai", "OpenAI", "https://api.openai.com/v1");
    openai.env_key = Some("OPENAI_API_KEY".into());
    openai.wire_api = WireApi::Responses;
    providers.insert(openai.id.clone(), openai);
    for (id, name, port) in [("ollama", "Ollama", 11434), ("lmstudio", "LM Studio", 1234)] {
        let mut local = ProviderConfig::new(id, name, format!("http://localhost:{port}/v1"));
        local.wire_api = WireApi::Chat;
        providers.insert(id.to_string(), local);
    }
    providers
}

/// Split `key=value` and parse the value as TOML, falling back to a plain string.
pub fn parse_override(raw: &str) -> Result<(String, toml::Value), ConfigError> {
    let Some((key, value)) = raw.split_once('=') else {
        return Err(ConfigError::Override(raw.to_string()));
    };
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(ConfigError::Override(raw.to_string()));
    }
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    Ok((key.to_string(), parsed))
}

/// Set `a.b.c = value` in a table, creating intermediate tables.
fn set_dotted(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().unwrap_or_default();
    let mut current = table;
    for part in parts {
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        current = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(format!("`{part}` is not a table")),
        };
    }
    current.insert(last.to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests;
