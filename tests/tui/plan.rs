//! Plan mode in the TUI against Weft (docs/protocol.md §7.25): `/plan` switches the composer to
//! Plan mode; the model's `<proposed_plan>` block shows as the TUI's "Proposed Plan" block (not
//! as raw tags), the text around it as the answer, and the TUI asks "Implement this plan?".
//! Choosing "Yes, implement this plan" sends the next turn in Default mode with the TUI's
//! "Implement the plan." as its input.

use crate::{Session, wait_idle, wait_turn_done};
use weft_mock_model::Reply;

#[tokio::test]
async fn a_proposed_plan_shows_and_is_implemented() {
    let s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    tui.submit("/plan").await;
    tui.wait_for_text("Plan mode").await;
    s.push(Reply::new().text_deltas([
        "I read the code.\n<proposed_",
        "plan>\n# Tidy the notes\n- Step one: sort the list\n",
        "- Step two: drop duplicates\n</proposed_plan>\n",
    ]));
    tui.submit("plan how to tidy the notes").await;
    let screen = tui
        .wait_for_screen("the proposed plan and its implement prompt", |s| {
            s.contains("Proposed Plan")
                && s.contains("Step two: drop duplicates")
                && s.contains("Implement this plan?")
        })
        .await;
    assert!(!screen.contains("<proposed_plan>"), "{screen}");
    assert!(!screen.contains("</proposed_plan>"), "{screen}");
    assert!(screen.contains("I read the code."), "{screen}");
    assert!(screen.contains("Yes, implement this plan"), "{screen}");
    assert!(screen.contains("No, stay in Plan mode"), "{screen}");

    // "Yes": the next turn is sent in Default mode with the TUI's own text.
    s.push(Reply::new().text("Implementing the tidy-up."));
    tui.wait_for_screen("the implement prompt settled", |s| {
        s.contains("Implement this plan?")
    })
    .await;
    tui.press("Enter");
    wait_turn_done(&tui, "Implementing the tidy-up.").await;
    wait_idle(&tui).await;
    let requests = s.wait_for_requests(2).await;
    let next = requests.last().expect("the implementing turn's request");
    let users = next.message_texts("user");
    assert!(
        users.iter().any(|t| t == "Implement the plan."),
        "{users:?}"
    );
    let modes: Vec<String> = next
        .message_texts("developer")
        .into_iter()
        .filter(|t| t.starts_with("<collaboration_mode>"))
        .collect();
    assert!(
        modes.last().is_some_and(
            |m| m.starts_with("<collaboration_mode># Weft collaboration mode: Default")
        ),
        "{modes:?}"
    );
    // The model read its plan as it wrote it.
    let said = next.message_texts("assistant");
    assert!(
        said.iter()
            .any(|t| t.contains("<proposed_plan>") && t.contains("- Step two: drop duplicates")),
        "{said:?}"
    );
}
