//! `initialize` (v1) params and response.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Identifies the client application.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClientInfo {
    /// Client name (used as `originator`).
    pub name: String,
    /// Human-readable client title.
    #[serde(default)]
    pub title: Option<String>,
    /// Client version.
    pub version: String,
}

/// Client-declared capabilities negotiated during initialize.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeCapabilities {
    /// Opt into receiving experimental API methods and fields (`null` = `false`).
    #[serde(default, deserialize_with = "crate::serde_util::null_as_default")]
    pub experimental_api: bool,
    /// Exact notification method names that should be suppressed for this connection
    /// (for example `thread/started`).
    #[serde(default)]
    pub opt_out_notification_methods: Option<Vec<String>>,
    /// Opt into `attestation/generate` requests (out of scope for Weft; accepted and ignored).
    #[serde(default, deserialize_with = "crate::serde_util::null_as_default")]
    pub request_attestation: bool,
    /// Use explicit gateway OAuth login (out of scope; accepted and ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub explicit_gateway_oauth: Option<bool>,
    /// MCP extension settings declared by the client (out of scope; accepted and ignored).
    #[serde(default)]
    pub extensions: Option<Map<String, Value>>,
    /// Legacy opt-in for the `openai/form` MCP extension (out of scope; accepted and ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub mcp_server_openai_form_elicitation: Option<bool>,
    /// Present `humanCommand` approvals to a person (requires `experimentalApi`; out of scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub required_human_approval: Option<bool>,
}

/// Params of `initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The client application.
    pub client_info: ClientInfo,
    /// Capabilities; omitted means all defaults.
    #[serde(default)]
    pub capabilities: Option<InitializeCapabilities>,
}

/// Result of `initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// User agent the server presents upstream.
    pub user_agent: String,
    /// Absolute path to the server's state home directory.
    pub codex_home: String,
    /// Platform family for the running server target, e.g. `"unix"` or `"windows"`.
    pub platform_family: String,
    /// Operating system for the running server target, e.g. `"macos"`, `"linux"`, `"windows"`.
    pub platform_os: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn capabilities_default_and_tolerate_null() {
        let p: InitializeParams =
            serde_json::from_value(json!({"clientInfo": {"name": "n", "version": "1"}})).unwrap();
        assert_eq!(p.capabilities, None);
        assert_eq!(p.client_info.title, None);
        let p: InitializeParams = serde_json::from_value(json!({
            "clientInfo": {"name": "n", "title": null, "version": "1"},
            "capabilities": {"experimentalApi": null, "optOutNotificationMethods": ["a"],
                "extensions": {"x": 1}, "somethingNew": true}
        }))
        .unwrap();
        let caps = p.capabilities.unwrap();
        assert!(!caps.experimental_api);
        assert_eq!(
            caps.opt_out_notification_methods,
            Some(vec!["a".to_owned()])
        );
    }
}
