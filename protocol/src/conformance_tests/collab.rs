//! Multi-agent items: `collabAgentToolCall` and `subAgentActivity`.
//!
//! - Real notifications the reference (Codex 0.171.0) sent, copied verbatim from
//!   `codex-transcripts/collab_v1_spawn.jsonl`, `collab_v1_limits.jsonl` and
//!   `collab_v2_spawn.jsonl`: the item decodes into Weft's type and encodes back to the same
//!   JSON, and the whole notification validates against both schemas.
//! - The generated schema of both items and their enums has the reference's shapes (see
//!   `mcp_shapes.rs`).
//! - [`sample_items`] (every optional value set) join the key check of the other items.

use serde_json::Value;

use super::mcp_shapes::compare;
use super::{Schemas, to_value};
use crate::*;

/// Verbatim `msg`s of the reference transcripts (one line each), in order: a completed spawn
/// (model resolved, the new agent `pendingInit`), a wait starting (no prompt, model or effort), a
/// refused spawn (`model` stays `""`, no receiver), a sub-agent started (resolved model and
/// effort), a sub-agent finished (`null` model and effort are written).
const WIRE_EXAMPLES: &[&str] = &[
    // collab_v1_spawn
    r#"{"method": "item/completed", "params": {"item": {"type": "collabAgentToolCall", "id": "call_spawn_1", "tool": "spawnAgent", "status": "completed", "senderThreadId": "01a23330-6b3f-78d0-8ed9-017295d437b5", "receiverThreadIds": ["01a23330-6c02-7090-bdc5-506b59246624"], "prompt": "Reply with the single word PONG.", "model": "gpt-5.5", "reasoningEffort": "medium", "agentsStates": {"01a23330-6c02-7090-bdc5-506b59246624": {"status": "pendingInit", "message": null}}, "startedAtMs": 1796155141119, "completedAtMs": 1796155141146}, "threadId": "01a23330-6b3f-78d0-8ed9-017295d437b5", "turnId": "01a23330-6b61-79f3-96f0-c54cecbb1460", "contentTokenCount": null, "completedAtMs": 1796155141146}, "emittedAtMs": 1796155141157}"#,
    // collab_v1_spawn
    r#"{"method": "item/started", "params": {"item": {"type": "collabAgentToolCall", "id": "call_wait_1", "tool": "wait", "status": "inProgress", "senderThreadId": "01a23330-6b3f-78d0-8ed9-017295d437b5", "receiverThreadIds": ["01a23330-6c02-7090-bdc5-506b59246624"], "prompt": null, "model": null, "reasoningEffort": null, "agentsStates": {}, "startedAtMs": 1796155141243, "completedAtMs": null}, "threadId": "01a23330-6b3f-78d0-8ed9-017295d437b5", "turnId": "01a23330-6b61-79f3-96f0-c54cecbb1460", "startedAtMs": 1796155141243}, "emittedAtMs": 1796155141245}"#,
    // collab_v1_limits
    r#"{"method": "item/completed", "params": {"item": {"type": "collabAgentToolCall", "id": "call_spawn_2", "tool": "spawnAgent", "status": "failed", "senderThreadId": "01a2332e-e547-7111-ab0b-427de5849d66", "receiverThreadIds": [], "prompt": "Say B.", "model": "", "reasoningEffort": "medium", "agentsStates": {}, "startedAtMs": 1796155041411, "completedAtMs": 1796155041411}, "threadId": "01a2332e-e547-7111-ab0b-427de5849d66", "turnId": "01a2332e-e56d-7a21-8950-737dca4703fd", "contentTokenCount": null, "completedAtMs": 1796155041411}, "emittedAtMs": 1796155041413}"#,
    // collab_v2_spawn
    r#"{"method": "item/started", "params": {"item": {"type": "subAgentActivity", "model": "gpt-5.5", "reasoningEffort": "medium", "id": "call_spawn_a", "kind": "started", "agentThreadId": "01a23330-63ec-75c3-b6a6-0fca36c1255b", "agentPath": "/root/worker_a", "startedAtMs": 1796155139069, "completedAtMs": null}, "threadId": "01a23330-6354-7523-a8f2-cc26ed682f51", "turnId": "01a23330-637b-7b11-896e-e80ff6b3eb5e", "startedAtMs": 1796155139069}, "emittedAtMs": 1796155139071}"#,
    // collab_v2_spawn
    r#"{"method": "item/completed", "params": {"item": {"type": "subAgentActivity", "model": null, "reasoningEffort": null, "id": "subagent-completed-01a23330-63fd-7dd1-bae6-01d63bcdb163", "kind": "completed", "agentThreadId": "01a23330-63ec-75c3-b6a6-0fca36c1255b", "agentPath": "/root/worker_a", "startedAtMs": 1796155139170, "completedAtMs": 1796155139170}, "threadId": "01a23330-6354-7523-a8f2-cc26ed682f51", "turnId": "01a23330-637b-7b11-896e-e80ff6b3eb5e", "contentTokenCount": null, "completedAtMs": 1796155139170}, "emittedAtMs": 1796155139174}"#,
];

#[test]
fn wire_items_round_trip_exactly_and_validate() {
    let mut schemas = Schemas::load();
    for (i, text) in WIRE_EXAMPLES.iter().enumerate() {
        let msg: Value = serde_json::from_str(text).unwrap();
        let wire = &msg["params"]["item"];
        let what = format!("example {i} ({})", wire["type"]);
        let item: ThreadItem =
            serde_json::from_value(wire.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(item.item_type(), wire["type"], "{what}");
        assert_eq!(item.id().as_str(), wire["id"], "{what}");
        assert_eq!(&to_value(&item), wire, "{what}: re-encoded differently");

        let decoded: ServerNotification =
            serde_json::from_value(msg.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let line = decoded
            .to_line(msg["emittedAtMs"].as_i64().unwrap())
            .unwrap();
        let ours: Value = serde_json::from_str(&line).unwrap();
        schemas.validate_both("ServerNotification.json", &ours, &what);
    }
}

/// Both items with every optional value set (for the key check of the other items' tests).
pub(super) fn sample_items() -> Vec<ThreadItem> {
    let call = CollabAgentToolCallItem {
        status: CollabAgentToolCallStatus::Completed,
        receiver_thread_ids: vec!["child".into()],
        prompt: Some("Say A.".into()),
        model: Some("gpt-5.5".into()),
        reasoning_effort: Some("medium".into()),
        agents_states: [(
            "child".to_owned(),
            CollabAgentState {
                status: CollabAgentStatus::Completed,
                message: Some("A".into()),
            },
        )]
        .into(),
        ..CollabAgentToolCallItem::started("call_spawn", CollabAgentTool::SpawnAgent, "th")
    };
    let activity = SubAgentActivityItem {
        id: "call_spawn_b".into(),
        kind: SubAgentActivityKind::Started,
        agent_thread_id: "child".into(),
        agent_path: "/root/worker_b".into(),
        model: Some("gpt-5.5".into()),
        reasoning_effort: Some("high".into()),
    };
    vec![call.into(), activity.into()]
}

#[test]
fn schemas_have_the_reference_shapes() {
    let mut schemas = Schemas::load();
    let file = "ServerNotification.json";
    schemas.load_reference(file);
    let ours = schemas.ours(file);
    let reference = &schemas.reference[file];
    for (item_type, name) in [
        ("collabAgentToolCall", "CollabAgentToolCallItem"),
        ("subAgentActivity", "SubAgentActivityItem"),
    ] {
        let branch = reference["definitions"]["ThreadItem"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["properties"]["type"]["enum"][0] == item_type)
            .unwrap();
        compare(
            &schemas,
            &format!("ThreadItem#{item_type}"),
            (ours, &ours["definitions"][name]),
            (reference, branch),
        );
    }
    for name in [
        "CollabAgentTool",
        "CollabAgentToolCallStatus",
        "CollabAgentState",
        "CollabAgentStatus",
        "SubAgentActivityKind",
    ] {
        assert!(
            ours["definitions"].get(name).is_some(),
            "we define no {name}"
        );
        compare(
            &schemas,
            name,
            (ours, &ours["definitions"][name]),
            (reference, &reference["definitions"][name]),
        );
    }
}
