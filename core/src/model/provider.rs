//! A model provider: where to send requests, how to authenticate, which wire API, and the retry
//! and timeout knobs. Deserialized from `[model_providers.<id>]` (Codex's keys).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use super::error::ModelError;

/// Default transport retries of the initial HTTP request.
pub const DEFAULT_REQUEST_MAX_RETRIES: u32 = 4;
/// Default retries of a whole sampling request after its stream failed (done by the turn loop).
pub const DEFAULT_STREAM_MAX_RETRIES: u32 = 5;
/// Default maximum silence between two chunks of a streamed response.
pub const DEFAULT_STREAM_IDLE_TIMEOUT_MS: u64 = 300_000;
/// Both retry counts are capped at this value when read from config.
pub const MAX_RETRIES_CAP: u32 = 100;
/// The default `base_url` (OpenAI).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WireApi {
    /// OpenAI Responses API: `POST {base_url}/responses`.
    #[default]
    Responses,
    /// Chat Completions: `POST {base_url}/chat/completions` (vLLM, llama.cpp, older Ollama).
    Chat,
}

/// One `[model_providers.<id>]` table. Unknown keys are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProviderConfig {
    /// The table key; filled in by the config loader (not read from the table).
    #[serde(default)]
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: String,
    /// E.g. `http://localhost:11434/v1`; request paths are appended after one `/`.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// Environment variable holding the API key; when set, a missing or blank variable is an
    /// error before any request ([`ModelError::MissingApiKey`]).
    #[serde(default)]
    pub env_key: Option<String>,
    /// Shown with [`ModelError::MissingApiKey`] (e.g. where to get a key).
    #[serde(default)]
    pub env_key_instructions: Option<String>,
    /// A literal bearer token, used when `env_key` is not set (discouraged).
    #[serde(default)]
    pub experimental_bearer_token: Option<String>,
    /// `"responses"` (default) or `"chat"`.
    #[serde(default)]
    pub wire_api: WireApi,
    /// Appended to every URL as `?k=v&…` (not percent-encoded, like Codex).
    #[serde(default)]
    pub query_params: BTreeMap<String, String>,
    /// Static extra headers.
    #[serde(default)]
    pub http_headers: BTreeMap<String, String>,
    /// Header name → environment variable holding its value; skipped when unset or blank.
    #[serde(default)]
    pub env_http_headers: BTreeMap<String, String>,
    /// Transport retries of the initial HTTP request (default 4, capped at 100).
    #[serde(
        default = "default_request_max_retries",
        deserialize_with = "capped_retries"
    )]
    pub request_max_retries: u32,
    /// Retries of a sampling request whose stream failed (default 5, capped at 100). Used by
    /// the turn loop, not by the client.
    #[serde(
        default = "default_stream_max_retries",
        deserialize_with = "capped_retries"
    )]
    pub stream_max_retries: u32,
    /// Maximum silence between stream chunks, in milliseconds (default 300000).
    #[serde(default = "default_stream_idle_timeout_ms")]
    pub stream_idle_timeout_ms: u64,
    /// Chat Completions only (Weft's key): send the system messages as `user` text, the
    /// system prompt at the top of the first user message, for chat templates without a
    /// system role (docs/architecture.md §7.3). Default false.
    #[serde(default)]
    pub fold_system_prompt: bool,
    /// The top-level `model_max_output_tokens`, copied here by the config loader: sent as
    /// `max_tokens` (Chat) or `max_output_tokens` (Responses) when set.
    #[serde(skip)]
    pub max_output_tokens: Option<u64>,
}

impl ProviderConfig {
    /// A provider with the defaults of every optional key (Responses API, no key).
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        base_url: impl Into<String>,
    ) -> ProviderConfig {
        ProviderConfig {
            id: id.into(),
            name: name.into(),
            base_url: base_url.into(),
            env_key: None,
            env_key_instructions: None,
            experimental_bearer_token: None,
            wire_api: WireApi::Responses,
            query_params: BTreeMap::new(),
            http_headers: BTreeMap::new(),
            env_http_headers: BTreeMap::new(),
            request_max_retries: DEFAULT_REQUEST_MAX_RETRIES,
            stream_max_retries: DEFAULT_STREAM_MAX_RETRIES,
            stream_idle_timeout_ms: DEFAULT_STREAM_IDLE_TIMEOUT_MS,
            fold_system_prompt: false,
            max_output_tokens: None,
        }
    }

    /// `{base_url}/{path}` plus the query parameters.
    pub fn url(&self, path: &str) -> String {
        let mut url = format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        );
        for (i, (key, value)) in self.query_params.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(key);
            url.push('=');
            url.push_str(value);
        }
        url
    }

    /// The bearer token: from `env_key` (error if missing or blank), else
    /// `experimental_bearer_token`, else none.
    pub fn api_key(&self) -> Result<Option<String>, ModelError> {
        self.api_key_with(|name| std::env::var(name).ok())
    }

    /// [`ProviderConfig::api_key`] with an explicit environment lookup.
    pub(crate) fn api_key_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, ModelError> {
        if let Some(env_key) = &self.env_key {
            return match env(env_key) {
                Some(value) if !value.trim().is_empty() => Ok(Some(value.trim().to_string())),
                _ => Err(ModelError::MissingApiKey {
                    env_key: env_key.clone(),
                    instructions: self.env_key_instructions.clone(),
                }),
            };
        }
        Ok(self
            .experimental_bearer_token
            .clone()
            .filter(|token| !token.trim().is_empty()))
    }

    /// `stream_idle_timeout_ms` as a duration.
    pub fn stream_idle_timeout(&self) -> Duration {
        Duration::from_millis(self.stream_idle_timeout_ms)
    }
}

/// What a `base_url` reveals when a client lists the providers (docs/protocol.md §7.35).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressView {
    /// A plain `http(s)` address that may be shown: no user information, query or fragment.
    pub displayable: bool,
    /// It carries credentials or is OpenAI's own API (whose sign-in is configured elsewhere):
    /// user information, a query, or OpenAI's host.
    pub credentials: bool,
}

impl AddressView {
    /// Read `base_url`; one that does not parse is neither shown nor a credential.
    pub fn of(base_url: &str) -> AddressView {
        let Ok(url) = reqwest::Url::parse(base_url) else {
            return AddressView {
                displayable: false,
                credentials: false,
            };
        };
        let userinfo = !url.username().is_empty() || url.password().is_some();
        let query = url.query().is_some();
        AddressView {
            displayable: matches!(url.scheme(), "http" | "https")
                && !userinfo
                && !query
                && url.fragment().is_none(),
            credentials: userinfo || query || url.host_str() == Some("api.openai.com"),
        }
    }
}

fn default_base_url() -> String {
    DEFAULT_BASE_URL.to_string()
}

fn default_request_max_retries() -> u32 {
    DEFAULT_REQUEST_MAX_RETRIES
}

fn default_stream_max_retries() -> u32 {
    DEFAULT_STREAM_MAX_RETRIES
}

fn default_stream_idle_timeout_ms() -> u64 {
    DEFAULT_STREAM_IDLE_TIMEOUT_MS
}

fn capped_retries<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let value = u64::deserialize(deserializer)?;
    Ok(value.min(u64::from(MAX_RETRIES_CAP)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deserializes_codex_keys_with_defaults() {
        let provider: ProviderConfig = toml::from_str(
            r#"
name = "Azure"
base_url = "https://x.openai.azure.com/openai/"
env_key = "AZURE_KEY"
wire_api = "chat"
query_params = { api-version = "2025-04-01-preview" }
http_headers = { "X-Extra" = "1" }
stream_max_retries = 1000
supports_websockets = true
"#,
        )
        .unwrap();
        assert_eq!(provider.wire_api, WireApi::Chat);
        assert_eq!(provider.request_max_retries, DEFAULT_REQUEST_MAX_RETRIES);
        assert_eq!(provider.stream_max_retries, MAX_RETRIES_CAP);
        assert_eq!(provider.stream_idle_timeout_ms, 300_000);
        assert!(!provider.fold_system_prompt);
        assert_eq!(provider.max_output_tokens, None);
        let folding: ProviderConfig =
            toml::from_str("fold_system_prompt = true\nmax_output_tokens = 5").unwrap();
        assert!(folding.fold_system_prompt);
        assert_eq!(
            folding.max_output_tokens, None,
            "only the top-level key sets it"
        );
        assert_eq!(
            provider.url("/responses"),
            "https://x.openai.azure.com/openai/responses?api-version=2025-04-01-preview"
        );

        let minimal: ProviderConfig = toml::from_str("").unwrap();
        assert_eq!(minimal.base_url, DEFAULT_BASE_URL);
        assert_eq!(minimal.wire_api, WireApi::Responses);
        assert!(toml::from_str::<ProviderConfig>("wire_api = \"grpc\"").is_err());
    }

    #[test]
    fn api_key_resolution() {
        let mut provider = ProviderConfig::new("p", "P", "http://localhost/v1");
        assert_eq!(provider.api_key_with(|_| None).unwrap(), None);
        provider.experimental_bearer_token = Some("tok".into());
        assert_eq!(
            provider.api_key_with(|_| None).unwrap().as_deref(),
            Some("tok")
        );
        provider.env_key = Some("MY_KEY".into());
        let err = provider.api_key_with(|_| Some("  ".into())).unwrap_err();
        assert!(
            matches!(&err, ModelError::MissingApiKey { env_key, .. } if env_key == "MY_KEY"),
            "{err}"
        );
        assert!(err.to_string().contains("MY_KEY"));
        assert_eq!(
            provider
                .api_key_with(|name| (name == "MY_KEY").then(|| "sk-1".to_string()))
                .unwrap()
                .as_deref(),
            Some("sk-1")
        );
    }
}
