//! MCP conformance.
//!
//! - `mcp_transcripts.jsonl` holds, verbatim, every distinct MCP message the reference (Codex
//!   0.171.0) sent or received in four MCP scenarios (tools and client calls, approvals under
//!   `untrusted` and `on-request`, the `approve` mode), one per line with its scenario, its
//!   direction and, for a response, the method it answers. Each decodes into Weft's type and
//!   encodes back to the same JSON, and validates against both schemas. (The key check of
//!   [`Schemas::check`] is not used on them: the reference itself leaves out some keys its
//!   schema lists, and matching its output exactly is the stronger check.)
//! - Synthetic values cover what those scenarios never showed, with every optional value set,
//!   so the key check sees every key.
//!
//! `mcp_shapes.rs` compares the generated schema of the MCP types with the reference's.

use std::collections::BTreeSet;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{Schemas, assert_equivalent_params, to_value};
use crate::jsonrpc::{JsonRpcErrorResponse, RequestId};
use crate::mcp_elicitation::*;
use crate::*;

const TRANSCRIPTS: &str = include_str!("mcp_transcripts.jsonl");

/// Decodes `value` as `T` and encodes it back: the same JSON must come out.
fn round_trip<T: Serialize + DeserializeOwned>(value: &Value, what: &str) -> Value {
    let decoded: T =
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let back = to_value(&decoded);
    assert_eq!(&back, value, "{what}: re-encoded differently");
    back
}

/// Params a client sent: they decode, re-encode with the same keys (plus `null`s) and validate.
fn client_params<T: Serialize + DeserializeOwned>(
    schemas: &mut Schemas,
    file: &str,
    params: &Value,
    what: &str,
) {
    let decoded: T =
        serde_json::from_value(params.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let ours = to_value(&decoded);
    assert_equivalent_params(params, &ours, what);
    schemas.validate_both(file, &ours, what);
}

#[test]
fn transcript_messages_round_trip_exactly_and_validate() {
    let mut schemas = Schemas::load();
    let mut seen = BTreeSet::new();
    let mut lines = 0;
    for (n, line) in TRANSCRIPTS.lines().enumerate() {
        let entry: Value = serde_json::from_str(line).unwrap();
        let msg = &entry["msg"];
        let dir = entry["dir"].as_str().unwrap();
        let what = format!("line {} ({} {dir})", n + 1, entry["scenario"]);
        let method = msg.get("method").and_then(Value::as_str);
        let answers = entry["answers"].as_str();
        let kind = match (dir, method, msg.get("id").is_some()) {
            ("s2c", Some(method), false) => {
                let decoded: ServerNotification =
                    serde_json::from_value(msg.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
                let line = decoded
                    .to_line(msg["emittedAtMs"].as_i64().unwrap())
                    .unwrap();
                let mut ours: Value = serde_json::from_str(&line).unwrap();
                ours.as_object_mut().unwrap().remove("jsonrpc");
                assert_eq!(&ours, msg, "{what}: re-encoded differently");
                schemas.validate_both("ServerNotification.json", &ours, &what);
                match &decoded {
                    ServerNotification::ItemStarted(p) => {
                        format!("{method} {}", p.item.item_type())
                    }
                    ServerNotification::ItemCompleted(p) => {
                        format!("{method} {}", p.item.item_type())
                    }
                    _ => method.to_owned(),
                }
            }
            ("s2c", Some(method), true) => {
                let ours = round_trip::<ServerRequest>(msg, &what);
                schemas.validate_both("ServerRequest.json", &ours, &what);
                format!("server request {method}")
            }
            ("c2s", Some(method), true) => {
                // Served: the request decodes to its variant, with the same method.
                let request = ClientRequest::from_value(msg.clone())
                    .unwrap_or_else(|err| panic!("{what}: {err}"));
                assert_eq!(request.method(), method, "{what}");
                let params = &msg["params"];
                match method {
                    "mcpServerStatus/list" => client_params::<ListMcpServerStatusParams>(
                        &mut schemas,
                        "v2/ListMcpServerStatusParams.json",
                        params,
                        &what,
                    ),
                    "mcpServer/tool/call" => client_params::<McpServerToolCallParams>(
                        &mut schemas,
                        "v2/McpServerToolCallParams.json",
                        params,
                        &what,
                    ),
                    other => panic!("{what}: no params type for {other}"),
                }
                format!("client request {method}")
            }
            ("s2c", None, _) if msg.get("error").is_some() => {
                let ours = round_trip::<JsonRpcErrorResponse>(msg, &what);
                schemas.validate_both("JSONRPCError.json", &ours, &what);
                format!("error for {}", answers.unwrap())
            }
            ("s2c", None, _) => {
                let result = &msg["result"];
                let (file, ours) = match answers {
                    Some("mcpServerStatus/list") => (
                        "v2/ListMcpServerStatusResponse.json",
                        round_trip::<ListMcpServerStatusResponse>(result, &what),
                    ),
                    Some("mcpServer/tool/call") => (
                        "v2/McpServerToolCallResponse.json",
                        round_trip::<McpServerToolCallResponse>(result, &what),
                    ),
                    other => panic!("{what}: no result type for {other:?}"),
                };
                schemas.validate_both(file, &ours, &what);
                format!("result of {}", answers.unwrap())
            }
            ("c2s", None, _) => {
                assert_eq!(answers, Some("mcpServer/elicitation/request"), "{what}");
                let ours = round_trip::<McpServerElicitationRequestResponse>(&msg["result"], &what);
                schemas.validate_both("McpServerElicitationRequestResponse.json", &ours, &what);
                format!("client answer to {}", answers.unwrap())
            }
            other => panic!("{what}: unexpected message {other:?}"),
        };
        seen.insert(kind);
        lines += 1;
    }
    assert_eq!(lines, 57);
    let expected: BTreeSet<String> = [
        "client answer to mcpServer/elicitation/request",
        "client request mcpServer/tool/call",
        "client request mcpServerStatus/list",
        "error for mcpServer/tool/call",
        "item/completed mcpToolCall",
        "item/started mcpToolCall",
        "mcpServer/startupStatus/updated",
        "result of mcpServer/tool/call",
        "result of mcpServerStatus/list",
        "server request mcpServer/elicitation/request",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(seen, expected);
}

/// An `mcpToolCall` item with every optional value set (for the key check).
pub(super) fn sample_item() -> McpToolCallItem {
    McpToolCallItem {
        environment_id: Some("local".into()),
        status: McpToolCallStatus::Failed,
        app_context: Some(Box::new(McpToolCallAppContext {
            connector_id: "c".into(),
            link_id: Some("l".into()),
            app_name: Some("App".into()),
            action_name: Some("Act".into()),
            resource_uri: Some("ui://app".into()),
        })),
        mcp_app_ui: Some(McpAppUi {
            resource_uri: "ui://app".into(),
            preferred_model_display_mode: McpAppDisplayMode::Fullscreen,
        }),
        mcp_app_resource_uri: Some("ui://app".into()),
        plugin_id: Some("p".into()),
        read_only_hint: Some(false),
        result: Some(McpToolCallResult {
            content: vec![json!({"type": "text", "text": "no"})],
            structured_content: Some(json!({"ok": false})),
            meta: Some(json!({"k": 1})),
        }),
        error: Some(McpToolCallError {
            message: "user cancelled MCP tool call".into(),
        }),
        duration_ms: Some(3),
        ..McpToolCallItem::started("call_mcp", "anchor", "add", json!({"a": 1}))
    }
}

/// The MCP notifications, with every optional value set (for the key check).
pub(super) fn sample_notifications() -> Vec<ServerNotification> {
    let mut notifications: Vec<ServerNotification> = [
        McpServerStartupState::Starting,
        McpServerStartupState::Ready,
        McpServerStartupState::Cancelled,
    ]
    .into_iter()
    .map(|status| {
        McpServerStatusUpdatedNotification {
            thread_id: Some("th".into()),
            name: "anchor".into(),
            environment_id: Some("local".into()),
            status,
            error: Some("e".into()),
            failure_reason: Some(McpServerStartupFailureReason::ReauthenticationRequired),
        }
        .into()
    })
    .collect();
    notifications.push(
        McpToolCallProgressNotification {
            thread_id: "th".into(),
            turn_id: "tu".into(),
            item_id: "call_mcp".into(),
            message: "halfway".into(),
        }
        .into(),
    );
    notifications.push(
        McpServerOauthLoginCompletedNotification {
            name: "docs".into(),
            thread_id: Some("th".into()),
            login_id: Some("login-1".into()),
            success: false,
            error: Some("timed out waiting for OAuth callback".into()),
        }
        .into(),
    );
    notifications
}

fn sample_status() -> McpServerStatus {
    let tool = McpTool {
        name: "echo".into(),
        title: Some("Echo".into()),
        description: Some("d".into()),
        input_schema: json!({"type": "object"}),
        output_schema: Some(json!({"type": "object"})),
        annotations: Some(json!({"readOnlyHint": true})),
        icons: Some(vec![json!({"src": "https://example.com/i.png"})]),
        meta: Some(json!({})),
    };
    McpServerStatus {
        name: "anchor".into(),
        environment_id: Some("local".into()),
        runtime_status: Some(McpServerConnectionStatus::Connected),
        plugin_id: Some("p".into()),
        http_origin: Some("https://example.com".into()),
        server_info: Some(McpServerInfo {
            name: "anchor-echo".into(),
            title: Some("Anchor".into()),
            version: "1".into(),
            description: Some("d".into()),
            icons: Some(vec![]),
            website_url: Some("https://example.com".into()),
        }),
        server_capabilities: Some(json!({"tools": {"listChanged": false}})),
        tool_list_meta: Some(json!({"page": 1})),
        tools: [("echo".to_owned(), tool)].into(),
        tools_error: Some("partial".into()),
        resources: vec![McpResource {
            uri: "file:///a".into(),
            name: "a".into(),
            title: Some("A".into()),
            description: Some("d".into()),
            mime_type: Some("text/plain".into()),
            size: Some(3),
            annotations: Some(json!({"priority": 1})),
            icons: Some(vec![]),
            meta: Some(json!({})),
        }],
        resource_templates: vec![McpResourceTemplate {
            uri_template: "file:///{name}".into(),
            name: "files".into(),
            title: Some("Files".into()),
            description: Some("d".into()),
            mime_type: Some("text/plain".into()),
            annotations: Some(json!({})),
        }],
        auth_status: McpAuthStatus::BearerToken,
    }
}

fn sample_form() -> McpElicitationSchema {
    let fields = [
        (
            "name",
            json!({"type": "string", "title": "Name", "description": "d", "minLength": 1,
            "maxLength": 9, "format": "date-time", "default": "x"}),
        ),
        (
            "count",
            json!({"type": "integer", "title": "N", "description": "d", "minimum": 1,
            "maximum": 9, "default": 2}),
        ),
        (
            "ok",
            json!({"type": "boolean", "title": "OK", "description": "d", "default": true}),
        ),
        (
            "one",
            json!({"type": "string", "title": "One", "description": "d", "enum": ["a"],
            "default": "a"}),
        ),
        (
            "titled",
            json!({"type": "string", "title": "T", "description": "d",
            "oneOf": [{"const": "a", "title": "A"}], "default": "a"}),
        ),
        (
            "legacy",
            json!({"type": "string", "title": "L", "description": "d", "enum": ["a"],
            "enumNames": ["A"], "default": "a"}),
        ),
        (
            "many",
            json!({"type": "array", "title": "M", "description": "d", "minItems": 1,
            "maxItems": 2, "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"]}),
        ),
        (
            "picks",
            json!({"type": "array", "title": "P", "description": "d", "minItems": 0,
            "maxItems": 1, "items": {"anyOf": [{"const": "a", "title": "A"}]},
            "default": []}),
        ),
    ];
    McpElicitationSchema {
        schema_uri: Some("https://json-schema.org/draft/2020-12/schema".into()),
        required: Some(vec!["name".into()]),
        properties: fields
            .into_iter()
            .map(|(name, field)| (name.to_owned(), serde_json::from_value(field).unwrap()))
            .collect(),
        ..McpElicitationSchema::empty()
    }
}

#[test]
fn synthetic_values_validate_and_write_every_key() {
    let mut schemas = Schemas::load();
    let list = ListMcpServerStatusResponse {
        data: vec![sample_status()],
        next_cursor: Some("c".into()),
    };
    schemas.check_result::<methods::McpServerStatusList>(&list);
    schemas.check_params::<methods::McpServerStatusList>(&ListMcpServerStatusParams::default());
    let call = McpServerToolCallParams {
        thread_id: "th".into(),
        server: "anchor".into(),
        tool: "add".into(),
        arguments: Some(json!({"a": 1})),
        meta: Some(json!({"k": 1})),
        environment_id: Some("local".into()),
    };
    schemas.check_params::<methods::McpServerToolCall>(&call);
    let answer = McpServerToolCallResponse {
        content: vec![json!({"type": "text", "text": "2"})],
        structured_content: Some(json!({"result": 2})),
        is_error: Some(false),
        meta: Some(json!({})),
    };
    schemas.check_result::<methods::McpServerToolCall>(&answer);
    let read = McpResourceReadParams {
        thread_id: Some("th".into()),
        server: "anchor".into(),
        uri: "file:///a".into(),
        meta: Some([("k".to_owned(), json!(1))].into()),
        environment_id: Some("local".into()),
        origin_call_id: Some("call".into()),
        connector_id: Some("c".into()),
        target: Some(McpResourceReadTarget {
            connector_id: "c".into(),
            link_id: None,
        }),
    };
    schemas.check_params::<methods::McpResourceRead>(&read);
    let contents = McpResourceReadResponse {
        contents: vec![
            McpResourceContent::Text {
                uri: "file:///a".into(),
                mime_type: Some("text/plain".into()),
                text: "abc".into(),
                meta: Some(json!({})),
            },
            McpResourceContent::Blob {
                uri: "file:///b".into(),
                mime_type: Some("image/png".into()),
                blob: "AA==".into(),
                meta: Some(json!({})),
            },
        ],
        origin_call_id: Some("call".into()),
    };
    schemas.check_result::<methods::McpResourceRead>(&contents);
    schemas.check_result::<methods::McpServerReload>(&McpServerRefreshResponse {});
    schemas.check_params::<methods::McpServerOauthLogin>(&McpServerOauthLoginParams {
        name: "docs".into(),
        thread_id: Some("th".into()),
        environment_id: Some("local".into()),
        client_registration: Some(McpServerOauthClientRegistration::Dcr),
        scopes: Some(vec!["read".into()]),
        timeout_secs: Some(30),
    });
    schemas.check_result::<methods::McpServerOauthLogin>(&McpServerOauthLoginResponse {
        authorization_url: "http://127.0.0.1:1/authorize?state=s".into(),
        login_id: Some("login-1".into()),
    });
    let requests = [
        McpServerElicitationRequest::Form {
            meta: Some(json!({"codex_approval_kind": "mcp_tool_call"})),
            message: "Fill in".into(),
            requested_schema: sample_form(),
        },
        McpServerElicitationRequest::Url {
            meta: Some(json!({})),
            message: "Log in".into(),
            url: "https://example.com".into(),
            elicitation_id: "e1".into(),
        },
    ];
    for (i, request) in requests.into_iter().enumerate() {
        let request = ServerRequest::McpServerElicitationRequest {
            id: RequestId::Integer(i as i64),
            params: McpServerElicitationRequestParams {
                thread_id: "t".into(),
                turn_id: Some("u".into()),
                server_name: "anchor".into(),
                environment_id: Some("local".into()),
                request,
            },
        };
        let value = to_value(&request);
        assert_eq!(request.thread_id().as_str(), "t");
        schemas.check("ServerRequest.json", &value, "elicitation");
        let back: ServerRequest = serde_json::from_value(value).unwrap();
        assert_eq!(back, request);
    }
    for action in [
        McpServerElicitationAction::Accept,
        McpServerElicitationAction::Decline,
        McpServerElicitationAction::Cancel,
    ] {
        let answer = McpServerElicitationRequestResponse {
            action,
            content: Some(json!({"name": "x"})),
            meta: Some(json!({})),
        };
        schemas.check_serialized(
            "McpServerElicitationRequestResponse.json",
            &answer,
            "elicitation answer",
        );
    }
}
