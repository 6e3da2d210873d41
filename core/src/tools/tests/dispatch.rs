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
