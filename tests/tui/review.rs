//! The TUI's `/review` (`review/start`, docs/protocol.md §7.28) against Weft: the preset
//! "uncommitted changes" starts a review whose request names the working tree and carries the
//! diff, and the rendered review (its finding) shows on the screen.

use serde_json::json;
use weft_mock_model::Reply;

use crate::{Session, wait_idle};

#[tokio::test]
async fn review_of_uncommitted_changes_shows_the_findings() {
    let s = Session::start("on-request").await;
    std::fs::write(s.path("notes.txt"), "a line under review\n").unwrap();
    let answer = json!({
        "findings": [{
            "title": "Spell out the review line",
            "body": "The new line is vague.",
            "confidence_score": 0.7,
            "priority": 2,
            "code_location": {
                "absolute_file_path": s.path("notes.txt"),
                "line_range": {"start": 1, "end": 1}
            }
        }],
        "overall_correctness": "patch is correct",
        "overall_explanation": "Small and fine apart from one nit.",
        "overall_confidence_score": 0.6
    });
    s.push(Reply::new().text(answer.to_string()));
    let tui = s.ready_tui().await;
    tui.type_text("/review");
    tui.wait_for_text("/review").await;
    tui.press("Enter");
    tui.wait_for_text("Review uncommitted changes").await;
    // Move the selection to the preset, whatever its place in the list, and take it.
    for _ in 0..4 {
        let before = tui.screen();
        let selected = before
            .lines()
            .any(|line| line.contains('›') && line.contains("Review uncommitted changes"));
        if selected {
            break;
        }
        tui.press("Down");
        tui.wait_for_screen("the selection moved", |screen| screen != before)
            .await;
    }
    tui.press("Enter");
    let started = tui.wait_for_text("Code review started").await;
    assert!(started.contains("current changes"), "{started}");
    tui.wait_for_text("Spell out the review line").await;
    let screen = wait_idle(&tui).await;
    assert!(
        screen.contains("Small and fine apart from one nit."),
        "{screen}"
    );
    assert!(screen.contains("<< Code review finished >>"), "{screen}");
    // The reviewer's own JSON answer is not shown.
    assert!(!screen.contains("overall_correctness"), "{screen}");
    let requests = s.wait_for_requests(1).await;
    let asked = requests[0].message_texts("user").join("\n");
    assert!(asked.contains("not committed yet"), "{asked}");
    assert!(asked.contains("+a line under review"), "{asked}");
}
