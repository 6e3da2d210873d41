//! What a provider's `GET {base_url}/models` lists (docs/architecture.md §7.7): asked once per
//! [`ModelCatalog::cache_ttl`], within [`ModelCatalog::fetch_timeout`], reading at most
//! [`ModelCatalog::max_response_bytes`] and [`ModelCatalog::max_models`] ids. OpenAI's shape
//! `{"data":[{"id":…}]}` and Codex's `{"models":[{"slug"|"id":…}]}` are both read. A failure is
//! not cached: the caller falls back to the catalog and the next call asks again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use serde_json::Value;

use super::catalog::ModelCatalog;
use super::client::ModelClient;
use super::error::ModelError;

/// The longest model id kept; longer ones are skipped.
const MAX_ID_LEN: usize = 256;

/// One provider's last answer.
struct Cached {
    at: Instant,
    ids: Arc<Vec<String>>,
}

/// Answers by provider id and address (a reloaded config with another `base_url` asks again).
fn cache() -> &'static Mutex<HashMap<(String, String), Cached>> {
    static CACHE: OnceLock<Mutex<HashMap<(String, String), Cached>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The ids `client`'s provider lists, from the cache while fresh.
pub async fn provider_models(
    client: &ModelClient,
    catalog: &ModelCatalog,
) -> Result<Arc<Vec<String>>, ModelError> {
    let provider = client.provider();
    let key = (provider.id.clone(), provider.base_url.clone());
    if !catalog.cache_ttl.is_zero() {
        let cache = cache().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cached) = cache.get(&key)
            && cached.at.elapsed() < catalog.cache_ttl
        {
            return Ok(Arc::clone(&cached.ids));
        }
    }
    let body = client
        .get_bounded("models", catalog.fetch_timeout, catalog.max_response_bytes)
        .await?;
    let ids = Arc::new(parse_model_ids(&body, catalog.max_models)?);
    if !catalog.cache_ttl.is_zero() {
        let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
        cache.insert(
            key,
            Cached {
                at: Instant::now(),
                ids: Arc::clone(&ids),
            },
        );
    }
    Ok(ids)
}

/// The model ids of a `/models` answer, in its order, without duplicates, at most `max`.
pub(crate) fn parse_model_ids(body: &[u8], max: usize) -> Result<Vec<String>, ModelError> {
    let body: Value = serde_json::from_slice(body)
        .map_err(|err| ModelError::stream(format!("invalid model list: {err}")))?;
    let entries = body
        .get("data")
        .or_else(|| body.get("models"))
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::stream("invalid model list: no `data` array"))?;
    let mut ids: Vec<String> = Vec::new();
    for entry in entries {
        let id = entry
            .get("id")
            .or_else(|| entry.get("slug"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|id| {
                !id.is_empty() && id.len() <= MAX_ID_LEN && !id.contains(char::is_control)
            });
        if let Some(id) = id
            && !ids.iter().any(|known| known == id)
        {
            ids.push(id.to_string());
            if ids.len() >= max {
                break;
            }
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use weft_mock_model::MockModel;

    use super::*;
    use crate::model::ProviderConfig;

    #[test]
    fn ids_are_read_bounded_and_deduplicated() {
        let body = br#"{"object":"list","data":[{"id":"a"},{"id":" "},{"id":"a"},{"slug":"b"},
            {"id":7},{"id":"c"},{"id":"d"}]}"#;
        assert_eq!(parse_model_ids(body, 3).unwrap(), ["a", "b", "c"]);
        let codex = br#"{"models":[{"slug":"gpt-x"}]}"#;
        assert_eq!(parse_model_ids(codex, 10).unwrap(), ["gpt-x"]);
        let long = format!(
            r#"{{"data":[{{"id":"{}"}},{{"id":"ok"}}]}}"#,
            "x".repeat(300)
        );
        assert_eq!(parse_model_ids(long.as_bytes(), 10).unwrap(), ["ok"]);
        assert!(parse_model_ids(b"[]", 10).is_err());
        assert!(parse_model_ids(b"not json", 10).is_err());
    }

    fn client(mock: &MockModel, id: &str) -> ModelClient {
        let provider = ProviderConfig::new(id, id, mock.base_url());
        ModelClient::new(provider, Ok(reqwest::Client::new()))
    }

    #[tokio::test]
    async fn answers_are_cached_until_the_ttl_and_failures_are_not() {
        let mock = MockModel::start().await.unwrap();
        mock.set_models(["one", "two"]);
        let catalog = ModelCatalog {
            cache_ttl: Duration::from_secs(3600),
            ..ModelCatalog::default()
        };
        let client = client(&mock, "cached-provider");
        assert_eq!(
            *provider_models(&client, &catalog).await.unwrap(),
            ["one", "two"]
        );
        mock.set_models(["three"]);
        assert_eq!(
            *provider_models(&client, &catalog).await.unwrap(),
            ["one", "two"]
        );
        let uncached = ModelCatalog {
            cache_ttl: Duration::ZERO,
            ..catalog.clone()
        };
        assert_eq!(
            *provider_models(&client, &uncached).await.unwrap(),
            ["three"]
        );
        let gets = |mock: &MockModel| {
            mock.all_requests()
                .iter()
                .filter(|r| r.path == "/v1/models")
                .count()
        };
        assert_eq!(gets(&mock), 2);

        let small = ModelCatalog {
            cache_ttl: Duration::ZERO,
            max_response_bytes: 16,
            ..catalog.clone()
        };
        let err = provider_models(&client, &small).await.unwrap_err();
        assert!(err.to_string().contains("larger than 16 bytes"), "{err}");
        let mut dead = ProviderConfig::new("dead", "Dead", "http://127.0.0.1:9/v1");
        dead.request_max_retries = 3;
        let dead = ModelClient::new(dead, Ok(reqwest::Client::new()));
        assert!(provider_models(&dead, &catalog).await.is_err());
        assert!(
            provider_models(&dead, &catalog).await.is_err(),
            "not cached"
        );
    }
}
