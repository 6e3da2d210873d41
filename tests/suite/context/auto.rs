//! Automatic compaction (docs/architecture.md §9.2): mid-turn when a response puts the
//! window over the limit and the model needs a follow-up (the turn goes on, with the summary
//! before the last user message), and before a new turn when the window is already over the
//! limit (the new input comes after the summary).

use serde_json::json;
use weft_mock_model::{Reply, Usage};
use weft_test_support::Transport;

use super::{
    OVER_THE_LIMIT, Persist, answer, assert_compacted_conversation, assert_one_compaction_item,
    assert_summary_between, assert_summary_request, assistant, conversation, echo_hi,
    environment_contexts, input_kinds, label, position_of, push_answers, start, start_compacting,
    start_full_access_thread, summary_requests, user,
};
use crate::persistence::TurnRun;

/// A turn (`text`) that compacts on its way and answers `said`: checked to have completed,
/// with no error and one compaction item. The run, and the positions in its messages of the
/// turn's start and of the compaction's start and end.
async fn compacting_turn(
    p: &mut Persist,
    thread: &str,
    text: &str,
    said: &str,
) -> (TurnRun, [usize; 3]) {
    let run = p.run_turn(thread, text).await;
    let turn = run.completed_turn();
    assert_eq!(turn["status"], "completed", "{turn}");
    assert_eq!(turn["error"], serde_json::Value::Null);
    assert_eq!(run.completed_items_of("agentMessage")[0]["text"], said);
    let messages = &run.messages;
    let (started, completed) = assert_one_compaction_item(messages, &run.turn_id);
    let turn_started = position_of(messages, "turn/started", |m| m["method"] == "turn/started");
    (run, [turn_started, started, completed])
}

/// A long conversation crosses the limit in the middle of a turn: the response that calls a
/// tool reports more tokens than the limit, so after the tool ran Weft asks for a summary
/// (once), rebuilds the history and finishes the turn from the compacted history.
async fn mid_turn_compaction_finishes_the_turn(transport: Transport) {
    const SUMMARY: &str = "SUMMARY-MID: two questions so far; `echo hi` printed hi.";
    let mut p = start(transport).await;
    p.push(answer("first answer", 300, 20));
    p.push(echo_hi(5_000, 100));
    push_answers(
        &p,
        &[
            (SUMMARY, 5_200, 60),
            ("second answer", 400, 20),
            ("third answer", 450, 20),
        ],
    );
    let thread = start_full_access_thread(&mut p).await;

    let first = p.run_turn(&thread, "first question").await;
    assert_eq!(first.completed_turn()["status"], "completed");
    assert!(super::compaction_events(&first.messages).is_empty());

    let (second, [turn_started, started, completed]) =
        compacting_turn(&mut p, &thread, "second question", "second answer").await;
    let messages = &second.messages;
    let command_done = position_of(messages, "the command's item/completed", |m| {
        m["method"] == "item/completed" && m["params"]["item"]["id"] == "call_echo"
    });
    let answer_started = position_of(messages, "the answer's item/started", |m| {
        m["method"] == "item/started" && m["params"]["item"]["type"] == "agentMessage"
    });
    assert!(
        turn_started < command_done
            && command_done < started
            && started < completed
            && completed < answer_started
            && answer_started < messages.len() - 1,
        "the compaction runs inside the turn, after the tool and before the answer: {:?}",
        messages.iter().map(label).collect::<Vec<_>>()
    );
    assert_eq!(
        second.completed_items_of("commandExecution")[0]["status"],
        "completed"
    );

    let requests = p.wait_for_requests(4).await;
    assert_eq!(requests.len(), 4, "one summary request, then the follow-up");
    // Request 2 sampled the turn; request 3 asks for the summary of everything so far.
    let summary_request = &requests[2];
    assert_summary_request(summary_request);
    assert!(!requests[1].tools().is_empty(), "the turn offers tools");
    let history = conversation(summary_request);
    assert_eq!(
        history[..history.len() - 1],
        [
            user("first question"),
            assistant("first answer"),
            user("second question")
        ],
        "the summary request carries the history as it was"
    );
    assert!(
        summary_request.tool_output("call_echo").is_some(),
        "the summary request carries the tool's output"
    );

    // Request 4 continues the turn from the compacted history: the old answer and the tool
    // round are gone, the summary sits just before the last user message.
    let follow_up = &requests[3];
    assert!(!super::is_summary_request(follow_up));
    assert!(
        !follow_up.tools().is_empty(),
        "the follow-up offers tools again"
    );
    assert_summary_between(follow_up, "first question", "second question", SUMMARY);
    assert_eq!(follow_up.inputs_of_type("function_call").count(), 0);
    assert_eq!(follow_up.inputs_of_type("function_call_output").count(), 0);
    let contexts = environment_contexts(follow_up);
    assert_eq!(
        contexts.len(),
        1,
        "the compacted history has the environment context in full, once: {:#?}",
        input_kinds(follow_up)
    );
    assert!(contexts[0].contains("<cwd>"), "{}", contexts[0]);
    assert!(
        contexts[0].contains("<approval_policy>never</approval_policy>"),
        "{}",
        contexts[0]
    );

    // The window is back under the limit: the next turn does not compact again.
    let third = p.run_turn(&thread, "third question").await;
    assert_eq!(third.completed_turn()["status"], "completed");
    assert!(super::compaction_events(&third.messages).is_empty());
    let requests = p.wait_for_requests(5).await;
    assert_eq!(requests.len(), 5);
    assert_eq!(summary_requests(&requests), 1, "compacted once");
    assert_compacted_conversation(
        &conversation(&requests[4]),
        &[
            Some(user("first question")),
            None,
            Some(user("second question")),
            Some(assistant("second answer")),
            Some(user("third question")),
        ],
        SUMMARY,
    );
}

/// The window is already over the limit when a turn starts: Weft compacts first (the summary
/// request does not carry the new input), then records the input after the summary and samples.
async fn new_turn_over_the_limit_compacts_first(transport: Transport) {
    const SUMMARY: &str = "SUMMARY-PRE: the user asked a first question.";
    // A reply with no follow-up leaves the window over the limit without compacting.
    let replies = ["first answer", SUMMARY, "second answer"];
    let (mut p, thread) = start_compacting(transport, replies, OVER_THE_LIMIT).await;

    let first = p.run_turn(&thread, "first question").await;
    assert_eq!(first.completed_turn()["status"], "completed");
    assert!(
        super::compaction_events(&first.messages).is_empty(),
        "no follow-up needed: no compaction mid-turn"
    );
    assert_eq!(p.wait_for_requests(1).await.len(), 1);

    let (second, [turn_started, started, completed]) =
        compacting_turn(&mut p, &thread, "second question", "second answer").await;
    let messages = &second.messages;
    let user_started = position_of(messages, "the userMessage's item/started", |m| {
        m["method"] == "item/started" && m["params"]["item"]["type"] == "userMessage"
    });
    assert!(
        turn_started < started && started < completed && completed < user_started,
        "the compaction comes first in the turn: {:?}",
        messages.iter().map(label).collect::<Vec<_>>()
    );

    let requests = p.wait_for_requests(3).await;
    assert_eq!(requests.len(), 3);
    let summary_request = &requests[1];
    assert_summary_request(summary_request);
    let history = conversation(summary_request);
    assert_eq!(
        history[..history.len() - 1],
        [user("first question"), assistant("first answer")],
        "the summary request comes before the new input joins the history"
    );
    assert_summary_between(&requests[2], "first question", "second question", SUMMARY);
    assert_eq!(summary_requests(&requests), 1);
}

/// The same mid-turn compaction over the Chat Completions wire API (local servers, the main
/// users of local compaction): the summary request is a chat request with the compaction
/// prompt as the last user message and no tools, and the turn finishes from the summary.
#[tokio::test]
async fn mid_turn_compaction_over_chat_completions() {
    const SUMMARY: &str = "SUMMARY-CHAT: the user wants hi echoed.";
    let mock = weft_mock_model::MockModel::start()
        .await
        .expect("start the mock model");
    let home = weft_test_support::TestHome::with_config(&format!(
        "model_context_window = {}\nmodel_auto_compact_token_limit = {}\n{}",
        super::WINDOW,
        super::LIMIT,
        weft_test_support::mock_model_config(&mock.base_url(), "chat")
    ));
    let (daemon, client) = crate::persistence::launch(Transport::Stdio, &home).await;
    let mut p = super::Persist {
        mock,
        home,
        transport: Transport::Stdio,
        daemon,
        client,
    };
    p.mock.push(echo_hi(5_000, 100).chat());
    p.mock.push(
        Reply::new()
            .text(SUMMARY)
            .usage(Usage::new(5_100, 40))
            .chat(),
    );
    p.mock.push(
        Reply::new()
            .text("It printed hi.")
            .usage(Usage::new(300, 20))
            .chat(),
    );
    let thread = start_full_access_thread(&mut p).await;
    let run = p.run_turn(&thread, "echo hi please").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    assert_one_compaction_item(&run.messages, &run.turn_id);
    assert_eq!(
        run.completed_items_of("agentMessage")[0]["text"],
        "It printed hi."
    );

    let requests = p.wait_for_requests(3).await;
    assert_eq!(requests.len(), 3);
    assert!(
        requests
            .iter()
            .all(|r| r.path.ends_with("/chat/completions"))
    );
    assert!(!requests[0].tools().is_empty());
    let summary_request = &requests[1];
    let last = summary_request.messages().last().expect("messages");
    assert_eq!(last["role"], "user");
    let last_text = match &last["content"] {
        serde_json::Value::String(text) => text.clone(),
        other => super::message_text(&json!({ "content": other })),
    };
    assert_eq!(last_text, super::COMPACT_PROMPT);
    assert!(summary_request.tools().is_empty(), "no tools");
    assert!(
        summary_request
            .messages()
            .iter()
            .any(|m| m["role"] == "tool"),
        "the summary request carries the tool's output"
    );

    let follow_up = &requests[2];
    assert!(!follow_up.tools().is_empty());
    assert!(!follow_up.messages().iter().any(|m| m["role"] == "tool"));
    // On Chat the user messages in a row (the environment, the summary, the prompt) are one
    // message (roles merged, docs/architecture.md §7.3).
    let users = crate::turns::user_texts(follow_up);
    assert_eq!(users.len(), 1, "{users:#?}");
    let summary_at = users[0].find(SUMMARY).expect("the summary");
    assert!(summary_at > 0, "the summary has its prefix: {users:#?}");
    assert!(
        users[0].ends_with(&format!("{SUMMARY}\n\necho hi please")),
        "{users:#?}"
    );
}

on_both_transports!(
    mid_turn_compaction_finishes_the_turn,
    new_turn_over_the_limit_compacts_first,
);
