//! `update_plan`: `turn/plan/updated`, a `plan` item, and `Plan updated` for the model.

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{Tools, completed_item};

async fn update_plan_reports_the_plan(transport: Transport) {
    let mut t = Tools::start(transport).await;
    t.push(
        Reply::new().function_call(
            "call_plan",
            "update_plan",
            json!({"explanation": "Starting with the parser.", "plan": [
                {"step": "Read the parser", "status": "completed"},
                {"step": "Fix the bug", "status": "in_progress"},
                {"step": "Add a test", "status": "pending"}
            ]})
            .to_string(),
        ),
    );
    t.push(Reply::new().text("Plan set."));
    let thread = t.thread("never", "read-only").await;
    let run = t.h.run_turn(&thread, "plan the work").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let updates = run.notifications("turn/plan/updated");
    assert_eq!(updates.len(), 1);
    let params = &updates[0]["params"];
    assert_eq!(params["threadId"], thread.as_str());
    assert_eq!(params["turnId"], run.turn_id.as_str());
    assert_eq!(params["explanation"], "Starting with the parser.");
    assert_eq!(
        params["plan"],
        json!([
            {"step": "Read the parser", "status": "completed"},
            {"step": "Fix the bug", "status": "inProgress"},
            {"step": "Add a test", "status": "pending"}
        ])
    );
    let item = completed_item(&run.messages, "call_plan");
    assert_eq!(item["type"], "plan");
    assert_eq!(
        item["text"],
        "Starting with the parser.\n\n- [x] Read the parser\n- [~] Fix the bug\n- [ ] Add a test\n"
    );
    assert_eq!(t.h.output_in(2, "call_plan").await, "Plan updated");
    t.finish().await;
}

on_both_transports!(update_plan_reports_the_plan);
