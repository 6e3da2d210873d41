//! The approval overlays for commands and patches (Weft's `approval_policy = "untrusted"`:
//! every non-read-only command and every patch asks), and an `on-request` escalation: approve,
//! decline, approve for the session. The options are picked by their label, with the key the
//! overlay shows for them, so the test does not depend on their order; each key is pressed
//! once the overlay shows whole and has settled (tests/tui/overlay.rs).

use weft_mock_model::Reply;
use weft_test_support::Tui;

use crate::overlay::{COMMAND, Overlay, PATCH};
use crate::{Session, exec_call, patch_call, wait_idle, wait_turn_done};

/// A Weft session under `untrusted` whose model first runs `touch <file>`; returns once the
/// command overlay shows.
async fn command_overlay(file: &str) -> (Session, Tui, Overlay) {
    let s = Session::start("untrusted").await;
    let tui = s.ready_tui().await;
    s.push(exec_call("call_touch", &format!("touch {file}")));
    s.push(Reply::new().text("Done with the file."));
    tui.submit("Create the file").await;
    let overlay = COMMAND.wait(&tui).await;
    let screen = overlay.screen();
    assert!(screen.contains(&format!("touch {file}")), "{screen}");
    assert!(!s.path(file).exists(), "ran before the approval");
    (s, tui, overlay)
}

#[tokio::test]
async fn command_approved() {
    let (s, tui, overlay) = command_overlay("approved.txt").await;
    overlay.choose(&tui, "Yes, proceed").await;
    let screen = wait_turn_done(&tui, "Done with the file.").await;
    assert!(s.path("approved.txt").exists(), "not created:\n{screen}");
}

/// Pick "No" on `overlay` (asking `question`): once the TUI is idle the question is gone and
/// `file` was not written.
async fn decline(s: &Session, tui: &Tui, overlay: Overlay, question: &str, file: &str) {
    overlay.choose(tui, "No").await;
    let screen = wait_idle(tui).await;
    assert!(!screen.contains(question), "{screen}");
    assert!(!s.path(file).exists(), "{file} written although declined");
}

#[tokio::test]
async fn command_declined() {
    let (s, tui, overlay) = command_overlay("declined.txt").await;
    decline(&s, &tui, overlay, COMMAND.question, "declined.txt").await;
}

#[tokio::test]
async fn command_approved_for_session() {
    let (s, tui, overlay) = command_overlay("again.txt").await;
    overlay.choose(&tui, "don't ask again").await;
    wait_turn_done(&tui, "Done with the file.").await;
    std::fs::remove_file(s.path("again.txt")).unwrap();
    // The same command in the next turn runs without asking.
    s.push(exec_call("call_again", "touch again.txt"));
    s.push(Reply::new().text("Done once more."));
    tui.submit("Once more").await;
    let screen = tui.wait_for_text("Done once more.").await;
    assert!(
        screen.matches(COMMAND.question).count() == 0,
        "asked again:\n{screen}"
    );
    assert!(s.path("again.txt").exists());
}

const ADD_HELLO: &str =
    "*** Begin Patch\n*** Add File: hello.txt\n+hello from the patch\n*** End Patch\n";

/// A session under `untrusted` whose model first applies a patch adding `hello.txt`.
async fn patch_overlay() -> (Session, Tui, Overlay) {
    let s = Session::start("untrusted").await;
    let tui = s.ready_tui().await;
    s.push(patch_call("call_patch", ADD_HELLO));
    s.push(Reply::new().text("Done with the patch."));
    tui.submit("Add a hello file").await;
    let overlay = PATCH.wait(&tui).await;
    let screen = overlay.screen();
    assert!(screen.contains("hello.txt"), "{screen}");
    assert!(!s.path("hello.txt").exists(), "applied before the approval");
    (s, tui, overlay)
}

#[tokio::test]
async fn patch_approved() {
    let (s, tui, overlay) = patch_overlay().await;
    overlay.choose(&tui, "Yes, proceed").await;
    wait_turn_done(&tui, "Done with the patch.").await;
    assert_eq!(
        std::fs::read_to_string(s.path("hello.txt")).unwrap(),
        "hello from the patch\n"
    );
}

#[tokio::test]
async fn patch_declined() {
    let (s, tui, overlay) = patch_overlay().await;
    decline(&s, &tui, overlay, PATCH.question, "hello.txt").await;
}

#[tokio::test]
async fn patch_approved_for_session() {
    let (s, tui, overlay) = patch_overlay().await;
    overlay.choose(&tui, "don't ask again").await;
    wait_turn_done(&tui, "Done with the patch.").await;
    // A later patch to the same file applies without asking.
    let update = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello from the patch\n+hello again\n*** End Patch\n";
    s.push(patch_call("call_update", update));
    s.push(Reply::new().text("Patched once more."));
    tui.submit("Change the hello file").await;
    let screen = tui.wait_for_text("Patched once more.").await;
    assert_eq!(
        screen.matches(PATCH.question).count(),
        0,
        "asked again:\n{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(s.path("hello.txt")).unwrap(),
        "hello again\n"
    );
}

/// `on-request`: a command the model wants outside the sandbox asks, with its justification.
#[tokio::test]
async fn on_request_escalation_asks_with_the_reason() {
    let s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    s.push(
        Reply::new().function_call(
            "call_escalate",
            "exec_command",
            serde_json::json!({
                "cmd": "touch escalated.txt",
                "sandbox_permissions": "require_escalated",
                "justification": "The test wants it unsandboxed."
            })
            .to_string(),
        ),
    );
    s.push(Reply::new().text("Escalated and done."));
    tui.submit("Run it outside the sandbox").await;
    let overlay = COMMAND.wait(&tui).await;
    let screen = overlay.screen();
    assert!(
        screen.contains("The test wants it unsandboxed."),
        "{screen}"
    );
    overlay.choose(&tui, "Yes, proceed").await;
    tui.wait_for_text("Escalated and done.").await;
    assert!(s.path("escalated.txt").exists());
}
