//! Which tools the runtime offers and how it routes calls: unknown tools, bad arguments, the specs
//! per approval policy.

use super::*;

#[tokio::test]
async fn unknown_tools_and_bad_arguments() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    assert_eq!(
        f.call(&turn, "c1", "nope", json!({})).await,
        "unsupported call: nope"
    );
    assert_eq!(
        f.custom(&turn, "c2", "nope", "x").await,
        "unsupported custom tool call: nope"
    );
    let text = f.call(&turn, "c3", "exec_command", json!({"cmd": 1})).await;
    assert!(
        text.starts_with("failed to parse function arguments:"),
        "{text}"
    );
    let text = f.call(&turn, "c4", "apply_patch", json!({})).await;
    assert!(
        text.starts_with("failed to parse function arguments:"),
        "{text}"
    );
    assert!(f.sink.labels().is_empty(), "{:?}", f.sink.labels());
}

#[tokio::test]
async fn specs_offer_escalation_only_on_request() {
    let f = Fixture::new();
    let names = |turn: &ToolTurn| -> Vec<String> {
        f.specs(turn)
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    let never = f.turn(AskForApproval::Never, workspace_write());
    assert_eq!(
        names(&never),
        ["exec_command", "write_stdin", "apply_patch", "update_plan"]
    );
    let escalation = |turn: &ToolTurn| {
        f.specs(turn)[0]["parameters"]["properties"]
            .get("sandbox_permissions")
            .is_some()
    };
    assert!(!escalation(&never));
    assert!(escalation(
        &f.turn(AskForApproval::OnRequest, workspace_write())
    ));
}

/// Which tool of the set serves a call, by name: a built-in's name without a namespace stays
/// the built-in's (even when the turn does not offer it), the goal names are free without the
/// feature, and a namespaced call goes to the family that has it.
#[test]
fn the_set_resolves_reserved_names_before_the_families() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let dynamic: Vec<weft_protocol::DynamicToolSpec> = serde_json::from_value(json!([
        {"type": "function", "name": "exec_command", "description": "x", "inputSchema": {}},
        {"type": "function", "name": "request_user_input", "description": "x", "inputSchema": {}},
        {"type": "function", "name": "get_goal", "description": "x", "inputSchema": {}},
        {"type": "namespace", "name": "ns", "description": "x", "tools": [
            {"type": "function", "name": "update_plan", "description": "x", "inputSchema": {}}
        ]}
    ]))
    .unwrap();
    let offer = ToolOffer {
        dynamic_tools: Arc::new(dynamic),
        ..ToolOffer::default()
    };
    let set = f.runtime.tool_set(&offer, &turn);
    let served_by = |name: &str, namespace: Option<&str>| {
        let call = ToolCall {
            call_id: "c".into(),
            name: name.into(),
            namespace: namespace.map(str::to_string),
            input: ToolInput::Function("{}".into()),
        };
        set.resolve(&call).map(|tool| tool.name().to_string())
    };
    assert_eq!(
        served_by("exec_command", None).as_deref(),
        Some("exec_command")
    );
    assert_eq!(served_by("request_user_input", None), None);
    assert_eq!(
        served_by("get_goal", None).as_deref(),
        Some("dynamic tools")
    );
    assert_eq!(
        served_by("update_plan", Some("ns")).as_deref(),
        Some("dynamic tools")
    );
    assert_eq!(
        served_by("spawn_agent", Some("multi_agent_v1")).as_deref(),
        Some("multi-agent tools")
    );
    assert_eq!(served_by("nope", None), None);
}
