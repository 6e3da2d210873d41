//! The line format: a stable shape, dynamic tools in the header.

use super::*;

#[test]
fn record_lines_have_a_stable_shape() {
    let line = RolloutLine {
        ts: 1_767_225_600_123,
        record: RolloutRecord::TurnEnded {
            turn_id: TurnId::from("t1"),
            status: TurnStatus::Interrupted,
            error: None,
            completed_at: 1_767_225_600,
            duration_ms: Some(1500),
        },
    };
    let json = serde_json::to_string(&line).unwrap();
    assert_eq!(
        json,
        r#"{"ts":1767225600123,"type":"turn_ended","payload":{"turn_id":"t1","status":"interrupted","error":null,"completed_at":1767225600,"duration_ms":1500}}"#
    );
    assert_eq!(serde_json::from_str::<RolloutLine>(&json).unwrap(), line);
}

/// The header keeps a thread's dynamic tools; a header without them (older rollouts, or a
/// thread without any) reads as none, and none are not written.
#[test]
fn session_meta_keeps_dynamic_tools_compatibly() {
    let id = ThreadId::from("t");
    let plain = serde_json::to_value(meta(&id, 1)).unwrap();
    assert!(plain.get("dynamic_tools").is_none(), "{plain}");
    let old: SessionMeta = serde_json::from_value(plain).unwrap();
    assert!(old.dynamic_tools.is_empty());
    let mut with_tools = meta(&id, 1);
    with_tools.dynamic_tools = serde_json::from_value(serde_json::json!([
        {"type": "namespace", "name": "codex_tui", "description": "d", "tools": [
            {"type": "function", "name": "list_threads", "description": "d",
             "inputSchema": {"type": "object"}, "deferLoading": true}
        ]}
    ]))
    .unwrap();
    let value = serde_json::to_value(&with_tools).unwrap();
    assert_eq!(value["dynamic_tools"][0]["tools"][0]["deferLoading"], true);
    assert_eq!(
        serde_json::from_value::<SessionMeta>(value).unwrap(),
        with_tools
    );
}
