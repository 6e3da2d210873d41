//! `mcpServer/oauth/login` and its `mcpServer/oauthLogin/completed` notification: an OAuth
//! login to a streamable-HTTP MCP server, answered with the URL to open at once and finished
//! in the background (docs/protocol.md §7.38, docs/mcp.md §9).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::ThreadId;

/// How the client is registered with the authorization server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerOauthClientRegistration {
    /// Whatever the authorization server offers (Weft: dynamic client registration).
    #[default]
    Auto,
    /// A client ID metadata document (Weft hosts none: refused).
    Cimd,
    /// Dynamic client registration (RFC 7591).
    Dcr,
}

/// `mcpServer/oauth/login` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginParams {
    /// The configured server (`[mcp_servers.<name>]`).
    pub name: String,
    /// The thread whose configuration names the server; Weft's servers are the daemon's.
    #[serde(default)]
    pub thread_id: Option<ThreadId>,
    /// Exact registration scope; omission preserves legacy name-only selection.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// Registration strategy for this login only; omission selects automatic discovery.
    #[serde(default)]
    pub client_registration: Option<McpServerOauthClientRegistration>,
    /// Scopes to ask for; omitted, the entry's `scopes`, else what the server advertises.
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
    /// How long the browser has to come back, in seconds (default 300, at least 1).
    #[serde(default)]
    pub timeout_secs: Option<i64>,
}

/// `mcpServer/oauth/login` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginResponse {
    /// The authorization server's page to open in a browser.
    pub authorization_url: String,
    /// Identifies this login attempt across the response and completion notification.
    #[serde(default)]
    pub login_id: Option<String>,
}

/// `mcpServer/oauthLogin/completed`: the login ended (tokens stored, or why not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginCompletedNotification {
    /// The server.
    pub name: String,
    /// The login's `threadId`, as given.
    #[serde(default)]
    pub thread_id: Option<ThreadId>,
    /// The login's `loginId`.
    #[serde(default)]
    pub login_id: Option<String>,
    /// Whether tokens were obtained and stored.
    pub success: bool,
    /// Why not; left out on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_completion_writes_the_keys_the_reference_writes() {
        let ok = McpServerOauthLoginCompletedNotification {
            name: "docs".into(),
            thread_id: None,
            login_id: Some("l-1".into()),
            success: true,
            error: None,
        };
        assert_eq!(
            serde_json::to_value(&ok).unwrap(),
            json!({"name": "docs", "threadId": null, "loginId": "l-1", "success": true})
        );
        let failed = McpServerOauthLoginCompletedNotification {
            success: false,
            error: Some("timed out waiting for OAuth callback".into()),
            ..ok
        };
        assert_eq!(
            serde_json::to_value(&failed).unwrap()["error"],
            json!("timed out waiting for OAuth callback")
        );
    }

    #[test]
    fn registration_spells_as_the_reference() {
        let params: McpServerOauthLoginParams =
            serde_json::from_value(json!({"name": "a", "clientRegistration": "dcr"})).unwrap();
        assert_eq!(
            params.client_registration,
            Some(McpServerOauthClientRegistration::Dcr)
        );
        assert!(
            serde_json::from_value::<McpServerOauthLoginParams>(
                json!({"name": "a", "clientRegistration": "other"})
            )
            .is_err()
        );
    }
}
