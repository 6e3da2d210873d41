//! `thread/shellCommand` (docs/protocol.md §7.30): the user's own command with its shell
//! syntax, as a turn of its own on an idle thread and inside the running turn otherwise; its
//! `commandExecution` item (`source: userShell`) and output deltas; the record the model reads
//! next turn; timeouts, an interrupt, bad params, and the item after a restart.

use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{Gate, RecordedRequest, Reply};
use weft_test_support::{Client, RpcError, Transport};

use crate::persistence::Persist;
use crate::tools::{Tools, processes_in};
use crate::turns::{
    INVALID_REQUEST, gated_message, label, read_through, read_through_turn_completed, str_at,
    user_texts, wait_gate,
};

/// Pipes, a redirection, both output streams, and quoting.
const PIPELINE: &str = "echo 'hi there' | tr a-z A-Z > out.txt; cat out.txt; echo err >&2";

/// `thread/shellCommand` on `client` (it must be accepted: `{}`).
async fn shell(client: &mut Client, thread: &str, command: &str, timeout_ms: Option<i64>) {
    let mut params = json!({"threadId": thread, "command": command});
    if let Some(ms) = timeout_ms {
        params["timeoutMs"] = json!(ms);
    }
    let result = client
        .request("thread/shellCommand", params)
        .await
        .unwrap_or_else(|err| panic!("thread/shellCommand failed: {err}"));
    assert_eq!(result, json!({}));
}

/// Check that a command printed `expected` last: a login shell runs the user's profile first,
/// and a profile may print (this machine's tries to rehash pyenv under the sandbox and says it
/// cannot).
fn printed(output: &Value, expected: &str) {
    let text = output
        .as_str()
        .unwrap_or_else(|| panic!("no output: {output}"));
    assert!(
        text.ends_with(expected),
        "{text:?} does not end with {expected:?}"
    );
}

/// The one `commandExecution` item completed in `messages`.
fn command_item(messages: &[Value]) -> &Value {
    let items: Vec<&Value> = messages
        .iter()
        .filter(|m| {
            m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
        })
        .map(|m| &m["params"]["item"])
        .collect();
    assert_eq!(items.len(), 1, "{messages:?}");
    items[0]
}

/// The `aggregatedOutput` of the one `commandExecution` item completed in `messages`.
fn item_output(messages: &[Value]) -> Value {
    command_item(messages)["aggregatedOutput"].clone()
}

/// The `<user_shell_command>` messages a model request carried.
fn shell_records(request: &RecordedRequest) -> Vec<String> {
    user_texts(request)
        .into_iter()
        .filter(|text| text.starts_with("<user_shell_command>"))
        .collect()
}

async fn a_pipeline_runs_in_its_own_turn_and_the_model_reads_it_next(transport: Transport) {
    let mut t = Tools::start(transport).await;
    let thread = t.thread("never", "workspace-write").await;
    shell(&mut t.h.client, &thread, PIPELINE, None).await;
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let labels: Vec<String> = messages
        .iter()
        .map(label)
        .filter(|l| l != "item/commandExecution/outputDelta")
        .collect();
    assert_eq!(
        labels,
        [
            "thread/status/changed:active",
            "turn/started",
            "item/started:commandExecution",
            "item/completed:commandExecution",
            "thread/status/changed:idle",
            "turn/completed"
        ]
    );
    let turn_id = str_at(&messages[1], "/params/turn/id");
    let started = &messages[2]["params"]["item"];
    assert_eq!(started["source"], "userShell");
    assert_eq!(started["status"], "inProgress");
    t.assert_command(started, &PIPELINE.replace('\'', r#"'"'"'"#));
    assert!(
        started["command"].as_str().unwrap().contains(" -lc '"),
        "a login shell: {started}"
    );
    assert_eq!(
        started["commandActions"],
        json!([{"type": "unknown", "command": PIPELINE}])
    );
    // The output streams as deltas of the item, in the turn.
    let streamed: String = messages
        .iter()
        .filter(|m| m["method"] == "item/commandExecution/outputDelta")
        .map(|m| {
            assert_eq!(m["params"]["itemId"], started["id"]);
            assert_eq!(m["params"]["turnId"], turn_id.as_str());
            m["params"]["delta"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        json!(streamed),
        item_output(&messages),
        "the deltas add up to the output"
    );
    let item = command_item(&messages);
    assert_eq!(item["id"], started["id"]);
    assert_eq!(item["status"], "completed");
    assert_eq!(item["exitCode"], 0);
    printed(&item["aggregatedOutput"], "HI THERE\nerr\n");
    assert!(item["durationMs"].as_i64().unwrap() >= 0);
    let completed = &messages.last().unwrap()["params"]["turn"];
    assert_eq!(completed["id"], turn_id.as_str());
    assert_eq!(completed["status"], "completed");
    assert_eq!(t.read("out.txt"), "HI THERE\n");
    assert!(t.h.mock.requests().is_empty(), "the model was not asked");

    // The next turn's request tells the model what the user ran, once.
    t.push(Reply::new().text("You upper-cased a greeting."));
    let run = t.h.run_turn(&thread, "what did I just do?").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = t.h.wait_for_requests(1).await;
    let records = shell_records(&requests[0]);
    assert_eq!(records.len(), 1, "{records:?}");
    let head = format!(
        "<user_shell_command>\n<command>\n{PIPELINE}\n</command>\n<result>\nExit code: 0\n\
         Duration: {} seconds\nOutput:\n",
        duration_in(&records[0])
    );
    assert!(records[0].starts_with(&head), "{}", records[0]);
    assert!(
        records[0].ends_with("HI THERE\nerr\n\n</result>\n</user_shell_command>"),
        "{}",
        records[0]
    );
    t.finish().await;
}

/// The `Duration:` value of a record (its digits vary).
fn duration_in(record: &str) -> String {
    let line = record
        .lines()
        .find(|l| l.starts_with("Duration: "))
        .expect("a duration line");
    let value = line["Duration: ".len()..].trim_end_matches(" seconds");
    assert!(value.parse::<f64>().is_ok(), "{line}");
    value.to_string()
}

async fn a_timeout_kills_the_command_and_zero_times_out_at_once(transport: Transport) {
    let mut t = Tools::start(transport).await;
    let thread = t.thread("never", "workspace-write").await;
    shell(
        &mut t.h.client,
        &thread,
        "echo before; sleep 30",
        Some(3000),
    )
    .await;
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let item = command_item(&messages);
    assert_eq!(item["status"], "failed");
    assert_eq!(item["exitCode"], -1);
    printed(
        &item["aggregatedOutput"],
        "before\ncommand timed out after 3000 ms",
    );
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    assert!(
        gone_from(&t).await,
        "the timed-out command is still running"
    );

    // Zero is an immediate timeout, not "no timeout": nothing runs.
    shell(&mut t.h.client, &thread, "touch ran", Some(0)).await;
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let item = command_item(&messages);
    assert_eq!(item["status"], "failed");
    assert_eq!(item["aggregatedOutput"], "command timed out after 0 ms");
    assert!(!t.path("ran").exists());

    t.push(Reply::new().text("Both timed out."));
    t.h.run_turn(&thread, "how did they go?").await;
    let records = shell_records(&t.h.wait_for_requests(1).await[0]);
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(
        records[0].contains("Exit code: -1\n")
            && records[0].contains("before\ncommand timed out after 3000 ms\n</result>"),
        "{}",
        records[0]
    );
    assert!(records[1].contains("<command>\ntouch ran\n</command>"));
    t.finish().await;
}

/// Whether nothing is left running in the workspace (within two seconds).
async fn gone_from(t: &Tools) -> bool {
    for _ in 0..40 {
        if processes_in(&t.ws).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

async fn an_interrupt_kills_a_long_command(transport: Transport) {
    let mut t = Tools::start(transport).await;
    let thread = t.thread("never", "workspace-write").await;
    shell(&mut t.h.client, &thread, "echo start; sleep 30", None).await;
    let before = read_through(&mut t.h.client, |m| {
        m["method"] == "item/commandExecution/outputDelta"
    })
    .await;
    let turn = before
        .iter()
        .find(|m| m["method"] == "turn/started")
        .map(|m| str_at(m, "/params/turn/id"))
        .expect("turn/started before the output");
    assert!(!processes_in(&t.ws).is_empty(), "the command runs");
    let answer =
        t.h.client
            .request(
                "turn/interrupt",
                json!({"threadId": thread, "turnId": turn}),
            )
            .await
            .expect("turn/interrupt");
    assert_eq!(answer, json!({}));
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let item = command_item(&messages);
    assert_eq!(item["status"], "failed");
    assert_eq!(item["exitCode"], -1);
    assert_eq!(item["aggregatedOutput"], "command aborted by user");
    let completed = &messages.last().unwrap()["params"]["turn"];
    assert_eq!(completed["id"], turn.as_str());
    assert_eq!(completed["status"], "interrupted");
    assert!(
        gone_from(&t).await,
        "the interrupted command is still running"
    );

    t.push(Reply::new().text("It was interrupted."));
    t.h.run_turn(&thread, "and?").await;
    let request = &t.h.wait_for_requests(1).await[0];
    let records = shell_records(request);
    assert_eq!(records.len(), 1);
    assert!(
        records[0].contains("Exit code: -1\n")
            && records[0].contains("Output:\ncommand aborted by user\n"),
        "{}",
        records[0]
    );
    t.finish().await;
}

async fn while_a_turn_runs_the_command_runs_inside_it(transport: Transport) {
    let mut t = Tools::start(transport).await;
    let gate = Gate::new();
    t.push(gated_message("msg_slow", "Thinking", &gate, " done."));
    t.push(Reply::new().text("I see you listed a file."));
    let thread = t.thread("never", "workspace-write").await;
    t.write("seen.txt", "x");
    let turn = t.h.start_turn(&thread, "take your time").await;
    read_through(&mut t.h.client, |m| {
        m["method"] == "item/agentMessage/delta"
    })
    .await;
    wait_gate(&gate).await;

    shell(&mut t.h.client, &thread, "ls | grep seen", None).await;
    let messages = read_through(&mut t.h.client, |m| {
        m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
    })
    .await;
    assert!(
        messages.iter().all(|m| m["method"] != "turn/started"),
        "no turn of its own: {messages:?}"
    );
    let item = command_item(&messages);
    assert_eq!(item["source"], "userShell");
    assert_eq!(item["status"], "completed");
    printed(&item["aggregatedOutput"], "seen.txt\n");
    let completed = messages.last().unwrap();
    assert_eq!(completed["params"]["turnId"], turn.as_str());

    gate.release();
    let rest = read_through_turn_completed(&mut t.h.client).await;
    let ended = &rest.last().unwrap()["params"]["turn"];
    assert_eq!(ended["id"], turn.as_str());
    assert_eq!(ended["status"], "completed");
    // The item is one of that turn's.
    let read =
        t.h.client
            .request(
                "thread/read",
                json!({"threadId": thread, "includeTurns": true}),
            )
            .await
            .expect("thread/read");
    let turns = read["thread"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{read}");
    assert!(
        turns[0]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["type"] == "commandExecution" && i["source"] == "userShell"),
        "{read}"
    );

    // The turn took no further step: the next one tells the model.
    t.h.run_turn(&thread, "what did I run?").await;
    let requests = t.h.wait_for_requests(2).await;
    assert!(shell_records(&requests[0]).is_empty());
    let records = shell_records(&requests[1]);
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0].contains("<command>\nls | grep seen\n</command>"));
    assert!(records[0].contains("seen.txt\n\n</result>"));
    t.finish().await;
}

async fn bad_params_get_the_reference_errors(transport: Transport) {
    let mut t = Tools::start(transport).await;
    let thread = t.thread("never", "workspace-write").await;
    let client = &mut t.h.client;
    let refused = |err: RpcError, code: i64, message: &str| {
        assert_eq!(err.code, code, "{err}");
        assert_eq!(err.message, message);
    };
    refused(
        client
            .request_err(
                "thread/shellCommand",
                json!({"threadId": thread, "command": "echo x", "timeoutMs": -5}),
            )
            .await,
        -32602,
        "thread/shellCommand timeoutMs must be non-negative, got -5",
    );
    refused(
        client
            .request_err(
                "thread/shellCommand",
                json!({"threadId": thread, "command": "  \n"}),
            )
            .await,
        INVALID_REQUEST,
        "command must not be empty",
    );
    refused(
        client
            .request_err("thread/shellCommand", json!({"threadId": thread}))
            .await,
        INVALID_REQUEST,
        "Invalid request: missing field `command`",
    );
    let unknown = "0190f5a4-1b2c-7d3e-8f40-123456789abc";
    refused(
        client
            .request_err(
                "thread/shellCommand",
                json!({"threadId": unknown, "command": "echo x"}),
            )
            .await,
        INVALID_REQUEST,
        &format!("thread not found: {unknown}"),
    );
    // Nothing ran, and the daemon still serves the thread.
    shell(client, &thread, "echo fine", None).await;
    let messages = read_through_turn_completed(client).await;
    printed(&command_item(&messages)["aggregatedOutput"], "fine\n");
    t.finish().await;
}

async fn the_item_and_the_record_survive_a_restart(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let thread = p.start_thread().await;
    shell(&mut p.client, &thread, "echo persisted", None).await;
    let messages = read_through_turn_completed(&mut p.client).await;
    let turn_id = str_at(messages.last().unwrap(), "/params/turn/id");
    p.restart().await;

    let read = p
        .client
        .request(
            "thread/read",
            json!({"threadId": thread, "includeTurns": true}),
        )
        .await
        .expect("thread/read");
    let turns = read["thread"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{read}");
    assert_eq!(turns[0]["id"], turn_id.as_str());
    assert_eq!(turns[0]["status"], "completed");
    let items = turns[0]["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{read}");
    assert_eq!(items[0]["type"], "commandExecution");
    assert_eq!(items[0]["source"], "userShell");
    printed(&items[0]["aggregatedOutput"], "persisted\n");
    let page = p
        .client
        .request("thread/turns/list", json!({"threadId": thread}))
        .await
        .expect("thread/turns/list");
    assert_eq!(page["data"][0]["id"], turn_id.as_str(), "{page}");

    // The resumed thread's history still holds the record.
    p.client
        .request("thread/resume", json!({"threadId": thread}))
        .await
        .expect("thread/resume");
    p.push(Reply::new().text("You echoed a word."));
    p.run_turn(&thread, "remind me").await;
    let records = shell_records(&p.wait_for_requests(1).await[0]);
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0].contains("<command>\necho persisted\n</command>"));
    assert!(records[0].contains("persisted\n\n</result>"));
}

on_both_transports!(
    a_pipeline_runs_in_its_own_turn_and_the_model_reads_it_next,
    a_timeout_kills_the_command_and_zero_times_out_at_once,
    an_interrupt_kills_a_long_command,
    while_a_turn_runs_the_command_runs_inside_it,
    bad_params_get_the_reference_errors,
    the_item_and_the_record_survive_a_restart,
);
