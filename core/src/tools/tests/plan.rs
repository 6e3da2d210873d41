//! update_plan through the runtime.

use super::*;
use crate::tools::UPDATE_PLAN_TOOL;
use crate::tools::plan_tool::REFUSED_IN_PLAN_MODE;

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

#[tokio::test]
async fn update_plan_is_refused_in_plan_mode_before_its_arguments_are_read() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let offer = ToolOffer {
        plan_mode: true,
        plan_collaboration: true,
        ..ToolOffer::default()
    };
    let set = f.runtime.tool_set(&offer, &turn);
    assert!(
        set.specs()
            .iter()
            .any(|spec| spec["name"] == UPDATE_PLAN_TOOL),
        "still offered in Plan mode, as the reference offers it"
    );
    for args in [json!({"plan": []}), json!({"plan": "nope"})] {
        let call = tool_call("p1", "update_plan", ToolInput::Function(args.to_string()));
        let text = output_text(Arc::clone(&set).handle(call, turn.clone()).await);
        assert_eq!(text, REFUSED_IN_PLAN_MODE);
    }
    assert!(f.sink.labels().is_empty(), "no plan item, no plan update");
    // A read-only task offers what Plan mode offers without being in it.
    let review = ToolOffer {
        plan_mode: true,
        ..ToolOffer::default()
    };
    let call = tool_call(
        "p2",
        "update_plan",
        ToolInput::Function(r#"{"plan":[]}"#.into()),
    );
    let set = f.runtime.tool_set(&review, &turn);
    assert_eq!(
        output_text(set.handle(call, turn.clone()).await),
        "Plan updated"
    );
}
