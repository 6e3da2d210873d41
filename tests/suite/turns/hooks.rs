//! Stop hooks (`[[hooks.stop]]`, docs/architecture.md §6.4): a block records a `hookPrompt` item and
//! continues the same turn; a stop ends it; a broken hook is a `warning` and does not block.

use serde_json::Value;
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{Harness, Setup, TurnRun, collapse, user_texts};

/// A harness whose config has these stop hooks (name, script), in order.
async fn harness_with_hooks(transport: Transport, hooks: &[(&str, &str)]) -> Harness {
    let mut setup = Setup::new(transport);
    for (name, script) in hooks {
        setup = setup.stop_hook(name, script);
    }
    Harness::start(setup).await
}

/// Blocks twice (with a numbered reason), then allows; logs every stdin payload.
const BLOCK_TWICE: &str = r#"dir=$(dirname "$0")
payload=$(cat)
printf '%s\n' "$payload" >> "$dir/block_twice.inputs"
n=$(cat "$dir/block_twice.count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$dir/block_twice.count"
if [ "$n" -le 2 ]; then
  printf '{"decision":"block","reason":"keep going %s"}\n' "$n"
fi
"#;

/// One turn ("work", answered "done") on a new thread that the stop hooks let end:
/// completed, no hook prompt, one model request. The thread and the run.
async fn unblocked_turn(h: &mut Harness) -> (String, TurnRun) {
    let (thread, run) = h.thread_with_turn("done", "work").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    assert!(hook_prompts(&run).is_empty());
    assert_eq!(h.mock.requests().len(), 1);
    (thread, run)
}

fn hook_prompts(run: &TurnRun) -> Vec<Vec<String>> {
    run.completed_items_of("hookPrompt")
        .iter()
        .map(|item| {
            item["fragments"]
                .as_array()
                .expect("fragments")
                .iter()
                .map(|f| f["text"].as_str().expect("fragment text").to_owned())
                .collect()
        })
        .collect()
}

async fn stop_hook_blocks_twice_then_allows(transport: Transport) {
    let mut h = harness_with_hooks(transport, &[("block_twice", BLOCK_TWICE)]).await;
    h.push(Reply::new().text("first answer"));
    h.push(Reply::new().text("second answer"));
    let (thread, run) = h.thread_with_turn("third answer", "do the work").await;

    assert_eq!(run.completed_turn()["status"], "completed");
    assert_eq!(run.notifications("turn/started").len(), 1);
    assert_eq!(
        hook_prompts(&run),
        [
            vec!["keep going 1".to_owned()],
            vec!["keep going 2".to_owned()]
        ]
    );
    for item in run.completed_items_of("hookPrompt") {
        let run_id = item["fragments"][0]["hookRunId"]
            .as_str()
            .expect("hookRunId");
        assert!(!run_id.is_empty());
    }
    // agentMessage, hookPrompt, agentMessage, hookPrompt, agentMessage.
    let order: Vec<&str> = run
        .completed_items()
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        order,
        [
            "userMessage",
            "agentMessage",
            "hookPrompt",
            "agentMessage",
            "hookPrompt",
            "agentMessage"
        ]
    );
    assert_eq!(run.completed_turn()["items"][0]["text"], "third answer");

    // The model was asked three times; each follow-up carries the hook's prompt.
    let requests = h.wait_for_requests(3).await;
    assert_eq!(requests.len(), 3);
    let carries = |i: usize, text: &str| user_texts(&requests[i]).iter().any(|t| t.contains(text));
    assert!(!carries(0, "keep going"));
    assert!(carries(1, "keep going 1") && !carries(1, "keep going 2"));
    assert!(carries(2, "keep going 1") && carries(2, "keep going 2"));

    // What the hook saw: the turn, the last answer, and stop_hook_active after the first block.
    let inputs = std::fs::read_to_string(h.home.path().join("hooks/block_twice.inputs"))
        .expect("the hook logged its inputs");
    let inputs: Vec<Value> = inputs
        .lines()
        .map(|l| serde_json::from_str(l).expect("the hook got JSON on stdin"))
        .collect();
    assert_eq!(inputs.len(), 3, "{inputs:#?}");
    let active: Vec<&Value> = inputs.iter().map(|i| &i["stop_hook_active"]).collect();
    assert_eq!(active, [false, true, true]);
    let last: Vec<&Value> = inputs.iter().map(|i| &i["last_agent_message"]).collect();
    assert_eq!(last, ["first answer", "second answer", "third answer"]);
    for input in &inputs {
        assert_eq!(input["thread_id"], thread.as_str());
        assert_eq!(input["turn_id"], run.turn_id.as_str());
        assert_eq!(input["hook_event_name"], "Stop");
    }
}

on_both_transports!(stop_hook_blocks_twice_then_allows);

/// `{"continue":false}` ends the turn even though another hook blocks (stop wins, docs/architecture.md
/// §6.4): one model request, no hookPrompt item, the turn completes.
#[tokio::test]
async fn stop_hook_says_stop() {
    let mut h = harness_with_hooks(
        Transport::Stdio,
        &[
            (
                "always_block",
                r#"echo '{"decision":"block","reason":"never done"}'"#,
            ),
            ("stop", r#"echo '{"continue":false,"stopReason":"enough"}'"#),
        ],
    )
    .await;
    let (_, run) = unblocked_turn(&mut h).await;
    assert_eq!(run.completed_turn()["items"][0]["text"], "done");
}

/// A hook that prints something that is not JSON: a `warning` for the thread, no block.
#[tokio::test]
async fn stop_hook_with_invalid_json_warns() {
    let mut h =
        harness_with_hooks(Transport::Stdio, &[("garbage", "echo 'this is not json'")]).await;
    let (thread, run) = unblocked_turn(&mut h).await;
    let warnings = run.notifications("warning");
    assert_eq!(warnings.len(), 1, "{:#?}", run.messages);
    let warning = &warnings[0]["params"];
    assert_eq!(warning["threadId"], thread.as_str());
    let message = warning["message"].as_str().expect("warning message");
    assert!(
        message.contains("garbage.sh") && message.contains("invalid JSON"),
        "{message}"
    );
    // The warning comes while the turn runs, before it ends.
    assert_eq!(
        collapse(&run.labels())[collapse(&run.labels()).len() - 4..],
        [
            "thread/tokenUsage/updated",
            "warning",
            "thread/status/changed:idle",
            "turn/completed"
        ]
    );
}

/// A hook that fails (exit 1) or blocks without a reason: warnings, the turn still completes.
#[tokio::test]
async fn failing_and_reasonless_hooks_warn() {
    let mut h = harness_with_hooks(
        Transport::Stdio,
        &[
            ("fails", "echo oops >&2; exit 3"),
            ("no_reason", r#"echo '{"decision":"block"}'"#),
        ],
    )
    .await;
    let (_, run) = h.thread_with_turn("done", "work").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    assert_eq!(h.mock.requests().len(), 1);
    let messages: Vec<&str> = run
        .notifications("warning")
        .iter()
        .map(|w| w["params"]["message"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].contains("fails.sh") && messages[0].contains("exit code 3"),
        "{messages:?}"
    );
    assert!(messages[1].contains("no_reason.sh"), "{messages:?}");
}

/// `turn/interrupt` while a stop hook runs: the hook is killed, the turn ends `interrupted` at
/// once (the hook would run for 30 s), and the model is not asked again.
#[tokio::test]
async fn interrupt_while_a_stop_hook_runs() {
    let mut h = harness_with_hooks(Transport::Stdio, &[("slow", "exec sleep 30")]).await;
    h.push(Reply::new().text("done"));
    let thread = h.start_thread().await;
    let turn = h.start_turn(&thread, "work").await;
    // The model's answer is complete; the stop hooks run next.
    super::read_through(&mut h.client, |m| {
        m["method"] == "thread/tokenUsage/updated"
    })
    .await;
    let answer = h
        .client
        .request(
            "turn/interrupt",
            serde_json::json!({"threadId": thread, "turnId": turn}),
        )
        .await
        .expect("turn/interrupt");
    assert_eq!(answer, serde_json::json!({}));
    let messages = super::read_through_turn_completed(&mut h.client).await;
    let completed = messages.last().expect("turn/completed");
    assert_eq!(completed["params"]["turn"]["status"], "interrupted");
    assert!(hook_prompts_in(&messages).is_empty());
    assert_eq!(h.mock.requests().len(), 1);
}

fn hook_prompts_in(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["params"]["item"]["type"] == "hookPrompt")
        .collect()
}
