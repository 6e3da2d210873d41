//! The TUI's backtrack (Esc Esc, docs/protocol.md §7.27) against Weft: Esc twice on an idle
//! composer picks the last user message, Enter asks Weft to `thread/revert` before that turn
//! and puts the message back in the composer; the edited message is sent as a new turn, and
//! the model no longer sees the turn that was cut.

use crate::{Session, wait_idle, wait_turn_done};
use weft_mock_model::Reply;
use weft_test_support::tui::composer_line;

#[tokio::test]
async fn esc_esc_edits_the_last_message_and_resends_it() {
    let s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    s.prompt(&tui, "first question about apples", "Apples are red.")
        .await;
    s.prompt(&tui, "second question about pears", "Pears are green.")
        .await;
    tui.press("Escape");
    tui.wait_for_text("again to edit previous message").await;
    tui.press("Escape");
    // The transcript opens with the last user message picked; Enter rewinds to it.
    tui.wait_for_text("Browsing transcript").await;
    tui.press("Enter");
    tui.wait_for_text("Conversation reverted to this point")
        .await;
    let screen = tui
        .wait_for_screen("the picked message back in the composer", |s| {
            composer_line(s).is_some_and(|line| line.contains("second question about pears"))
        })
        .await;
    assert!(!screen.contains("Pears are green."), "{screen}");
    s.push(Reply::new().text("Plums are purple."));
    tui.type_text(" and plums");
    tui.wait_for_screen("the edited message", |s| {
        composer_line(s).is_some_and(|line| line.contains("pears and plums"))
    })
    .await;
    tui.press("Enter");
    wait_turn_done(&tui, "Plums are purple.").await;
    wait_idle(&tui).await;
    let requests = s.wait_for_requests(3).await;
    let last = requests.last().expect("the resent turn's request");
    let users = last.message_texts("user");
    assert!(
        users
            .iter()
            .any(|t| t.contains("first question about apples")),
        "{users:?}"
    );
    assert!(
        users
            .iter()
            .any(|t| t.contains("second question about pears and plums")),
        "{users:?}"
    );
    let input = serde_json::to_string(last.input()).unwrap();
    assert!(
        !input.contains("Pears are green."),
        "the cut turn is still there: {input}"
    );
    assert_eq!(
        users
            .iter()
            .filter(|t| t.contains("second question about pears"))
            .count(),
        1,
        "{users:?}"
    );
}

/// In the transcript, ← moves the pick to an earlier message: rewinding there cuts both turns
/// from it on, and the model's next request has neither.
#[tokio::test]
async fn an_earlier_message_is_picked_with_left() {
    let s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    s.prompt(&tui, "opening question about figs", "Figs are sweet.")
        .await;
    s.prompt(&tui, "middle question about dates", "Dates are sticky.")
        .await;
    s.prompt(&tui, "closing question about limes", "Limes are sour.")
        .await;
    tui.press("Escape");
    tui.wait_for_text("again to edit previous message").await;
    tui.press("Escape");
    tui.wait_for_text("Browsing transcript").await;
    // Keys reach the TUI in order: the pick moves before Enter takes it.
    tui.press("Left");
    tui.press("Enter");
    tui.wait_for_text("Conversation reverted to this point")
        .await;
    tui.wait_for_screen("the middle message back in the composer", |s| {
        composer_line(s).is_some_and(|line| line.contains("middle question about dates"))
    })
    .await;
    s.push(Reply::new().text("Dates are brown."));
    tui.type_text(" again");
    tui.press("Enter");
    wait_turn_done(&tui, "Dates are brown.").await;
    let requests = s.wait_for_requests(4).await;
    let input = serde_json::to_string(requests.last().expect("a request").input()).unwrap();
    assert!(input.contains("Figs are sweet."), "{input}");
    assert!(
        input.contains("middle question about dates again"),
        "{input}"
    );
    assert!(!input.contains("Dates are sticky."), "{input}");
    assert!(!input.contains("limes"), "{input}");
}
