//! The daemon's outgoing HTTP clients (model providers, streamable-HTTP MCP servers), built
//! from `[http]` by one function, [`build_http_client`] (README, "Configuration").
//!
//! Every client has Weft's user agent (`weft/<version>`), a connect timeout, a bounded idle
//! pool, HTTP/2 where the server offers it over TLS (ALPN), the proxies of `HTTPS_PROXY` /
//! `HTTP_PROXY` / `ALL_PROXY` minus `NO_PROXY` (reqwest's system proxies), and the platform's
//! root certificates plus the PEM bundles of `SSL_CERT_FILE` and `[http] ca_certificate`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::config_base::ConfigError;

/// The `User-Agent` of every request the daemon sends.
pub const USER_AGENT: &str = concat!("weft/", env!("CARGO_PKG_VERSION"));

/// The environment variable naming an extra PEM bundle of trusted roots (OpenSSL's name).
pub const SSL_CERT_FILE: &str = "SSL_CERT_FILE";

/// `[http]`: how the daemon's HTTP clients connect (README, "Configuration").
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct HttpConfig {
    /// Milliseconds to establish a connection (TCP, proxy `CONNECT`, TLS) before the request
    /// fails as a connection error.
    pub connect_timeout_ms: u64,
    /// Milliseconds of silence a model request may wait for its response headers or its next
    /// body chunk, on the connection level (a provider's `stream_idle_timeout_ms` is the same
    /// bound per provider; the shorter wins). Not applied to MCP servers, whose event streams
    /// are idle by design and whose calls have `tool_timeout_sec`.
    pub read_timeout_ms: u64,
    /// Idle connections kept per host for reuse.
    pub pool_max_idle_per_host: usize,
    /// Seconds an idle pooled connection is kept.
    pub pool_idle_timeout_secs: u64,
    /// A PEM file of extra root certificates (e.g. a corporate or local CA), trusted on top
    /// of the platform's roots. Relative to `$WEFT_HOME`.
    pub ca_certificate: Option<PathBuf>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            connect_timeout_ms: 10_000,
            read_timeout_ms: 300_000,
            pool_max_idle_per_host: 8,
            pool_idle_timeout_secs: 90,
            ca_certificate: None,
        }
    }
}

impl HttpConfig {
    /// Check the numbers, make `ca_certificate` absolute (against `home`) and make sure it
    /// holds at least one certificate, so a bad bundle stops the daemon at start-up.
    pub(crate) fn validated(mut self, home: &Path, path: &Path) -> Result<HttpConfig, ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: format!("http.{key}"),
            message,
        };
        for (key, value) in [
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("read_timeout_ms", self.read_timeout_ms),
        ] {
            if value == 0 {
                return Err(invalid(key, "must be at least 1".into()));
            }
        }
        if let Some(file) = self.ca_certificate.take() {
            let file = home.join(file);
            read_pem_bundle(&file).map_err(|message| invalid("ca_certificate", message))?;
            self.ca_certificate = Some(file);
        }
        Ok(self)
    }
}

/// What a client is for: model requests get the read timeout, MCP servers do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpUse {
    /// Requests to model providers.
    Model,
    /// Streamable-HTTP MCP servers.
    Mcp,
}

/// Why the HTTP client could not be built (e.g. an unreadable CA bundle, or no root
/// certificate at all on the machine). Reported by each request that needed the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub struct HttpClientError(String);

/// The daemon's HTTP client for `purpose`, from `config` and the process environment
/// (`SSL_CERT_FILE`, the proxy variables). The one place a client is configured: the daemon
/// and the tests both build theirs here.
pub fn build_http_client(
    config: &HttpConfig,
    purpose: HttpUse,
) -> Result<reqwest::Client, HttpClientError> {
    build_with_env(config, purpose, |name| std::env::var_os(name))
}

/// [`build_http_client`] with an explicit environment lookup (for `SSL_CERT_FILE`).
pub(crate) fn build_with_env(
    config: &HttpConfig,
    purpose: HttpUse,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<reqwest::Client, HttpClientError> {
    let mut roots = Vec::new();
    if let Some(file) = env(SSL_CERT_FILE).filter(|value| !value.is_empty()) {
        let file = PathBuf::from(file);
        roots.extend(
            read_pem_bundle(&file)
                .map_err(|err| HttpClientError(format!("{SSL_CERT_FILE}: {err}")))?,
        );
    }
    if let Some(file) = &config.ca_certificate {
        roots.extend(
            read_pem_bundle(file)
                .map_err(|err| HttpClientError(format!("[http] ca_certificate: {err}")))?,
        );
    }
    let mut builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(Duration::from_millis(config.connect_timeout_ms))
        .pool_max_idle_per_host(config.pool_max_idle_per_host)
        .pool_idle_timeout(Duration::from_secs(config.pool_idle_timeout_secs))
        .tls_certs_merge(roots);
    if purpose == HttpUse::Model {
        builder = builder.read_timeout(Duration::from_millis(config.read_timeout_ms));
    }
    builder
        .build()
        .map_err(|err| HttpClientError(crate::model::error_chain(&err)))
}

/// The certificates of a PEM file; an error (one line, naming the file) when it cannot be
/// read or holds none.
fn read_pem_bundle(file: &Path) -> Result<Vec<reqwest::Certificate>, String> {
    let pem =
        std::fs::read(file).map_err(|err| format!("cannot read {}: {err}", file.display()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|err| format!("{}: not a PEM certificate bundle: {err}", file.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{}: no PEM certificate in the file",
            file.display()
        ));
    }
    Ok(certs)
}

/// One client for one use, built from `[http]` on first use (building loads the system's
/// root certificates, which start-up need not wait for) and shared after; or why it could not
/// be built, reported by every request that needed it.
#[derive(Debug)]
pub struct LazyClient {
    config: HttpConfig,
    usage: HttpUse,
    client: std::sync::OnceLock<Result<reqwest::Client, HttpClientError>>,
}

impl LazyClient {
    /// A client for `usage` from `config`, not built yet.
    pub fn new(config: &HttpConfig, usage: HttpUse) -> LazyClient {
        LazyClient {
            config: config.clone(),
            usage,
            client: std::sync::OnceLock::new(),
        }
    }

    /// The client (a handle on the shared connection pool), built the first time.
    pub fn get(&self) -> Result<reqwest::Client, HttpClientError> {
        self.client
            .get_or_init(|| build_http_client(&self.config, self.usage))
            .clone()
    }
}

#[cfg(test)]
#[path = "http_client_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "http_client_tls_tests.rs"]
mod tls_tests;
