//! Scripted model replies that hold or cut an assistant message mid-stream, for the tests of
//! steering, interrupts, retries and subscribers.

use serde_json::json;
use weft_mock_model::{Gate, Reply};
use weft_test_support::DEFAULT_TIMEOUT;

/// A Responses reply that starts an assistant message `item_id` and streams `text` as one delta,
/// without finishing the message (add a gate, a cut or a stall after it).
pub fn partial_message(item_id: &str, text: &str) -> Reply {
    Reply::new()
        .raw_event(json!({
            "type": "response.output_item.added", "output_index": 0,
            "item": {"type": "message", "id": item_id, "role": "assistant",
                     "status": "in_progress", "content": []}
        }))
        .raw_event(json!({
            "type": "response.output_text.delta", "item_id": item_id,
            "output_index": 0, "content_index": 0, "delta": text
        }))
}

/// A Responses reply that starts an assistant message `item_id`, streams `before` as one delta,
/// holds at `gate`, then finishes the message with `after` and completes.
pub fn gated_message(item_id: &str, before: &str, gate: &Gate, after: &str) -> Reply {
    partial_message(item_id, before)
        .gate(gate)
        .raw_event(json!({
            "type": "response.output_text.delta", "item_id": item_id,
            "output_index": 0, "content_index": 0, "delta": after
        }))
        .raw_event(json!({
            "type": "response.output_item.done", "output_index": 0,
            "item": {"type": "message", "id": item_id, "role": "assistant",
                     "status": "completed",
                     "content": [{"type": "output_text", "text": format!("{before}{after}"),
                                  "annotations": []}]}
        }))
}

/// Wait until `gate` holds a stream (the mock has sent everything before it).
pub async fn wait_gate(gate: &Gate) {
    gate.wait_reached(DEFAULT_TIMEOUT)
        .await
        .expect("the mock's stream reaches the gate");
}
