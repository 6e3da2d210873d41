//! [`ModelClient`]: opens a streamed model response over HTTP, with transport retries.

use bytes::Bytes;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::chat_request::chat_body;
use super::chat_stream::ChatDecoder;
use super::error::{ModelError, backoff};
use super::prompt::{Prompt, responses_body_limited};
use super::provider::{ProviderConfig, WireApi};
use super::responses::ResponsesDecoder;
use super::stream::ResponseStream;
use crate::http_client::HttpClientError;

/// Talks to one model provider. Cheap to clone (the HTTP client is shared).
#[derive(Debug, Clone)]
pub struct ModelClient {
    provider: ProviderConfig,
    http: Result<reqwest::Client, HttpClientError>,
}

impl ModelClient {
    /// A client for `provider` over the daemon's HTTP client, as
    /// [`crate::http_client::build_http_client`] made it for model requests, or why it could
    /// not (each request then fails with that reason).
    pub fn new(
        provider: ProviderConfig,
        http: Result<reqwest::Client, HttpClientError>,
    ) -> ModelClient {
        ModelClient { provider, http }
    }

    /// The provider this client talks to.
    pub fn provider(&self) -> &ProviderConfig {
        &self.provider
    }

    /// Send `prompt` and return the event stream once the response headers arrived.
    ///
    /// The initial request is retried up to `request_max_retries` times on connection errors,
    /// timeouts, 5xx and 429 (waiting for `Retry-After` when given, else [`backoff`]). Errors
    /// while consuming the stream are not retried here: the turn loop re-runs the whole
    /// request when [`ModelError::is_retryable`] says so.
    pub async fn stream(&self, prompt: &Prompt) -> Result<ResponseStream, ModelError> {
        let api_key = self.provider.api_key()?;
        let (path, body) = match self.provider.wire_api {
            WireApi::Responses => (
                "responses",
                responses_body_limited(prompt, self.provider.max_output_tokens),
            ),
            WireApi::Chat => (
                "chat/completions",
                serde_json::to_vec(&chat_body(prompt, &self.provider)),
            ),
        };
        let body = Bytes::from(body.map_err(|err| ModelError::Config(err.to_string()))?);
        let mut headers = self.headers(api_key.as_deref())?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(session_id) = prompt.prompt_cache_key.as_deref() {
            let value = header_value(session_id)?;
            headers.insert("session_id", value.clone());
            // The reference's names (docs/architecture.md §7.1): a root thread is its own
            // session; a sub-agent's prompt headers below name its root instead.
            headers.insert("session-id", value.clone());
            headers.insert("thread-id", value.clone());
            headers.insert("x-client-request-id", value);
        }
        for (name, value) in &prompt.headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|err| ModelError::Config(format!("header name `{name}`: {err}")))?;
            headers.insert(name, header_value(value)?);
        }
        let url = self.provider.url(path);
        let http = self.http()?;
        let response = self
            .send_with_retries(|| http.post(&url).headers(headers.clone()).body(body.clone()))
            .await?;
        let idle = self.provider.stream_idle_timeout();
        Ok(match self.provider.wire_api {
            WireApi::Responses => ResponseStream::new(response, ResponsesDecoder::default(), idle),
            WireApi::Chat => ResponseStream::new(response, ChatDecoder::default(), idle),
        })
    }

    /// The model ids from `GET {base_url}/models` (OpenAI's `{"data":[{"id":…}]}`; Codex's
    /// `{"models":[{"slug"|"id":…}]}` is accepted too).
    pub async fn list_models(&self) -> Result<Vec<String>, ModelError> {
        let headers = self.headers(self.provider.api_key()?.as_deref())?;
        let url = self.provider.url("models");
        let http = self.http()?;
        let response = self
            .send_with_retries(|| http.get(&url).headers(headers.clone()))
            .await?;
        let body: Value = response
            .json()
            .await
            .map_err(|err| ModelError::stream(format!("invalid model list: {err}")))?;
        let entries = body
            .get("data")
            .or_else(|| body.get("models"))
            .and_then(Value::as_array)
            .ok_or_else(|| ModelError::stream(format!("invalid model list: {body}")))?;
        Ok(entries
            .iter()
            .filter_map(|entry| {
                entry
                    .get("id")
                    .or_else(|| entry.get("slug"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect())
    }

    /// `GET {base_url}/{path}` once, without retries: the whole exchange within `timeout`, at
    /// most `max_bytes` of body (a longer body is an error, not a truncation).
    pub(crate) async fn get_bounded(
        &self,
        path: &str,
        timeout: std::time::Duration,
        max_bytes: usize,
    ) -> Result<Vec<u8>, ModelError> {
        let headers = self.headers(self.provider.api_key()?.as_deref())?;
        let url = self.provider.url(path);
        let http = self.http()?;
        let exchange = async {
            let mut response = http
                .get(&url)
                .headers(headers)
                .send()
                .await
                .map_err(|err| ModelError::from_transport(&err))?;
            if !response.status().is_success() {
                let status = response.status();
                let headers = response.headers().clone();
                let body = response.text().await.unwrap_or_default();
                return Err(ModelError::from_status(status, &headers, body));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|err| ModelError::from_transport(&err))?
            {
                if body.len() + chunk.len() > max_bytes {
                    return Err(ModelError::stream(format!(
                        "the answer of GET {path} is larger than {max_bytes} bytes"
                    )));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(body)
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| ModelError::Timeout)?
    }

    /// The HTTP client, or why there is none.
    fn http(&self) -> Result<&reqwest::Client, ModelError> {
        self.http
            .as_ref()
            .map_err(|err| ModelError::Config(err.to_string()))
    }

    /// Authorization plus the provider's static and environment headers.
    fn headers(&self, api_key: Option<&str>) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = api_key {
            let mut value = header_value(&format!("Bearer {key}"))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let from_env = self
            .provider
            .env_http_headers
            .iter()
            .filter_map(|(name, var)| {
                let value = std::env::var(var).ok()?;
                (!value.trim().is_empty()).then(|| (name.clone(), value.trim().to_string()))
            });
        let configured = self
            .provider
            .http_headers
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()));
        for (name, value) in configured.chain(from_env) {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|err| ModelError::Config(format!("header name `{name}`: {err}")))?;
            headers.insert(name, header_value(&value)?);
        }
        Ok(headers)
    }

    /// Send until a 2xx answer, retrying what [`ModelError::is_transport_retryable`] allows.
    async fn send_with_retries(
        &self,
        request: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ModelError> {
        let max_retries = self.provider.request_max_retries;
        let idle = self.provider.stream_idle_timeout();
        let mut attempt: u32 = 0;
        loop {
            let error = match tokio::time::timeout(idle, request().send()).await {
                Err(_) => ModelError::Timeout,
                Ok(Err(err)) => ModelError::from_transport(&err),
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) => {
                    let status = response.status();
                    let headers = response.headers().clone();
                    let body = response.text().await.unwrap_or_default();
                    ModelError::from_status(status, &headers, body)
                }
            };
            if attempt >= max_retries || !error.is_transport_retryable() {
                return Err(error);
            }
            attempt += 1;
            let delay = error.retry_after().unwrap_or_else(|| backoff(attempt));
            tracing::debug!(
                provider = %self.provider.id, attempt, max_retries, ?delay, error = %error,
                "retrying model request"
            );
            tokio::time::sleep(delay).await;
        }
    }
}

fn header_value(value: &str) -> Result<HeaderValue, ModelError> {
    HeaderValue::from_str(value)
        .map_err(|_| ModelError::Config("a header value has invalid characters".to_string()))
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
