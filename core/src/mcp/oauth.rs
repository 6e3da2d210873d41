//! OAuth for streamable-HTTP MCP servers (docs/mcp.md §9), on rmcp's `auth` module: metadata
//! discovery (RFC 9728 protected-resource metadata, then RFC 8414 authorization-server
//! metadata), dynamic client registration (RFC 7591), PKCE S256 and the state check, the code
//! exchange, and refreshing an expired access token before a request.
//!
//! A login ([`start_login`]) binds the loopback [`callback`] listener, registers the client
//! and answers the authorization URL at once; its [`PendingLogin::finish`] waits for the
//! browser (at most the timeout), exchanges the code and stores the tokens in the
//! [`CredentialsFile`]. A server with stored tokens is reached through an
//! [`AuthClient`] ([`authorized_client`]), which adds the bearer token to every request and
//! refreshes it when it has expired.

pub mod callback;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use rmcp::transport::auth::{
    AuthClient, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
};
use sha2::{Digest, Sha256};
use weft_protocol::McpAuthStatus;

use super::config::{McpServerConfig, McpTransport};
use super::credentials::CredentialsFile;
use callback::{Callback, Listener};

/// Seconds the browser has to come back, unless the login says otherwise (the reference's).
pub const DEFAULT_LOGIN_TIMEOUT_SECS: i64 = 300;

/// How long `mcpServerStatus/list` waits for a server's OAuth metadata (the reference's).
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// The client name sent with dynamic client registration.
const CLIENT_NAME: &str = "Weft";

/// Why a login could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The server is not a streamable-HTTP one.
    #[error("OAuth login is only supported for streamable HTTP servers.")]
    NotHttp,
    /// Anything on the way to the authorization URL (discovery, registration, the listener).
    #[error("{0}")]
    Flow(String),
}

/// A login waiting for its browser.
pub struct PendingLogin {
    /// The page to open.
    pub authorization_url: String,
    session: AuthorizationSession,
    listener: Listener,
    timeout: Duration,
}

impl std::fmt::Debug for PendingLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingLogin")
            .field("authorization_url", &self.authorization_url)
            .field("callback", &self.listener.addr)
            .finish_non_exhaustive()
    }
}

/// How the login registers its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// Dynamic client registration (RFC 7591): `auto` and `dcr`.
    Dynamic,
    /// A client ID metadata document (`cimd`): Weft hosts none, so this fails, with the
    /// reference's words when the authorization server does not offer it either.
    MetadataDocument,
}

/// Starts a login to `config`'s server: discovery and client registration happen now, and
/// the callback listener is bound on 127.0.0.1 (an ephemeral port). `timeout_secs` is the
/// login's (at least 1; [`DEFAULT_LOGIN_TIMEOUT_SECS`] when unset).
pub async fn start_login(
    config: &McpServerConfig,
    file: &Arc<CredentialsFile>,
    scopes: &[String],
    registration: Registration,
    timeout_secs: Option<i64>,
) -> Result<PendingLogin, LoginError> {
    let McpTransport::Http { url, .. } = &config.transport else {
        return Err(LoginError::NotHttp);
    };
    let flow = |err: &dyn std::fmt::Display| LoginError::Flow(err.to_string());
    let callback_path = format!("/callback/{}", callback_id(url).map_err(|e| flow(&e))?);
    let listener = Listener::bind(0, callback_path.clone())
        .await
        .map_err(|e| flow(&e))?;
    let redirect_uri = format!("http://{}{callback_path}", listener.addr);

    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(|e| flow(&e))?;
    manager.set_credential_store(file.server(&config.name, url));
    let resolution = manager.resolve_metadata().await.map_err(|e| flow(&e))?;
    if registration == Registration::MetadataDocument {
        return Err(LoginError::Flow(if offers_cimd(&resolution.metadata) {
            "Weft hosts no client ID metadata document; use clientRegistration `dcr` or `auto`"
                .into()
        } else {
            "MCP authorization server does not advertise CIMD with token endpoint auth method \
             `none`"
                .into()
        }));
    }
    manager.set_metadata(resolution.metadata);
    let scopes = match (scopes, &config.scopes) {
        ([], Some(configured)) => configured.as_slice(),
        _ => scopes,
    };
    let request = AuthorizationRequest::new(redirect_uri)
        .with_client_name(CLIENT_NAME)
        .with_scopes(scopes.iter().cloned());
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| flow(&e))?;
    let timeout_secs = timeout_secs.unwrap_or(DEFAULT_LOGIN_TIMEOUT_SECS).max(1);
    let authorization_url = with_resource(
        session.get_authorization_url(),
        config.oauth_resource.as_deref(),
    );
    Ok(PendingLogin {
        authorization_url,
        session,
        listener,
        timeout: Duration::from_secs(u64::try_from(timeout_secs).unwrap_or(1)),
    })
}

impl PendingLogin {
    /// Waits for the browser, exchanges the code and stores the tokens; the error is the
    /// completion notification's `error`, worded as the reference words it.
    pub async fn finish(mut self) -> Result<(), String> {
        let callback = tokio::time::timeout(self.timeout, self.listener.next()).await;
        self.listener.close().await;
        let callback = callback
            .map_err(|_| "timed out waiting for OAuth callback".to_string())?
            .ok_or_else(|| "OAuth callback was cancelled".to_string())?;
        let (code, state) = match callback {
            Callback::Code { code, state } => (code, state),
            Callback::Error(error) => return Err(error.to_string()),
        };
        self.session
            .handle_callback(&code, &state)
            .await
            .map_err(|err| format!("failed to handle OAuth callback: {err}"))?;
        Ok(())
    }
}

/// `url` with `resource=VALUE` appended when the entry names an `oauth_resource` (as the
/// reference appends it, after whatever `resource` the SDK put there).
fn with_resource(url: &str, resource: Option<&str>) -> String {
    let Some(resource) = resource.map(str::trim).filter(|r| !r.is_empty()) else {
        return url.to_string();
    };
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.query_pairs_mut().append_pair("resource", resource);
            parsed.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// Whether the authorization server takes client ID metadata documents for public clients
/// (`client_id_metadata_document_supported`, and `none` among its token endpoint auth methods).
fn offers_cimd(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> bool {
    let fields = &metadata.additional_fields;
    let supported = fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let public = fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|methods| methods.iter().any(|m| m == "none"));
    supported && public
}

/// The last part of the callback path: the first 9 bytes of the SHA-256 of the server's URL
/// (parsed, without a fragment), base64url without padding, as the reference derives it.
fn callback_id(url: &str) -> Result<String, String> {
    let mut parsed =
        reqwest::Url::parse(url).map_err(|err| format!("invalid MCP server URL `{url}`: {err}"))?;
    if parsed.host_str().is_none() {
        return Err(format!("MCP server URL `{url}` must include a host"));
    }
    parsed.set_fragment(None);
    let digest = Sha256::digest(parsed.as_str().as_bytes());
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..9]))
}

/// The client to reach `config`'s server with when tokens are stored for it: rmcp's
/// [`AuthClient`] over `http`, adding the access token to every request and refreshing it
/// (and storing the new one) when it has expired. `Ok(None)` when no tokens are stored.
pub async fn authorized_client(
    config: &McpServerConfig,
    file: &Arc<CredentialsFile>,
    http: reqwest::Client,
) -> Result<Option<AuthClient<reqwest::Client>>, String> {
    let McpTransport::Http { url, .. } = &config.transport else {
        return Ok(None);
    };
    if !file.has_tokens(&config.name, url) {
        return Ok(None);
    }
    let oauth = |err: &dyn std::fmt::Display| format!("MCP OAuth: {err}");
    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(|e| oauth(&e))?;
    manager.set_credential_store(file.server(&config.name, url));
    if !manager
        .initialize_from_store()
        .await
        .map_err(|e| oauth(&e))?
    {
        return Ok(None);
    }
    Ok(Some(AuthClient::new(http, manager)))
}

/// `authStatus` of `mcpServerStatus/list`, by the reference's rules: `unsupported` for a stdio
/// server; `bearerToken` when a bearer token variable or an `Authorization` header is
/// configured; `oAuth` when tokens are stored; else `notLoggedIn` when the server publishes
/// OAuth metadata, `unsupported` when it publishes none, `unknown` when it cannot be asked.
pub async fn auth_status(
    config: &McpServerConfig,
    file: Option<&Arc<CredentialsFile>>,
) -> McpAuthStatus {
    let McpTransport::Http {
        url,
        bearer_token_env_var,
        http_headers,
        env_http_headers,
    } = &config.transport
    else {
        return McpAuthStatus::Unsupported;
    };
    let authorization_header = http_headers
        .keys()
        .chain(env_http_headers.keys())
        .any(|header| header.eq_ignore_ascii_case("authorization"));
    if bearer_token_env_var.is_some() || authorization_header {
        return McpAuthStatus::BearerToken;
    }
    if file.is_some_and(|file| file.has_tokens(&config.name, url)) {
        return McpAuthStatus::OAuth;
    }
    let discovered = tokio::time::timeout(DISCOVERY_TIMEOUT, async {
        let manager = AuthorizationManager::new(url.as_str()).await?;
        manager.resolve_metadata().await
    })
    .await;
    match discovered {
        Ok(Ok(resolution)) if resolution.source.is_discovered() => McpAuthStatus::NotLoggedIn,
        Ok(Ok(_)) => McpAuthStatus::Unsupported,
        Ok(Err(err)) => {
            tracing::debug!(server = %config.name, %err, "MCP OAuth discovery failed");
            McpAuthStatus::Unknown
        }
        Err(_) => McpAuthStatus::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_resource_is_appended() {
        let url = "http://127.0.0.1:1/authorize?state=s";
        assert_eq!(with_resource(url, None), url);
        assert_eq!(with_resource(url, Some("  ")), url);
        assert_eq!(
            with_resource(url, Some("https://api.example/v1")),
            "http://127.0.0.1:1/authorize?state=s&resource=https%3A%2F%2Fapi.example%2Fv1"
        );
    }

    #[test]
    fn cimd_needs_the_flag_and_public_clients() {
        let metadata = |extra: serde_json::Value| {
            let mut fields =
                serde_json::json!({"authorization_endpoint": "a", "token_endpoint": "t"});
            if let (Some(fields), Some(extra)) = (fields.as_object_mut(), extra.as_object()) {
                fields.extend(extra.clone());
            }
            serde_json::from_value::<rmcp::transport::auth::AuthorizationMetadata>(fields).unwrap()
        };
        assert!(!offers_cimd(&metadata(serde_json::json!({}))));
        assert!(!offers_cimd(&metadata(
            serde_json::json!({"client_id_metadata_document_supported": true})
        )));
        assert!(offers_cimd(&metadata(serde_json::json!({
            "client_id_metadata_document_supported": true,
            "token_endpoint_auth_methods_supported": ["none"]
        }))));
    }

    #[test]
    fn the_callback_id_is_the_references() {
        // Nine bytes of the digest are twelve base64url characters; a fragment does not count.
        let id = callback_id("http://127.0.0.1:39127/mcp").unwrap();
        assert_eq!(
            id, "Q4WNlJFDJsnJ",
            "what the reference answered for this URL"
        );
        assert_eq!(callback_id("http://127.0.0.1:39127/mcp#x").unwrap(), id);
        assert_ne!(callback_id("http://127.0.0.1:39128/mcp").unwrap(), id);
        assert!(callback_id("not a url").is_err());
    }
}
