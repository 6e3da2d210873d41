//! Start-up: the TUI connects, shows its composer and no error or warning caused by Weft, and
//! answers a first prompt; its title side request names the thread.

use crate::{MOCK_TITLE, Session, screen_problems, wait_idle, wait_ready};
use weft_mock_model::Reply;
use weft_test_support::Tui;

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
    if !problems.is_empty() {
        let warnings = read_warnings(&tui).await;
        panic!("the TUI shows problems: {problems:?}\n{screen}\n--- its warnings ---\n{warnings}");
    }
    let requests = s.wait_for_requests(1).await;
    assert_eq!(
        requests[0].message_texts("user").last().unwrap(),
        "Say hello"
    );
}

/// The texts of the warnings the footer counts (`⚠ N warnings · f2 to view`): F2 opens them,
/// → goes to the next one.
async fn read_warnings(tui: &Tui) -> String {
    tui.press("F2");
    let mut texts = Vec::new();
    let mut screen = tui.wait_for_text("Warnings ·").await;
    let count = screen
        .lines()
        .find_map(|l| {
            let rest = l.split("Warnings · ").nth(1)?;
            rest.split_whitespace().nth(2)?.parse::<usize>().ok()
        })
        .unwrap_or(1);
    for n in 1..=count {
        texts.push(screen.clone());
        if n < count {
            tui.press("Right");
            let next = format!("Warnings · {} of", n + 1);
            screen = tui.wait_for_text(&next).await;
        }
    }
    texts.join("\n---\n")
}
