//! update_plan through the runtime.

use super::*;

#[tokio::test]
async fn update_plan_reports_the_plan() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let text = f
        .call(
            &turn,
            "u1",
            "update_plan",
            json!({"explanation": "Start", "plan": [
                {"step": "Read", "status": "completed"},
                {"step": "Write", "status": "in_progress"}
            ]}),
        )
        .await;
    assert_eq!(text, "Plan updated");
    assert_eq!(f.sink.labels(), ["started:plan", "plan", "completed:plan"]);
    let plan = f
        .sink
        .seen()
        .into_iter()
        .find_map(|s| match s {
            Seen::Event(ThreadEvent::PlanUpdated {
                plan, explanation, ..
            }) => Some((plan, explanation)),
            _ => None,
        })
        .unwrap();
    assert_eq!(plan.1.as_deref(), Some("Start"));
    assert_eq!(plan.0.len(), 2);
    let text = f
        .call(&turn, "u2", "update_plan", json!({"plan": "nope"}))
        .await;
    assert!(
        text.starts_with("failed to parse function arguments"),
        "{text}"
    );
}
