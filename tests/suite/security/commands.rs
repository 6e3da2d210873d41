//! The model's commands: the `untrusted` policy cannot be talked past with shell expansions
//! (scripts are read with a real bash parser). See `docs/protocol.md` §9.

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::Transport;

use crate::tools::{Tools, answer, cmd, exec_call, read_through_turn_completed, wait_request};

const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";

/// The exploit of issue 11: `${x:=…}` assigns a string holding a command substitution and
/// `${x@P}` expands it as a prompt string, which runs it. It must ask first.
#[tokio::test]
async fn shell_expansions_ask_under_untrusted() {
    let mut t = Tools::start(Transport::Stdio).await;
    let marker = t.path("PWNED");
    let exploit = format!(
        "echo ${{x:='$(touch {})'}} ; echo ${{x@P}}",
        marker.display()
    );
    t.push(exec_call("call_exploit", cmd(&exploit)));
    let thread = t.thread("untrusted", "danger-full-access").await;
    t.h.start_turn(&thread, "look around").await;
    let request = wait_request(&mut t.h.client, COMMAND_APPROVAL).await;
    assert_eq!(request["params"]["itemId"], "call_exploit");
    assert!(!marker.exists(), "the command ran before the approval");
    t.push(Reply::new().text("Understood."));
    answer(&mut t.h.client, &request, json!({"decision": "decline"})).await;
    let messages = read_through_turn_completed(&mut t.h.client).await;
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    assert!(!marker.exists(), "a declined command ran");
    t.finish().await;
}
