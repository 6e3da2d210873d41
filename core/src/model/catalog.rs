//! The model catalog (docs/architecture.md §7.7): what each model can do, from Weft's built-in
//! facts (`catalog.toml`) with `[model_catalog]` from config on top, and the per-model features
//! that follow from it (tool search, the context window).
//!
//! A name is matched as the model servers spell it: exactly; without an `org/` prefix
//! (`google/gemma3`); without a `:tag` (Ollama's `gpt-oss:20b` is tried as `gpt-oss-20b`, then
//! `gpt-oss`); else the longest catalog slug it starts with at a `-` or `:` boundary
//! (`gpt-5.1-codex-mini-2025-11` is `gpt-5.1-codex-mini`). An unknown model gets a generic entry.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use serde::Deserialize;

use super::provider::{ProviderConfig, WireApi};
use crate::config::ConfigError;

/// The built-in catalog's text.
const BUILTIN: &str = include_str!("catalog.toml");

/// What the catalog knows about one model.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// The model id sent upstream.
    pub slug: String,
    /// Display name (the slug when unset).
    #[serde(default)]
    pub display_name: String,
    /// One line about the model.
    #[serde(default)]
    pub description: String,
    /// `openai`, `open`, or `configured` (a `[model_catalog]` entry of its own).
    #[serde(default)]
    pub family: String,
    /// The context window in tokens, when known.
    #[serde(default)]
    pub context_window: Option<u64>,
    /// The `reasoning.effort` values the model accepts (empty: not a reasoning model).
    #[serde(default = "assumed_efforts")]
    pub reasoning_efforts: Vec<String>,
    /// The effort used when none is chosen.
    #[serde(default)]
    pub default_reasoning_effort: Option<String>,
    /// `text`, `image`.
    #[serde(default = "assumed_modalities")]
    pub input_modalities: Vec<String>,
    /// Whether the model knows the client-executed `tool_search` tool.
    #[serde(default)]
    pub tool_search: bool,
    /// Whether the model understands namespaced function tools.
    #[serde(default)]
    pub namespaced_tools: bool,
    /// Left out of `model/list` unless hidden models are asked for.
    #[serde(default)]
    pub hidden: bool,
}

/// What is assumed of a model the catalog does not know: the three common efforts and text
/// plus images (the reference's assumption for models without metadata).
fn assumed_efforts() -> Vec<String> {
    ["low", "medium", "high"].map(String::from).to_vec()
}

fn assumed_modalities() -> Vec<String> {
    ["text", "image"].map(String::from).to_vec()
}

impl ModelInfo {
    /// The generic entry of a model the catalog does not know.
    pub fn unknown(slug: &str) -> ModelInfo {
        ModelInfo {
            slug: slug.to_string(),
            display_name: slug.to_string(),
            description: String::new(),
            family: String::new(),
            context_window: None,
            reasoning_efforts: assumed_efforts(),
            default_reasoning_effort: Some("medium".into()),
            input_modalities: assumed_modalities(),
            tool_search: false,
            namespaced_tools: false,
            hidden: false,
        }
    }

    /// This entry under another name (a server's spelling of the model), the facts kept.
    fn named(&self, slug: &str) -> ModelInfo {
        let mut info = self.clone();
        if info.slug != slug {
            info.slug = slug.to_string();
        }
        info
    }

    fn apply(&mut self, patch: &ModelPatch) {
        let ModelPatch {
            display_name,
            description,
            context_window,
            reasoning_efforts,
            default_reasoning_effort,
            input_modalities,
            tool_search,
            namespaced_tools,
            hidden,
        } = patch;
        set(&mut self.display_name, display_name);
        set(&mut self.description, description);
        if context_window.is_some() {
            self.context_window = *context_window;
        }
        set(&mut self.reasoning_efforts, reasoning_efforts);
        if default_reasoning_effort.is_some() {
            self.default_reasoning_effort = default_reasoning_effort.clone();
        } else if self
            .default_reasoning_effort
            .as_ref()
            .is_some_and(|default| !self.reasoning_efforts.contains(default))
        {
            // New efforts without a default: the first of them is the default (`model/list`).
            self.default_reasoning_effort = None;
        }
        set(&mut self.input_modalities, input_modalities);
        set(&mut self.tool_search, tool_search);
        set(&mut self.namespaced_tools, namespaced_tools);
        set(&mut self.hidden, hidden);
    }
}

fn set<T: Clone>(field: &mut T, value: &Option<T>) {
    if let Some(value) = value {
        *field = value.clone();
    }
}

/// One `[model_catalog.models.<slug>]` table: any field of an entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPatch {
    display_name: Option<String>,
    description: Option<String>,
    context_window: Option<u64>,
    reasoning_efforts: Option<Vec<String>>,
    default_reasoning_effort: Option<String>,
    input_modalities: Option<Vec<String>>,
    tool_search: Option<bool>,
    namespaced_tools: Option<bool>,
    hidden: Option<bool>,
}

/// `[model_catalog]` as written: the limits of the provider's `/models` fetch and the entries.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelCatalogToml {
    /// How long `GET {base_url}/models` may take, in milliseconds (default 5000).
    pub fetch_timeout_ms: u64,
    /// How long a provider's answer is reused, in seconds (default 300; 0: not cached).
    pub cache_ttl_secs: u64,
    /// At most this many models are read from one answer (default 1000).
    pub max_models: usize,
    /// At most this many bytes of one answer are read (default 4 MiB).
    pub max_response_bytes: usize,
    /// Entries by slug.
    pub models: BTreeMap<String, ModelPatch>,
}

impl Default for ModelCatalogToml {
    fn default() -> Self {
        ModelCatalogToml {
            fetch_timeout_ms: 5_000,
            cache_ttl_secs: 300,
            max_models: 1_000,
            max_response_bytes: 4 << 20,
            models: BTreeMap::new(),
        }
    }
}

/// The resolved catalog: built-in entries with config's on top, and the fetch limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCatalog {
    /// Every entry, built-in ones first (in their file's order), then new configured ones.
    pub models: Vec<ModelInfo>,
    /// The slugs `[model_catalog.models]` names (listed for every provider).
    pub configured: Vec<String>,
    /// Bound on one `/models` request.
    pub fetch_timeout: Duration,
    /// How long a provider's list is reused.
    pub cache_ttl: Duration,
    /// At most this many models per answer.
    pub max_models: usize,
    /// At most this many bytes per answer.
    pub max_response_bytes: usize,
}

impl Default for ModelCatalog {
    /// The built-in entries with the default limits.
    fn default() -> Self {
        let limits = ModelCatalogToml::default();
        ModelCatalog {
            models: builtin().to_vec(),
            configured: Vec::new(),
            fetch_timeout: Duration::from_millis(limits.fetch_timeout_ms),
            cache_ttl: Duration::from_secs(limits.cache_ttl_secs),
            max_models: limits.max_models,
            max_response_bytes: limits.max_response_bytes,
        }
    }
}

/// The built-in entries, parsed once.
pub fn builtin() -> &'static [ModelInfo] {
    static MODELS: OnceLock<Vec<ModelInfo>> = OnceLock::new();
    MODELS.get_or_init(|| {
        #[derive(Deserialize)]
        struct File {
            model: Vec<ModelInfo>,
        }
        match toml::from_str::<File>(BUILTIN) {
            Ok(file) => file.model,
            Err(err) => {
                // A unit test parses the file, so this is only reached by a broken build.
                tracing::error!(%err, "the built-in model catalog does not parse");
                Vec::new()
            }
        }
    })
}

impl ModelCatalog {
    /// Check the limits and merge the entries over the built-in ones.
    pub fn from_toml(raw: ModelCatalogToml, path: &Path) -> Result<ModelCatalog, ConfigError> {
        let invalid = |key: &str, message: &str| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: format!("model_catalog.{key}"),
            message: message.to_string(),
        };
        if !(1..=60_000).contains(&raw.fetch_timeout_ms) {
            return Err(invalid("fetch_timeout_ms", "must be between 1 and 60000"));
        }
        if !(1..=100_000).contains(&raw.max_models) {
            return Err(invalid("max_models", "must be between 1 and 100000"));
        }
        if !(1024..=(64 << 20)).contains(&raw.max_response_bytes) {
            return Err(invalid(
                "max_response_bytes",
                "must be between 1024 and 67108864",
            ));
        }
        let mut models = builtin().to_vec();
        let mut configured = Vec::new();
        for (slug, patch) in &raw.models {
            if slug.trim().is_empty() {
                return Err(invalid("models", "a model's slug must not be empty"));
            }
            match models.iter_mut().find(|model| model.slug == *slug) {
                Some(model) => model.apply(patch),
                None => {
                    let mut model = ModelInfo::unknown(slug);
                    model.family = "configured".into();
                    model.apply(patch);
                    models.push(model);
                }
            }
            configured.push(slug.clone());
        }
        for model in models.iter().filter(|m| configured.contains(&m.slug)) {
            let key = |field: &str| format!("models.\"{}\".{field}", model.slug);
            if let Some(default) = &model.default_reasoning_effort
                && !model.reasoning_efforts.is_empty()
                && !model.reasoning_efforts.contains(default)
            {
                return Err(invalid(
                    &key("default_reasoning_effort"),
                    &format!("`{default}` is not one of the model's reasoning_efforts"),
                ));
            }
            if let Some(bad) = model
                .input_modalities
                .iter()
                .find(|m| *m != "text" && *m != "image")
            {
                return Err(invalid(
                    &key("input_modalities"),
                    &format!("unknown modality `{bad}`, expected text or image"),
                ));
            }
            if model.reasoning_efforts.iter().any(|e| e.trim().is_empty()) {
                return Err(invalid(
                    &key("reasoning_efforts"),
                    "an effort must not be empty",
                ));
            }
        }
        Ok(ModelCatalog {
            models,
            configured,
            fetch_timeout: Duration::from_millis(raw.fetch_timeout_ms),
            cache_ttl: Duration::from_secs(raw.cache_ttl_secs),
            max_models: raw.max_models,
            max_response_bytes: raw.max_response_bytes,
        })
    }

    /// The entry for `name` as a server spells it (see the module docs), under that name.
    pub fn lookup(&self, name: &str) -> Option<ModelInfo> {
        let exact = |slug: &str| self.models.iter().find(|model| model.slug == slug);
        if let Some(model) = exact(name) {
            return Some(model.clone());
        }
        let lower = name.to_ascii_lowercase();
        let base = lower.rsplit('/').next().unwrap_or(&lower);
        let candidates = [
            base.to_string(),
            base.replace(':', "-"),
            base.split(':').next().unwrap_or(base).to_string(),
        ];
        for candidate in &candidates {
            if let Some(model) = exact(candidate) {
                return Some(model.named(name));
            }
        }
        self.models
            .iter()
            .filter(|model| {
                candidates[1]
                    .strip_prefix(model.slug.as_str())
                    .is_some_and(|rest| rest.starts_with(['-', ':']))
            })
            .max_by_key(|model| model.slug.len())
            .map(|model| model.named(name))
    }

    /// The entry for `name`, or the generic one.
    pub fn describe(&self, name: &str) -> ModelInfo {
        self.lookup(name)
            .unwrap_or_else(|| ModelInfo::unknown(name))
    }

    /// The entries listed for OpenAI's API.
    pub fn openai_models(&self) -> impl Iterator<Item = &ModelInfo> {
        self.models.iter().filter(|model| model.family == "openai")
    }
}

/// Whether `provider` is OpenAI's API (the built-in `openai`, or a provider at its address).
pub fn is_openai(provider: &ProviderConfig) -> bool {
    provider.id == "openai" || provider.base_url.starts_with("https://api.openai.com/")
}

/// Whether a turn of `model` on `provider` defers MCP tools behind `tool_search`
/// (docs/mcp.md §4): on the Responses API only; `[features] tool_search` when the config sets
/// it; else what a client switched it to (`switched`, the runtime enablement), on or off; else
/// on when the catalog says the model knows the tool.
pub fn tool_search(
    config: &crate::config::Config,
    switched: Option<bool>,
    provider: &ProviderConfig,
    model: &str,
) -> bool {
    if provider.wire_api != WireApi::Responses {
        return false;
    }
    let explicit = config
        .layers
        .merged
        .get("features")
        .and_then(toml::Value::as_table)
        .and_then(|features| features.get("tool_search"))
        .and_then(toml::Value::as_bool);
    explicit
        .or(switched)
        .unwrap_or_else(|| config.model_catalog.describe(model).tool_search)
}

/// Whether `model`'s requests to `provider` carry namespaced tools flat: on the Responses API,
/// for a model the catalog knows does not understand namespaces (a model it does not know keeps
/// them, as before the catalog).
pub fn flat_tools(config: &crate::config::Config, provider: &ProviderConfig, model: &str) -> bool {
    provider.wire_api == WireApi::Responses
        && config
            .model_catalog
            .lookup(model)
            .is_some_and(|info| !info.namespaced_tools)
}

/// `tools` with each namespace replaced by its functions, named `<namespace>__<name>` (the
/// flat name calls come back with and the tools resolve, as on Chat Completions).
pub fn flatten_namespaces(tools: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    use serde_json::Value;
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        if tool.get("type").and_then(Value::as_str) != Some("namespace") {
            out.push(tool);
            continue;
        }
        let namespace = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let inner = tool
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for function in inner {
            let mut function = function.clone();
            if let Some(name) = function.get("name").and_then(Value::as_str) {
                let flat = format!(
                    "{namespace}{}{name}",
                    crate::tools::dynamic_tool::FLAT_SEPARATOR
                );
                function["name"] = Value::String(flat);
            }
            out.push(function);
        }
    }
    out
}

/// The context window of `model`: `model_context_window` when configured, else the catalog's.
pub fn context_window(config: &crate::config::Config, model: &str) -> Option<u64> {
    config
        .model_context_window
        .or_else(|| config.model_catalog.lookup(model)?.context_window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_catalog_parses_and_its_slugs_are_unique() {
        let models = builtin();
        assert!(models.len() > 20, "{}", models.len());
        let mut slugs: Vec<&str> = models.iter().map(|m| m.slug.as_str()).collect();
        slugs.sort_unstable();
        slugs.dedup();
        assert_eq!(slugs.len(), models.len());
        for model in models {
            assert!(
                matches!(model.family.as_str(), "openai" | "open"),
                "{model:?}"
            );
            assert!(!model.display_name.is_empty() && !model.description.is_empty());
            if let Some(default) = &model.default_reasoning_effort {
                assert!(model.reasoning_efforts.contains(default), "{model:?}");
            }
            assert!(
                model
                    .input_modalities
                    .iter()
                    .all(|m| m == "text" || m == "image")
            );
        }
        let five = ModelCatalog::default().describe("gpt-5.5");
        assert!(five.tool_search && five.namespaced_tools);
        assert_eq!(five.context_window, Some(272_000));
    }

    #[test]
    fn server_spellings_match_the_catalog() {
        let catalog = ModelCatalog::default();
        let slug_of = |name: &str| {
            catalog.lookup(name).map(|m| {
                assert_eq!(m.slug, name, "an entry keeps the server's name");
                m.display_name
            })
        };
        assert_eq!(slug_of("gpt-oss:20b").as_deref(), Some("gpt-oss-20b"));
        assert_eq!(slug_of("qwen3-coder:30b").as_deref(), Some("Qwen3-Coder"));
        assert_eq!(slug_of("google/gemma3").as_deref(), Some("Gemma 3"));
        assert_eq!(
            slug_of("gpt-5.1-codex-mini-2025-11").as_deref(),
            Some("GPT-5.1-Codex-Mini")
        );
        assert_eq!(slug_of("llama3.1:8b").as_deref(), Some("Llama 3.1"));
        assert_eq!(slug_of("gpt-5.10"), None, "a dot is no boundary");
        assert_eq!(slug_of("mock-model"), None);
        let unknown = catalog.describe("mock-model");
        assert_eq!(unknown.display_name, "mock-model");
        assert_eq!(unknown.reasoning_efforts, ["low", "medium", "high"]);
        assert!(!unknown.tool_search);
    }

    #[test]
    fn namespaces_flatten_into_functions() {
        let tools = vec![
            serde_json::json!({"type": "function", "name": "plain"}),
            serde_json::json!({"type": "namespace", "name": "ns", "description": "d", "tools": [
                {"type": "function", "name": "a", "parameters": {}},
                {"type": "function", "name": "b", "parameters": {}}
            ]}),
        ];
        assert_eq!(
            flatten_namespaces(tools),
            vec![
                serde_json::json!({"type": "function", "name": "plain"}),
                serde_json::json!({"type": "function", "name": "ns__a", "parameters": {}}),
                serde_json::json!({"type": "function", "name": "ns__b", "parameters": {}}),
            ]
        );
    }

    /// `[features] tool_search` wins; else a client's runtime switch, off as well as on; else
    /// the catalog (gpt-5.5 knows the tool, gpt-4.1 does not).
    #[test]
    fn tool_search_per_model_follows_config_then_the_switch_then_the_catalog() {
        let home = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            crate::config::Config::load_text(home.path(), Some(text), &[])
                .unwrap()
                .0
        };
        let provider = ProviderConfig::new("p", "P", "http://127.0.0.1:9/v1");
        let plain = load("");
        for (switched, five, four) in [
            (None, true, false),
            (Some(false), false, false),
            (Some(true), true, true),
        ] {
            assert_eq!(tool_search(&plain, switched, &provider, "gpt-5.5"), five);
            assert_eq!(tool_search(&plain, switched, &provider, "gpt-4.1"), four);
        }
        let off = load("[features]\ntool_search = false\n");
        assert!(!tool_search(&off, Some(true), &provider, "gpt-5.5"));
        let mut chat = provider.clone();
        chat.wire_api = WireApi::Chat;
        assert!(!tool_search(&plain, Some(true), &chat, "gpt-5.5"));
    }

    #[test]
    fn config_entries_patch_or_add_and_limits_are_checked() {
        let raw: ModelCatalogToml = toml::from_str(
            r#"
fetch_timeout_ms = 250
[models."gpt-5.5"]
context_window = 100000
tool_search = false
[models."my-local"]
display_name = "Mine"
input_modalities = ["text"]
reasoning_efforts = []
"#,
        )
        .unwrap();
        let catalog = ModelCatalog::from_toml(raw, Path::new("c.toml")).unwrap();
        assert_eq!(catalog.fetch_timeout, Duration::from_millis(250));
        let five = catalog.describe("gpt-5.5");
        assert_eq!(five.context_window, Some(100_000));
        assert!(!five.tool_search);
        assert_eq!(five.display_name, "GPT-5.5", "unpatched fields stay");
        let mine = catalog.describe("my-local");
        assert_eq!(mine.family, "configured");
        assert_eq!(mine.display_name, "Mine");
        assert!(mine.reasoning_efforts.is_empty());
        assert_eq!(catalog.configured, ["gpt-5.5", "my-local"]);

        let zero: ModelCatalogToml = toml::from_str("fetch_timeout_ms = 0").unwrap();
        let err = ModelCatalog::from_toml(zero, Path::new("c.toml")).unwrap_err();
        assert!(
            err.to_string().contains("model_catalog.fetch_timeout_ms"),
            "{err}"
        );
        assert!(toml::from_str::<ModelCatalogToml>("[models.x]\nbogus = 1").is_err());
        for (entry, key) in [
            (
                "reasoning_efforts = [\"low\"]\ndefault_reasoning_effort = \"max\"",
                "default_reasoning_effort",
            ),
            ("input_modalities = [\"audio\"]", "input_modalities"),
            ("reasoning_efforts = [\"\"]", "reasoning_efforts"),
        ] {
            let raw: ModelCatalogToml = toml::from_str(&format!("[models.m]\n{entry}")).unwrap();
            let err = ModelCatalog::from_toml(raw, Path::new("c.toml")).unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("model_catalog.models.\"m\".{key}")),
                "{err}"
            );
        }
    }
}
