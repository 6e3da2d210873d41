//! `/model` against Weft (docs/protocol.md §7.34): the TUI lists the models, changes the
//! running thread's model with `thread/settings/update`, and saves the choice with
//! `config/batchWrite`, which keeps the comments of `config.toml`; after a daemon restart a new
//! TUI starts on the saved model.

use weft_test_support::Daemon;

use crate::{Session, wait_ready};

/// Notes the user keeps in Weft's config, which the TUI's write must not lose.
const NOTES: &str = "# My own notes: keep them.\n[limits]\nmax_connections = 8 # two editors\n";

#[tokio::test]
async fn model_choice_changes_the_thread_and_is_saved_across_a_restart() {
    let mut s = Session::start_with("on-request", NOTES).await;
    s.mock.set_models(["mock-model", "other-model"]);
    let tui = s.ready_tui().await;
    s.prompt(&tui, "First question", "First answer.").await;
    tui.type_text("/model");
    tui.wait_for_text("/model").await;
    tui.press("Enter");
    tui.wait_for_screen("the model picker with both models", |screen| {
        screen.contains("Select Model") && screen.contains("other-model")
    })
    .await;
    tui.press("Down");
    tui.press("Enter");
    tui.wait_for_text("Select Reasoning Level for other-model")
        .await;
    tui.press("Enter");
    tui.wait_for_text("Model changed to other-model").await;
    // Saved: the model line changed, the user's notes and comments did not.
    let saved = wait_for_config(&s, "model = \"other-model\"").await;
    assert!(saved.contains(NOTES), "the notes were lost:\n{saved}");
    assert!(
        !saved.contains("model = \"mock-model\""),
        "the old model is still there:\n{saved}"
    );
    // The running thread asks the new model from its next turn.
    s.prompt(&tui, "Second question", "Second answer.").await;
    let requests = s.wait_for_requests(2).await;
    assert_eq!(requests[0].body["model"], "mock-model");
    assert_eq!(requests[1].body["model"], "other-model");
    // After a restart a new TUI starts on the saved model.
    drop(tui);
    s.daemon.sigterm();
    s.daemon.wait_exit().await;
    s.daemon = Daemon::builder(&s.weft)
        .listen("ws://127.0.0.1:0")
        .current_dir(s.client.workspace())
        .start()
        .await;
    let tui = s.tui(&[]);
    wait_ready(&tui).await;
    tui.wait_for_screen("the saved model in the footer", |screen| {
        screen.contains("? for shortcuts") && screen.contains("other-model")
    })
    .await;
    s.prompt(&tui, "Third question", "Third answer.").await;
    let requests = s.wait_for_requests(3).await;
    assert_eq!(requests[2].body["model"], "other-model");
}

/// Weft's `config.toml` once it holds `needle` (the TUI writes it after its answer shows).
async fn wait_for_config(s: &Session, needle: &str) -> String {
    let path = s.weft.config_path();
    for _ in 0..100 {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains(needle) {
            return text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!(
        "config.toml never held {needle}:\n{}",
        std::fs::read_to_string(&path).unwrap()
    );
}
