//! Start-up: the TUI connects, shows its composer and no error or warning caused by Weft, and
//! answers a first prompt; its title side request names the thread.

use crate::{MOCK_TITLE, Session, screen_problems, wait_idle, wait_ready};
use weft_mock_model::Reply;

#[tokio::test]
async fn starts_clean_and_answers_a_prompt() {
    let s = Session::start("on-request").await;
    let tui = s.tui(&[]);
    wait_ready(&tui).await;
    // The footer names the model once `model/list` and `thread/start` are answered.
    let screen = tui.wait_for_text("mock-model").await;
    assert!(
        screen.contains(&s.client.workspace().display().to_string()),
        "the workspace is not shown"
    );
    s.push(Reply::new().text("Hello from the mock model."));
    tui.submit("Say hello").await;
    tui.wait_for_text("Hello from the mock model.").await;
    // The title side request renames the thread; the footer shows the name.
    let screen = tui.wait_for_text(MOCK_TITLE).await;
    let screen = if screen.contains("esc to interrupt") {
        wait_idle(&tui).await
    } else {
        screen
    };
    let problems = screen_problems(&screen);
    assert!(
        problems.is_empty(),
        "the TUI shows problems: {problems:?}\n{screen}"
    );
    let requests = s.wait_for_requests(1).await;
    assert_eq!(
        requests[0].message_texts("user").last().unwrap(),
        "Say hello"
    );
}
