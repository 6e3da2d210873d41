//! `mcpServer/oauth/login` (docs/protocol.md §7.38, docs/mcp.md §9): answered with the
//! authorization URL and a `loginId` as soon as the server's metadata is discovered and the
//! client registered; the login then waits for the browser in the background and ends with
//! `mcpServer/oauthLogin/completed` to every connection, as the reference sends it. A login
//! that stored tokens restarts the server's session, so its next use carries them.

use std::sync::Arc;

use weft_core::mcp::oauth::{self, LoginError, Registration};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::mcp_oauth_api::{
    McpServerOauthClientRegistration, McpServerOauthLoginCompletedNotification,
    McpServerOauthLoginParams, McpServerOauthLoginResponse,
};
use weft_protocol::notifications::ServerNotification;

use crate::dispatch::{Context, HandlerResult};
use crate::handlers::loaded_thread;

/// `mcpServer/oauth/login`.
pub async fn login(
    cx: Context<'_>,
    params: McpServerOauthLoginParams,
) -> HandlerResult<McpServerOauthLoginResponse> {
    if let Some(thread_id) = &params.thread_id {
        loaded_thread(cx.state, thread_id)?;
    }
    let name = params.name;
    let pool = Arc::clone(&cx.state.threads.services().mcp);
    let server = pool.server(&name).ok_or_else(|| {
        JsonRpcError::invalid_request(format!("No MCP server named '{name}' found."))
    })?;
    // The reference registers with a client ID metadata document it hosts for `cimd` (and
    // for `auto` when the server offers it); Weft hosts none, so it registers dynamically.
    let registration = match params.client_registration {
        Some(McpServerOauthClientRegistration::Cimd) => Registration::MetadataDocument,
        _ => Registration::Dynamic,
    };
    let credentials = pool
        .credentials()
        .cloned()
        .ok_or_else(|| JsonRpcError::internal("MCP OAuth credentials have no home"))?;
    let slot = pool.oauth_login_slot().ok_or_else(|| {
        JsonRpcError::invalid_request(format!(
            "too many MCP OAuth logins waiting for their browser \
             (limits.max_mcp_oauth_logins = {})",
            cx.state.config.limits.max_mcp_oauth_logins
        ))
    })?;
    let scopes = params.scopes.unwrap_or_default();
    let pending = oauth::start_login(
        &server.config,
        &credentials,
        &scopes,
        registration,
        params.timeout_secs,
    )
    .await
    .map_err(|err| match err {
        LoginError::NotHttp => JsonRpcError::invalid_request(err.to_string()),
        LoginError::Flow(err) => {
            JsonRpcError::internal(format!("failed to login to MCP server '{name}': {err}"))
        }
    })?;
    let login_id = uuid::Uuid::now_v7().to_string();
    let authorization_url = pending.authorization_url.clone();
    let connections = Arc::clone(&cx.state.connections);
    let thread_id = params.thread_id;
    let notified_id = login_id.clone();
    tokio::spawn(async move {
        let result = pending.finish().await;
        drop(slot);
        if result.is_ok() {
            pool.renew(&name).await;
        } else if let Err(error) = &result {
            tracing::warn!(server = %name, %error, "MCP OAuth login failed");
        }
        let notification = ServerNotification::from(McpServerOauthLoginCompletedNotification {
            name,
            thread_id,
            login_id: Some(notified_id),
            success: result.is_ok(),
            error: result.err(),
        });
        connections.broadcast(&notification).await;
    });
    Ok(McpServerOauthLoginResponse {
        authorization_url,
        login_id: Some(login_id),
    })
}
