//! Issue 6, the context window: token accounting, automatic compaction (mid-turn and before a
//! turn), manual compaction (`thread/compact/start`), the reasoning boundary, environment-context
//! diffs and resume after a compaction, end to end (the real daemon, the scripted mock model
//! with scripted usage numbers). See `docs/protocol.md` §5 and §7.12 and
//! `docs/architecture.md` §9.
//!
//! Every test configures a small auto-compaction limit ([`LIMIT`] tokens, in a large window),
//! so a reply that reports more tokens than that puts the thread over the limit. A compaction
//! shows up at the mock as a *summary request*: the history, then Weft's compaction prompt as
//! the last user message, with no tools. Tests wait on notifications and on the mock's request
//! log, never on sleeps.

mod auto;
mod failure;
mod manual;
mod request;
mod resume;

use serde_json::{Value, json};
use weft_mock_model::{RecordedRequest, Reply, Usage};
use weft_test_support::{Client, Transport};

pub use crate::persistence::{
    Persist, answer, assistant, conversation, item_types, ok, read, turns, user,
};
pub use crate::turns::{
    INVALID_REQUEST, label, read_through, read_through_turn_completed, str_at, text_input,
    turn_start_params, wait_gate,
};

/// The auto-compaction limit the tests configure.
pub const LIMIT: u64 = 2_000;

/// The context window the tests configure (large: the limit is [`LIMIT`], not 90% of it).
pub const WINDOW: u64 = 200_000;

/// Weft's compaction prompt: the last user message of every summary request.
pub const COMPACT_PROMPT: &str = include_str!("../../core/src/prompts/compact.md");

/// A mock model and a daemon whose `config.toml` sets `model_context_window` = [`WINDOW`] and
/// `model_auto_compact_token_limit` = [`LIMIT`].
pub async fn start(transport: Transport) -> Persist {
    Persist::with_config(
        transport,
        &format!("model_context_window = {WINDOW}\nmodel_auto_compact_token_limit = {LIMIT}\n"),
    )
    .await
}

/// Queue one [`answer`] per `(text, input tokens, output tokens)`, in order.
pub fn push_answers(p: &Persist, answers: &[(&str, i64, i64)]) {
    for (text, input, output) in answers {
        p.push(answer(*text, *input, *output));
    }
}

/// [`start`] with [`push_answers`] queued, and one thread started: the harness and the thread.
async fn start_answering(transport: Transport, answers: &[(&str, i64, i64)]) -> (Persist, String) {
    let mut p = start(transport).await;
    push_answers(&p, answers);
    let thread = p.start_thread().await;
    (p, thread)
}

/// The usage (input, output tokens) of an answer, a summary and an answer that all leave the
/// window under [`LIMIT`]: nothing compacts unless asked to.
pub const UNDER_THE_LIMIT: [(i64, i64); 3] = [(100, 10), (120, 30), (90, 10)];

/// The usage of an answer that puts the window over [`LIMIT`] (with no follow-up, so nothing
/// compacts mid-turn), then of the summary and of an answer back under it.
pub const OVER_THE_LIMIT: [(i64, i64); 3] = [(5_000, 100), (5_100, 40), (300, 20)];

/// [`start_answering`] with a compaction between two turns: `[answer, summary, answer]`, the
/// replies in order (the summary answers the summary request), reporting `usage`
/// ([`UNDER_THE_LIMIT`] or [`OVER_THE_LIMIT`]).
pub async fn start_compacting(
    transport: Transport,
    replies: [&str; 3],
    usage: [(i64, i64); 3],
) -> (Persist, String) {
    let answers: Vec<_> = (replies.into_iter().zip(usage))
        .map(|(text, (input, output))| (text, input, output))
        .collect();
    start_answering(transport, &answers).await
}

/// A reply calling `exec_command` with `echo hi` (`call_echo`), reporting this usage.
pub fn echo_hi(input: i64, output: i64) -> Reply {
    let arguments = json!({"cmd": "echo hi"}).to_string();
    Reply::new()
        .function_call("call_echo", "exec_command", arguments)
        .usage(Usage::new(input, output))
}

/// `thread/start` in the home folder with approval `never` and sandbox `danger-full-access`
/// (so a harmless `exec_command` runs without a sandbox or an approval).
pub async fn start_full_access_thread(p: &mut Persist) -> String {
    let cwd = p.cwd();
    crate::tools::start_thread(&mut p.client, &cwd, "never", "danger-full-access").await
}

/// Whether `request` is a summary request: its last input item is a user message with
/// exactly Weft's compaction prompt.
pub fn is_summary_request(request: &RecordedRequest) -> bool {
    request.input().last().is_some_and(|item| {
        item["type"] == "message" && item["role"] == "user" && message_text(item) == COMPACT_PROMPT
    })
}

/// Check that `request` is a summary request: the compaction prompt last, no tools, no
/// parallel tool calls.
pub fn assert_summary_request(request: &RecordedRequest) {
    assert!(
        is_summary_request(request),
        "not a summary request (the last input item is not the compaction prompt): {:#?}",
        request.input().last()
    );
    assert!(
        request.tools().is_empty(),
        "a summary request offers no tools: {:#?}",
        request.tools()
    );
    assert_ne!(
        request.body["parallel_tool_calls"], true,
        "a summary request without tools asks for parallel tool calls"
    );
}

/// The number of summary requests among `requests`.
pub fn summary_requests(requests: &[RecordedRequest]) -> usize {
    requests.iter().filter(|r| is_summary_request(r)).count()
}

/// The text parts of a message item, joined.
pub fn message_text(item: &Value) -> String {
    item["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect::<String>()
        })
        .unwrap_or_default()
}

/// The user-message texts of a request that are environment contexts, in order.
pub fn environment_contexts(request: &RecordedRequest) -> Vec<String> {
    request
        .message_texts("user")
        .into_iter()
        .filter(|text| text.starts_with("<environment_context>"))
        .collect()
}

/// The summary message of a compacted history: a user message that carries `summary` after
/// Weft's checkpoint prefix.
pub fn summary_message(summary: &str) -> impl Fn(&(String, String)) -> bool + '_ {
    move |(role, text)| role == "user" && text.ends_with(summary) && text.len() > summary.len()
}

/// Check a conversation (as [`conversation`] gives it) against an expected list where the one
/// `None` stands for the summary message carrying `summary`.
pub fn assert_compacted_conversation(
    got: &[(String, String)],
    expected: &[Option<(String, String)>],
    summary: &str,
) {
    let matches = got.len() == expected.len()
        && got.iter().zip(expected).all(|(got, want)| match want {
            Some(want) => got == want,
            None => summary_message(summary)(got),
        });
    assert!(
        matches,
        "the compacted conversation differs.\n got: {got:#?}\nwant: {expected:#?} (None = the \
         summary message ending with {summary:?})"
    );
}

/// Check that `request`'s conversation is the user's `before`, the summary message carrying
/// `summary`, then the user's `after`.
pub fn assert_summary_between(request: &RecordedRequest, before: &str, after: &str, summary: &str) {
    let expected = [Some(user(before)), None, Some(user(after))];
    assert_compacted_conversation(&conversation(request), &expected, summary);
}

/// The types of the input items of a request, in order (`message:<role>` for messages).
pub fn input_kinds(request: &RecordedRequest) -> Vec<String> {
    request
        .input()
        .iter()
        .map(|item| match item["type"].as_str() {
            Some("message") => format!("message:{}", item["role"].as_str().unwrap_or("?")),
            Some(kind) => kind.to_owned(),
            None => "?".to_owned(),
        })
        .collect()
}

/// `thread/compact/start`, then every message through the compaction turn's `turn/completed`
/// (the response included, in arrival order). Returns the messages and the compaction turn's
/// id (from its `turn/started`).
pub async fn compact(client: &mut Client, thread: &str) -> (Vec<Value>, String) {
    let id = client
        .send_request("thread/compact/start", json!({"threadId": thread}))
        .await;
    let mut messages = Vec::new();
    let mut compact_turn: Option<String> = None;
    let mut answered = false;
    loop {
        let msg = client.next_message().await;
        if msg.get("id") == Some(&id) && msg.get("method").is_none() {
            assert_eq!(
                msg.get("result"),
                Some(&json!({})),
                "thread/compact/start answers {{}}: {msg}"
            );
            answered = true;
        }
        if msg["method"] == "turn/started" && answered {
            compact_turn = Some(str_at(&msg, "/params/turn/id"));
        }
        let done = msg["method"] == "turn/completed"
            && compact_turn
                .as_deref()
                .is_some_and(|turn| msg["params"]["turn"]["id"] == turn);
        messages.push(msg);
        if done {
            let turn = compact_turn.unwrap_or_default();
            return (messages, turn);
        }
    }
}

/// The `item/started` / `item/completed` notifications of `contextCompaction` items.
pub fn compaction_events(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| {
            (m["method"] == "item/started" || m["method"] == "item/completed")
                && m["params"]["item"]["type"] == "contextCompaction"
        })
        .collect()
}

/// Check that `messages` (one turn's) hold exactly one `contextCompaction` item, started then
/// completed with the same id, in turn `turn`; returns the positions of its start and end.
pub fn assert_one_compaction_item(messages: &[Value], turn: &str) -> (usize, usize) {
    let events = compaction_events(messages);
    let labels: Vec<String> = events.iter().map(|m| label(m)).collect();
    assert_eq!(
        labels,
        [
            "item/started:contextCompaction",
            "item/completed:contextCompaction"
        ],
        "one contextCompaction item, started then completed"
    );
    let id = str_at(events[0], "/params/item/id");
    assert!(!id.is_empty());
    assert_eq!(events[1]["params"]["item"]["id"], id.as_str(), "same id");
    for event in &events {
        assert_eq!(event["params"]["turnId"], turn, "in the turn: {event}");
    }
    let at = |method: &str| {
        messages
            .iter()
            .position(|m| m["method"] == method && m["params"]["item"]["id"] == id.as_str())
            .expect("the compaction event")
    };
    (at("item/started"), at("item/completed"))
}

/// The position of the first message matching `pred`; panics naming `what`.
pub fn position_of(messages: &[Value], what: &str, pred: impl Fn(&Value) -> bool) -> usize {
    messages.iter().position(pred).unwrap_or_else(|| {
        let labels: Vec<String> = messages.iter().map(label).collect();
        panic!("no {what}: {labels:?}")
    })
}
