//! `exec_command` end to end: the `commandExecution` item, its output deltas, and what the model
//! gets back; a two-step turn (command, then patch, then the answer).

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{
    Tools, completed_item, exec_call, input_position, item_event, output_of, patch_call, position,
    write_stdin_call,
};

/// A command that prints to both streams over a while.
const LOOP: &str = "for i in 1 2 3; do echo line$i; sleep 0.05; done; echo oops >&2";

async fn command_output_streams_as_deltas(transport: Transport) {
    let mut t = Tools::start(transport).await;
    t.push_command("call_echo", LOOP);
    t.push(Reply::new().text("The command printed three lines."));
    let run = t
        .completed_turn("never", "danger-full-access", "run the loop")
        .await;
    let messages = &run.messages;

    let started = &item_event(messages, "item/started", "call_echo")["params"]["item"];
    assert_eq!(started["type"], "commandExecution");
    assert_eq!(started["status"], "inProgress");
    assert_eq!(started["source"], "unifiedExecStartup");
    t.assert_command(started, LOOP);
    assert_eq!(started["aggregatedOutput"], Value::Null);
    assert_eq!(started["exitCode"], Value::Null);
    assert_eq!(
        started["commandActions"],
        json!([{"type": "unknown", "command": LOOP}])
    );

    // Deltas come between the item's start and completion, and add up to its output.
    let start_at = position(messages, "item/started", |m| {
        m["method"] == "item/started" && m["params"]["item"]["id"] == "call_echo"
    });
    let end_at = position(messages, "item/completed", |m| {
        m["method"] == "item/completed" && m["params"]["item"]["id"] == "call_echo"
    });
    let deltas: Vec<&Value> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m["method"] == "item/commandExecution/outputDelta")
        .map(|(i, m)| {
            assert!(start_at < i && i < end_at, "a delta outside its item");
            assert_eq!(m["params"]["itemId"], "call_echo");
            m
        })
        .collect();
    assert!(!deltas.is_empty(), "no outputDelta");
    let streamed: String = deltas
        .iter()
        .map(|m| m["params"]["delta"].as_str().unwrap())
        .collect();
    let expected = "line1\nline2\nline3\noops\n";
    assert_eq!(streamed, expected);

    let item = completed_item(messages, "call_echo");
    assert_eq!(item["status"], "completed");
    assert_eq!(item["exitCode"], 0);
    assert_eq!(item["aggregatedOutput"], expected);
    assert_eq!(item["processId"], Value::Null);
    assert!(item["durationMs"].as_i64().unwrap() >= 0);

    // The model got the unified-exec text.
    let requests = t.h.wait_for_requests(2).await;
    let output = output_of(&requests[1], "call_echo");
    assert!(output.starts_with("Chunk ID: "), "{output}");
    assert!(
        output.contains("\nProcess exited with code 0\n"),
        "{output}"
    );
    assert!(
        output.ends_with(&format!("Output:\n{expected}")),
        "{output}"
    );
    // Weft's tools are offered: the four of the turn, the v1 multi-agent namespace
    // (docs/agents.md), then the goal tools of a persistent thread (docs/protocol.md §7.26).
    let tools: Vec<&str> = requests[0]
        .tools()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "exec_command",
            "write_stdin",
            "apply_patch",
            "update_plan",
            "multi_agent_v1",
            "get_goal",
            "create_goal",
            "update_goal"
        ]
    );
    t.finish().await;
}

async fn command_then_patch_then_answer(transport: Transport) {
    let mut t = Tools::start(transport).await;
    t.push_command(
        "call_cmd",
        "printf 'alpha\\nbeta\\n' > notes.txt && cat notes.txt",
    );
    t.push(patch_call(
        "call_patch",
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+gamma\n*** End Patch\n",
    ));
    t.push(Reply::new().text("Created and patched notes.txt."));
    let run = t
        .completed_turn("never", "danger-full-access", "make notes")
        .await;
    assert_eq!(t.read("notes.txt"), "alpha\ngamma\n");
    let messages = &run.messages;
    // The command completes before the patch starts; the answer comes last.
    let labels: Vec<String> = messages
        .iter()
        .filter(|m| {
            m["method"] == "item/started"
                || m["method"] == "item/completed"
                || m["method"] == "turn/diff/updated"
        })
        .filter(|m| m["params"]["item"]["type"] != "userMessage")
        .map(super::label)
        .collect();
    assert_eq!(
        labels,
        [
            "item/started:commandExecution",
            "item/completed:commandExecution",
            "item/started:fileChange",
            "item/completed:fileChange",
            "turn/diff/updated",
            "item/started:agentMessage",
            "item/completed:agentMessage"
        ]
    );
    let patch = completed_item(messages, "call_patch");
    assert_eq!(patch["status"], "completed");
    assert_eq!(
        patch["changes"],
        json!([{"path": t.path("notes.txt").display().to_string(),
                "kind": {"type": "update", "move_path": null},
                "diff": "@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n"}])
    );
    let diff = messages
        .iter()
        .find(|m| m["method"] == "turn/diff/updated")
        .unwrap();
    assert_eq!(diff["params"]["turnId"], run.turn_id.as_str());
    let diff = diff["params"]["diff"].as_str().unwrap();
    // The file was created by the command, so the turn's diff (patches only) shows the patch.
    assert!(
        diff.starts_with("diff --git a/notes.txt b/notes.txt\n"),
        "{diff}"
    );
    assert!(diff.contains("-beta\n+gamma\n"), "{diff}");

    // The mock saw each output in turn, paired with its call.
    let requests = t.h.wait_for_requests(3).await;
    let first = output_of(&requests[1], "call_cmd");
    assert!(first.ends_with("Output:\nalpha\nbeta\n"), "{first}");
    assert!(requests[1].tool_output("call_patch").is_none());
    assert_eq!(output_of(&requests[2], "call_cmd"), first);
    let patched: Value = serde_json::from_str(&output_of(&requests[2], "call_patch")).unwrap();
    assert_eq!(
        patched["output"],
        "Success. Updated the following files:\nM notes.txt\n"
    );
    assert_eq!(patched["metadata"]["exit_code"], 0);
    let cmd_at = input_position(&requests[2], |i| i["call_id"] == "call_cmd").unwrap();
    let patch_at = input_position(&requests[2], |i| i["call_id"] == "call_patch").unwrap();
    assert!(cmd_at < patch_at);
    t.finish().await;
}

/// A command that is still running at its yield time becomes a session; its item completes
/// with the session id, and `write_stdin` shows as an interaction item.
#[tokio::test]
async fn background_session_and_write_stdin() {
    let mut t = Tools::start(Transport::Stdio).await;
    t.push(exec_call(
        "call_bg",
        json!({"cmd": "echo ready; read line; echo \"got $line\"", "yield_time_ms": 2000}),
    ));
    t.push(Reply::new().text("Started."));
    let thread = t.thread("never", "danger-full-access").await;
    let run = t.h.run_turn(&thread, "start it").await;
    let item = completed_item(&run.messages, "call_bg");
    assert_eq!(item["status"], "completed");
    assert_eq!(item["exitCode"], Value::Null);
    assert_eq!(item["aggregatedOutput"], "ready\n");
    let session = item["processId"]
        .as_str()
        .expect("a process id")
        .to_string();
    let output = t.h.output_in(2, "call_bg").await;
    assert!(
        output.contains(&format!("\nProcess running with session ID {session}\n")),
        "{output}"
    );

    t.push(write_stdin_call("call_write", &session, "hello\n"));
    t.push(Reply::new().text("It answered."));
    let run = t.h.run_turn(&thread, "say hello to it").await;
    let started = &item_event(&run.messages, "item/started", "call_write")["params"]["item"];
    assert_eq!(started["source"], "unifiedExecInteraction");
    assert_eq!(started["processId"], session.as_str());
    let item = completed_item(&run.messages, "call_write");
    assert_eq!(item["status"], "completed");
    assert_eq!(item["exitCode"], 0);
    assert_eq!(item["aggregatedOutput"], "got hello\n");
    let output = t.h.output_in(4, "call_write").await;
    assert!(
        output.contains("\nProcess exited with code 0\n"),
        "{output}"
    );
    assert!(output.ends_with("Output:\ngot hello\n"), "{output}");
    t.finish().await;
}

on_both_transports!(
    command_output_streams_as_deltas,
    command_then_patch_then_answer
);
