//! `/permissions` against Weft (docs/protocol.md §7.34): the TUI's menu lists the built-in
//! profiles `permissionProfile/list` answers (no "does not support permission discovery"),
//! and the choice changes the running thread's sandbox.

use serde_json::json;

use crate::Session;

#[tokio::test]
async fn permissions_shows_the_profiles_and_the_choice_reaches_the_thread() {
    let mut s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    s.prompt(&tui, "Hello", "Hello back.").await;
    tui.type_text("/permissions");
    tui.wait_for_text("/permissions").await;
    tui.press("Enter");
    let screen = tui
        .wait_for_screen("the permissions menu", |screen| {
            screen.contains("Update Model Permissions") && screen.contains("Read Only")
        })
        .await;
    assert!(
        !screen.contains("does not support permission discovery"),
        "{screen}"
    );
    for option in ["Ask for approval", "Full Access", "Read Only"] {
        assert!(screen.contains(option), "no `{option}`:\n{screen}");
    }
    let problems = crate::screen_problems(&screen);
    assert!(problems.is_empty(), "{problems:?}\n{screen}");
    // Pick "Read Only": the thread's sandbox becomes read-only.
    let row = screen
        .lines()
        .find(|line| line.contains("Read Only"))
        .unwrap()
        .to_owned();
    if !row.trim_start().starts_with('›') {
        let number = row
            .trim_start()
            .trim_start_matches('›')
            .trim_start()
            .chars()
            .next()
            .unwrap();
        tui.type_text(&number.to_string());
    }
    tui.press("Enter");
    tui.wait_for_screen("the menu closed", |screen| {
        !screen.contains("Update Model Permissions")
    })
    .await;
    let mut client = s.daemon.initialized_client().await;
    let loaded = client
        .request("thread/loaded/list", json!({}))
        .await
        .unwrap();
    let thread = loaded["data"][0].as_str().unwrap().to_owned();
    let resumed = client
        .request("thread/resume", json!({"threadId": thread}))
        .await
        .unwrap();
    assert_eq!(resumed["sandbox"]["type"], "readOnly", "{resumed}");
}
