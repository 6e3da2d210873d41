//! The TUI's `!command` (the user's own shell command, `thread/shellCommand`,
//! docs/protocol.md §7.30) against Weft: the output shows, the thread's sandbox holds, and the
//! model reads it in the next turn.

use crate::{Session, wait_idle};

#[tokio::test]
async fn a_bang_command_shows_its_output_and_the_model_hears_of_it() {
    let s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    // `!` switches the composer to shell mode (it shows `! ` and the footer `Shell mode`).
    tui.type_text("!");
    tui.wait_for_text("Shell mode").await;
    tui.submit("echo bang-$((6*7)) | tee bang.txt").await;
    tui.wait_for_text("bang-42").await;
    wait_idle(&tui).await;
    // The TUI starts its threads read-only here (an untrusted project), and the user's command
    // runs under the thread's sandbox (docs/protocol.md §13): the output shows, the write is
    // refused.
    assert!(
        !s.path("bang.txt").exists(),
        "written under a read-only sandbox"
    );
    assert!(
        tui.screen()
            .contains("You ran echo bang-$((6*7)) | tee bang.txt")
    );
    // No approval was asked, and the model was not involved.
    let screen = tui.screen();
    assert!(
        !screen.contains("Would you like to run the following command?"),
        "{screen}"
    );

    s.prompt(&tui, "What did my command print?", "It printed bang-42.")
        .await;
    let requests = s.wait_for_requests(1).await;
    let users = requests[0].message_texts("user");
    let record = users
        .iter()
        .find(|text| text.starts_with("<user_shell_command>"))
        .unwrap_or_else(|| panic!("no shell record in the model's input: {users:?}"));
    assert!(
        record.contains("<command>\necho bang-$((6*7)) | tee bang.txt\n</command>"),
        "{record}"
    );
    // `tee` could not write under the read-only sandbox.
    assert!(record.contains("Exit code: 1\n"), "{record}");
    assert!(
        record.contains("tee: bang.txt: Permission denied\n"),
        "{record}"
    );
    // The login shell runs the profile first, which may print (docs/protocol.md §7.30).
    assert!(record.contains("bang-42\n\n</result>"), "{record}");
}
