use serde_json::json;

use super::*;
use crate::policy::AskForApproval;

fn decode_err(value: Value) -> String {
    ClientRequest::from_value(value).unwrap_err().to_string()
}

#[test]
fn unknown_method_lists_our_methods() {
    let msg = decode_err(json!({"id": 2, "method": "foo/bar", "params": {}}));
    let expected = format!(
        "unknown variant `foo/bar`, expected one of {}",
        CLIENT_METHODS
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert_eq!(msg, expected);
    assert!(
        msg.starts_with(
            "unknown variant `foo/bar`, expected one of `initialize`, `thread/start`, "
        )
    );
    let msg = decode_err(json!({"id": 2, "method": "thread/rollback", "params": {}}));
    assert!(
        msg.starts_with("unknown variant `thread/rollback`"),
        "{msg}"
    );
}

#[test]
fn missing_or_null_params() {
    assert_eq!(
        decode_err(json!({"id": 1, "method": "thread/start"})),
        "missing field `params`"
    );
    assert_eq!(
        decode_err(json!({"id": 1, "method": "thread/start", "params": null})),
        "missing field `params`"
    );
    let err = ClientRequest::from_parts(RequestId::Integer(1), "model/list", None).unwrap_err();
    assert_eq!(err.to_string(), "missing field `params`");
    // `{}` is fine when every field is optional.
    let ok = ClientRequest::from_parts(RequestId::Integer(1), "thread/start", Some(json!({})));
    assert!(matches!(ok, Ok(ClientRequest::ThreadStart { .. })));
}

#[test]
fn field_errors_use_serde_wording() {
    assert_eq!(
        decode_err(json!({"id": 1, "method": "turn/start", "params": {"input": []}})),
        "missing field `threadId`"
    );
    assert_eq!(
        decode_err(json!({"id": 1, "method": "turn/start", "params": {"threadId": "t"}})),
        "missing field `input`"
    );
    assert_eq!(
        decode_err(json!({"id": 1, "method": "thread/read", "params": {"threadId": 123}})),
        "invalid type: integer `123`, expected a string"
    );
    assert_eq!(
        decode_err(json!({"id": 1, "method": "initialize", "params": {}})),
        "missing field `clientInfo`"
    );
    assert_eq!(
        decode_err(
            json!({"id": 1, "method": "thread/start", "params": {"approvalPolicy": "on-failure"}})
        ),
        "unknown variant `on-failure`, expected one of `untrusted`, `on-request`, `granular`, `never`"
    );
    let msg = decode_err(
        json!({"id": 1, "method": "thread/start", "params": {"sandbox": "workspaceWrite"}}),
    );
    assert!(msg.starts_with("unknown variant `workspaceWrite`"), "{msg}");
    let msg = decode_err(json!({"id": 1, "method": "turn/start", "params": {
        "threadId": "t", "input": [], "sandboxPolicy": {"type": "workspace-write"}}}));
    assert!(
        msg.starts_with("unknown variant `workspace-write`"),
        "{msg}"
    );
}

#[test]
fn accepts_extra_members_and_unknown_keys() {
    let req = ClientRequest::from_value(json!({
        "jsonrpc": "2.0", "id": "s1", "method": "thread/start",
        "trace": {"traceparent": "00-x"},
        "params": {"approvalPolicy": {"granular": {"sandbox_approval": true, "rules": false,
            "mcp_elicitations": false}}, "whatever": 1, "ephemeral": null}
    }))
    .unwrap();
    assert_eq!(req.id(), &RequestId::String("s1".into()));
    assert_eq!(req.method(), "thread/start");
    let ClientRequest::ThreadStart { params, .. } = req else {
        panic!("wrong variant")
    };
    assert_eq!(
        params.approval_policy,
        Some(AskForApproval::Granular {
            sandbox_approval: true,
            rules: false,
            mcp_elicitations: false,
            request_permissions: false,
            skill_approval: false,
        })
    );
}

#[test]
fn null_is_accepted_for_plain_optional_booleans() {
    let req = ClientRequest::from_value(json!({"id": 1, "method": "thread/fork",
        "params": {"threadId": "t", "ephemeral": null, "excludeTurns": null}}))
    .unwrap();
    let ClientRequest::ThreadFork { params, .. } = req else {
        panic!("wrong variant")
    };
    assert!(!params.ephemeral && !params.exclude_turns);
}

#[test]
fn method_table_matches_enum_and_subset() {
    for name in CLIENT_METHODS {
        let params = if *name == "initialize" {
            json!({"clientInfo": {"name": "x", "version": "1"}})
        } else if *name == "configRequirements/read"
            || *name == "config/mcpServer/reload"
            || *name == "externalAgentConfig/import/readHistories"
        {
            json!({})
        } else if *name == "modelProvider/config/write" {
            json!({"settings": {"type": "customGateway", "name": "n"}})
        } else if name.starts_with("command/exec") {
            json!({"command": ["c"], "processId": "p", "size": {"rows": 1, "cols": 1}})
        } else {
            json!({"threadId": "t", "input": [], "name": "n", "expectedTurnId": "u", "turnId": "u",
                "operation": {"type": "read"}, "expectedRevision": "r", "processId": "p",
                "server": "s", "tool": "x", "uri": "u", "event": {},
                "target": {"type": "uncommittedChanges", "connectorId": "c", "linkId": null},
                "command": "c", "beforeTurnId": "u",
                "query": "q", "roots": [], "sessionId": "s", "searchTerm": "t",
                "keyPath": "k", "value": 1, "mergeStrategy": "replace", "edits": [],
                "enablement": {}, "enabled": true, "path": "/p", "dataBase64": "",
                "sourcePath": "/s", "destinationPath": "/d", "watchId": "w",
                "items": [], "sectionId": "s",
                "attachmentType": "a", "identityKey": "k", "payload": {},
                "classification": "bug", "savePath": "/p", "extraRoots": ["/r"],
                "migrationItems": [], "providerId": "p", "itemTypeResults": []})
        };
        let req = ClientRequest::from_value(json!({"id": 1, "method": name, "params": params}))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(req.method(), *name);
        assert_eq!(serde_json::to_value(&req).unwrap()["method"], json!(name));
    }
    assert_eq!(<methods::ThreadStart as Method>::NAME, "thread/start");
    assert_eq!(<methods::ThreadSetName as Method>::NAME, "thread/name/set");
    let subset = crate::test_support::read_reference("protocol-subset.txt");
    let expected: Vec<&str> = subset
        .lines()
        .filter_map(|l| l.strip_prefix("request "))
        .map(str::trim)
        .collect();
    assert_eq!(CLIENT_METHODS, expected.as_slice());
}

#[test]
fn pending_methods_are_declared_but_unknown_to_the_decoder() {
    let subset = crate::test_support::read_reference("protocol-subset.txt");
    for name in PENDING_CLIENT_METHODS {
        assert!(!CLIENT_METHODS.contains(name), "{name}");
        assert!(
            !subset
                .lines()
                .any(|l| l.trim() == format!("request {name}"))
        );
        let msg = decode_err(json!({"id": 1, "method": name, "params": {}}));
        assert!(
            msg.starts_with(&format!("unknown variant `{name}`")),
            "{msg}"
        );
    }
    assert_eq!(
        <methods::McpServerStatusList as Method>::NAME,
        "mcpServerStatus/list"
    );
    assert_eq!(
        <methods::McpServerReload as Method>::NAME,
        "config/mcpServer/reload"
    );
}

#[test]
fn a_method_without_params_takes_none_null_or_empty() {
    for request in [
        json!({"id": 4, "method": "configRequirements/read"}),
        json!({"id": 4, "method": "configRequirements/read", "params": null}),
        json!({"id": 4, "method": "configRequirements/read", "params": {}}),
    ] {
        let decoded = ClientRequest::from_value(request).unwrap();
        assert_eq!(decoded.method(), "configRequirements/read");
        // Written back without params, as the reference's clients send it.
        assert_eq!(
            serde_json::to_value(&decoded).unwrap(),
            json!({"id": 4, "method": "configRequirements/read"})
        );
    }
    assert_eq!(
        decode_err(json!({"id": 4, "method": "configRequirements/read", "params": {"x": 1}})),
        "invalid type: map, expected unit"
    );
    // Every other new method needs its params, as in the reference.
    for method in [
        "account/read",
        "account/bedrock/checkGovCloudRequirements",
        "hooks/list",
    ] {
        assert_eq!(
            decode_err(json!({"id": 1, "method": method})),
            "missing field `params`"
        );
    }
}

#[test]
fn client_notification() {
    let n: ClientNotification =
        serde_json::from_value(json!({"jsonrpc": "2.0", "method": "initialized"})).unwrap();
    assert_eq!(n.method(), "initialized");
    assert_eq!(
        serde_json::to_value(&n).unwrap(),
        json!({"method": "initialized"})
    );
    assert!(serde_json::from_value::<ClientNotification>(json!({"method": "foo"})).is_err());
}
