//! `codex --remote unix://PATH` (the TUI's "Accepted forms: `ws://host:port`, `wss://host:port`,
//! `unix://`, or `unix://PATH`"): the TUI connects to Weft's control socket, shows its
//! composer and answers a prompt (docs/protocol.md §2.6).

use serde_json::json;
use weft_mock_model::{MockModel, Reply};
use weft_test_support::{ClientHome, Daemon, TestHome, Tui, mock_model_config};

use crate::{MOCK_TITLE, is_title_request, wait_ready, wait_turn_done};

#[tokio::test]
async fn the_tui_runs_a_turn_over_the_control_socket() {
    let mock = MockModel::start().await.expect("start the mock model");
    let title = json!({ "title": MOCK_TITLE }).to_string();
    mock.set_standing_reply(is_title_request, Reply::new().text(title).responses());
    let config = format!(
        "approval_policy = \"on-request\"\nsandbox_mode = \"workspace-write\"\n{}",
        mock_model_config(&mock.base_url(), "responses")
    );
    let weft = TestHome::with_config(&config);
    let client = ClientHome::new();
    let socket = weft.path().join("ctl").join("weft.sock");
    let url = format!("unix://{}", socket.display());
    let _daemon = Daemon::builder(&weft)
        .listen(&url)
        .current_dir(client.workspace())
        .start()
        .await;
    let tui = Tui::start(&client, &["--remote", &url]);
    wait_ready(&tui).await;
    tui.wait_for_text("mock-model").await;
    mock.push(
        Reply::new()
            .text("Hello over the control socket.")
            .responses(),
    );
    tui.submit("Say hello").await;
    wait_turn_done(&tui, "Hello over the control socket.").await;
}
