//! Weft's configuration: `$WEFT_HOME/config.toml` plus `-c key=value` overrides.
//!
//! The keys are Codex's where the meaning is the same, so one file can serve both. Unknown keys
//! are ignored (debug log for the file, a warning for command-line overrides); a file that cannot
//! be parsed, or a known key with the wrong type, is a [`ConfigError`] that names the file and key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exec::{ShellEnvironmentPolicy, ShellEnvironmentPolicyToml};
use crate::hooks::StopHookConfig;
use crate::model::provider::{ProviderConfig, WireApi};

/// Keys of the top level of `config.toml` that Weft understands.
const KNOWN_KEYS: &[&str] = &[
    "model",
    "model_provider",
    "model_providers",
    "approval_policy",
    "sandbox_mode",
    "model_context_window",
    "model_auto_compact_token_limit",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "hooks",
    "thread_idle_timeout_secs",
    "shell_environment_policy",
    "limits",
];

/// The default model when neither config nor request names one.
pub const DEFAULT_MODEL: &str = "gpt-5.5";
/// The default provider id.
pub const DEFAULT_PROVIDER: &str = "openai";

/// Why the configuration could not be loaded. Its `Display` is one line naming file and key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{path}: invalid TOML: {message}")]
    Parse {
        /// The config file.
        path: PathBuf,
        /// The parser's message, folded onto one line.
        message: String,
    },
    /// A known key has a value of the wrong type or an invalid value.
    #[error("{path}: key `{key}`: {message}")]
    Invalid {
        /// The config file (or `command line` for overrides).
        path: PathBuf,
        /// The dotted key.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A `-c key=value` override is malformed.
    #[error("invalid override `{0}`: expected key=value")]
    Override(String),
}

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
    model_reasoning_effort: Option<String>,
    model_reasoning_summary: Option<String>,
    #[serde(default)]
    hooks: HooksToml,
    thread_idle_timeout_secs: Option<u64>,
    #[serde(default)]
    shell_environment_policy: ShellEnvironmentPolicyToml,
    #[serde(default)]
    limits: Limits,
}

#[derive(Debug, Default, Deserialize)]
struct HooksToml {
    #[serde(default)]
    stop: Vec<StopHookConfig>,
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
    /// Default reasoning effort.
    pub model_reasoning_effort: Option<String>,
    /// Default reasoning summary mode.
    pub model_reasoning_summary: Option<String>,
    /// `[[hooks.stop]]` entries.
    pub stop_hooks: Vec<StopHookConfig>,
    /// Seconds a thread with no subscribers and no activity stays loaded.
    pub thread_idle_timeout_secs: u64,
    /// `[shell_environment_policy]`: the environment of the model's commands, with every
    /// provider's `env_key` always removed.
    pub shell_environment_policy: ShellEnvironmentPolicy,
    /// `[limits]`: what one client may cost the daemon.
    pub limits: Limits,
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
    /// The home directory: `$WEFT_HOME`, else `~/.weft`.
    pub fn default_home() -> PathBuf {
        if let Some(home) = std::env::var_os("WEFT_HOME").filter(|v| !v.is_empty()) {
            return PathBuf::from(home);
        }
        let user_home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        user_home.join(".weft")
    }

    /// Load `home/config.toml` (if present) with `overrides` (`key=value` strings, value parsed
    /// as TOML with a fallback to a plain string) applied on top.
    pub fn load(home: &Path, overrides: &[String]) -> Result<(Config, LoadReport), ConfigError> {
        let path = home.join("config.toml");
        let mut table = match std::fs::read_to_string(&path) {
            Ok(text) => text
                .parse::<toml::Table>()
                .map_err(|err| ConfigError::Parse {
                    path: path.clone(),
                    message: one_line(&err.to_string()),
                })?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.clone(),
                    source,
                });
            }
        };
        let mut report = LoadReport::default();
        for key in table.keys() {
            if !KNOWN_KEYS.contains(&key.as_str()) {
                report.ignored_file_keys.push(key.clone());
            }
        }
        for raw in overrides {
            let (key, value) = parse_override(raw)?;
            let top = key.split('.').next().unwrap_or_default();
            if !KNOWN_KEYS.contains(&top) {
                report.ignored_override_keys.push(key.clone());
                continue;
            }
            set_dotted(&mut table, &key, value).map_err(|message| ConfigError::Invalid {
                path: PathBuf::from("command line"),
                key: key.clone(),
                message,
            })?;
        }
        let config = Config::from_toml(home, &path, table)?;
        Ok((config, report))
    }

    /// Build the config from a parsed table (file plus overrides).
    fn from_toml(home: &Path, path: &Path, table: toml::Table) -> Result<Config, ConfigError> {
        let raw = typed(path, &table)?;
        let mut providers = builtin_providers();
        for (id, mut provider) in raw.model_providers {
            provider.id = id.clone();
            providers.insert(id, provider);
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
        Ok(Config {
            home: home.to_path_buf(),
            model: raw.model.unwrap_or_else(|| DEFAULT_MODEL.to_string()),
            model_provider,
            model_providers: providers,
            approval_policy: raw.approval_policy,
            sandbox_mode: raw.sandbox_mode,
            model_context_window: raw.model_context_window,
            model_auto_compact_token_limit: raw.model_auto_compact_token_limit,
            model_reasoning_effort: raw.model_reasoning_effort,
            model_reasoning_summary: raw.model_reasoning_summary,
            stop_hooks: raw.hooks.stop,
            thread_idle_timeout_secs: raw.thread_idle_timeout_secs.unwrap_or(30 * 60),
            shell_environment_policy,
            limits: raw.limits.validated(path)?,
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
    for key in KNOWN_KEYS {
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

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

// ---- [limits] ----------------------------------------------------------------------------

/// `[limits]`: bounds on what one client can make the daemon hold (README, "Configuration").
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Largest message accepted, in bytes: a stdio line or a whole WebSocket message.
    pub max_message_bytes: usize,
    /// WebSocket connections open at once, counting those still in their HTTP handshake.
    pub max_connections: usize,
    /// Seconds a TCP connection may take to complete its WebSocket upgrade.
    pub handshake_timeout_secs: u64,
    /// Seconds stdio waits, after stdin's end, for the answers to requests already read.
    pub shutdown_grace_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 4 * 1024 * 1024,
            max_connections: 256,
            handshake_timeout_secs: 10,
            shutdown_grace_secs: 10,
        }
    }
}

impl Limits {
    /// Smallest `max_message_bytes` accepted: any real request fits in it.
    pub const MIN_MESSAGE_BYTES: usize = 1024;

    fn validated(self, path: &Path) -> Result<Limits, ConfigError> {
        let invalid = |key: &str, message: &str| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: format!("limits.{key}"),
            message: message.to_string(),
        };
        if self.max_message_bytes < Self::MIN_MESSAGE_BYTES {
            return Err(invalid(
                "max_message_bytes",
                &format!("must be at least {}", Self::MIN_MESSAGE_BYTES),
            ));
        }
        if self.max_connections == 0 {
            return Err(invalid("max_connections", "must be at least 1"));
        }
        if self.handshake_timeout_secs == 0 {
            return Err(invalid("handshake_timeout_secs", "must be at least 1"));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str, overrides: &[&str]) -> Result<(Config, LoadReport), ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), text).unwrap();
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        Config::load(dir.path(), &overrides)
    }

    #[test]
    fn defaults_without_file() {
        let dir = tempfile::tempdir().unwrap();
        let (config, _) = Config::load(dir.path(), &[]).unwrap();
        assert_eq!(config.model, DEFAULT_MODEL);
        assert_eq!(config.model_provider, "openai");
        assert!(config.provider("ollama").is_some());
        assert_eq!(config.thread_idle_timeout_secs, 1800);
    }

    #[test]
    fn provider_table_and_unknown_keys() {
        let (config, report) = load_text(
            r#"
model = "m1"
model_provider = "mock"
[features]
plugins = false
[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:9/v1"
wire_api = "chat"
request_max_retries = 1
"#,
            &[],
        )
        .unwrap();
        assert_eq!(config.model, "m1");
        let mock = config.provider("mock").unwrap();
        assert_eq!(mock.id, "mock");
        assert_eq!(mock.wire_api, WireApi::Chat);
        assert_eq!(mock.request_max_retries, 1);
        assert_eq!(report.ignored_file_keys, vec!["features".to_string()]);
    }

    #[test]
    fn shell_environment_policy_section() {
        use crate::exec::Inherit;
        let (config, report) = load_text(
            "[shell_environment_policy]\nexclude = [\"AWS_*\"]\n[model_providers.mock]\nname = \"M\"\nbase_url = \"http://x\"\nenv_key = \"MOCK_CRED\"\n",
            &["shell_environment_policy.inherit=\"none\""],
        )
        .unwrap();
        assert!(report.ignored_override_keys.is_empty());
        let policy = &config.shell_environment_policy;
        assert_eq!(policy.inherit, Inherit::None);
        assert_eq!(policy.exclude, ["AWS_*"]);
        assert!(!policy.ignore_default_excludes);
        // Every provider's key is always left out.
        assert!(policy.always_exclude.contains(&"MOCK_CRED".to_string()));
        assert!(
            policy
                .always_exclude
                .contains(&"OPENAI_API_KEY".to_string())
        );
        let err = load_text("[shell_environment_policy]\ninherit = \"some\"\n", &[]).unwrap_err();
        assert!(
            err.to_string().contains("shell_environment_policy"),
            "{err}"
        );
    }

    #[test]
    fn wrong_type_names_the_key() {
        let err = load_text("model = 5\n", &[]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("config.toml"), "{text}");
        assert!(text.contains("`model`"), "{text}");
        assert!(!text.contains('\n'));
    }

    #[test]
    fn nested_wrong_type_names_the_table() {
        let err = load_text("[model_providers.x]\nbase_url = 3\nname = \"x\"\n", &[]).unwrap_err();
        assert!(err.to_string().contains("`model_providers`"), "{err}");
    }

    #[test]
    fn unparsable_file() {
        let err = load_text("model = \n[[[", &[]).unwrap_err();
        assert!(matches!(err, ConfigError::Parse { .. }));
        assert!(!err.to_string().contains('\n'));
    }

    #[test]
    fn overrides_parse_toml_then_fall_back_to_string() {
        assert_eq!(
            parse_override("a.b=5").unwrap(),
            ("a.b".to_string(), toml::Value::Integer(5))
        );
        assert_eq!(
            parse_override("web_search=\"live\"").unwrap().1,
            toml::Value::String("live".into())
        );
        assert_eq!(
            parse_override("model=gpt-x").unwrap().1,
            toml::Value::String("gpt-x".into())
        );
        assert!(parse_override("novalue").is_err());
        let (config, report) = load_text(
            "",
            &["model=o3", "features.foo=true", "web_search=\"live\""],
        )
        .unwrap();
        assert_eq!(config.model, "o3");
        assert_eq!(
            report.ignored_override_keys,
            vec!["features.foo".to_string(), "web_search".to_string()]
        );
    }

    #[test]
    fn bad_enum_value() {
        let err = load_text("approval_policy = \"on-failure\"\n", &[]).unwrap_err();
        assert!(err.to_string().contains("approval_policy"));
    }

    #[test]
    fn limits_default_override_and_refuse_zero() {
        let (config, _) = load_text("", &[]).unwrap();
        assert_eq!(config.limits, Limits::default());
        let (config, report) = load_text(
            "[limits]\nmax_connections = 4\n",
            &["limits.handshake_timeout_secs=1"],
        )
        .unwrap();
        assert!(report.ignored_override_keys.is_empty());
        assert_eq!(config.limits.max_connections, 4);
        assert_eq!(config.limits.handshake_timeout_secs, 1);
        let err = load_text("", &["limits.max_connections=0"]).unwrap_err();
        assert!(
            err.to_string().contains("`limits.max_connections`"),
            "{err}"
        );
        let err = load_text("[limits]\nmax_message_bytes = \"big\"\n", &[]).unwrap_err();
        assert!(err.to_string().contains("`limits`"), "{err}");
    }
}
