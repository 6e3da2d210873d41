//! The composer's `@` mention popup against Weft (docs/protocol.md §7.33): typing `@` and a
//! few letters searches the workspace (`fuzzyFileSearch/session*`, and `thread/search` for
//! threads), the matching file shows in the popup, and choosing it puts its path in the
//! composer. A file the workspace's `.gitignore` hides is never offered.

use crate::Session;

#[tokio::test]
async fn at_and_a_few_letters_show_the_matching_file() {
    let s = Session::start("on-request").await;
    std::fs::create_dir_all(s.path("src/widgets")).unwrap();
    std::fs::write(s.path("src/widgets/quokka_panel.rs"), "// a panel\n").unwrap();
    std::fs::write(s.path("README.md"), "# readme\n").unwrap();
    std::fs::write(s.path(".gitignore"), "hidden_quokka.log\n").unwrap();
    std::fs::write(s.path("hidden_quokka.log"), "ignored\n").unwrap();
    let tui = s.ready_tui().await;
    tui.type_text("@quokk");
    // The popup lists the file by name with its directory beside it.
    let screen = tui
        .wait_for_screen("the matching file in the mention popup", |screen| {
            screen.contains("Mentions")
                && screen
                    .lines()
                    .any(|l| l.contains("quokka_panel.rs") && l.contains("src/widgets/"))
        })
        .await;
    assert!(!screen.contains("hidden_quokka.log"), "{screen}");
    // Tab takes the highlighted match into the composer, as a path.
    tui.press("Tab");
    tui.wait_for_screen("the chosen path in the composer", |screen| {
        !screen.contains("Mentions")
            && weft_test_support::tui::composer_line(screen)
                .is_some_and(|line| line.contains("src/widgets/quokka_panel.rs"))
    })
    .await;
    let stderr = s.daemon.stderr();
    assert!(
        !stderr.contains("requires experimentalApi") && !stderr.contains("unknown variant"),
        "{stderr}"
    );
}
