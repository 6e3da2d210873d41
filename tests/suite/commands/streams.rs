//! Streaming `command/exec`: output deltas before the answer, a PTY and its resize, input
//! written and closed, terminate, the streamed cap, and a closed connection's processes.

use std::time::Duration;

use serde_json::json;
use weft_test_support::Transport;

use super::harness::{
    Commands, INVALID_REQUEST, alive, b64, collect_until, pid_in, read_stream, sh, until_dead,
};

async fn streamed_output_comes_as_deltas_before_an_empty_answer(transport: Transport) {
    let mut t = Commands::start(transport, "").await;
    // Deltas go to the requesting connection only.
    let mut other = match transport {
        Transport::Ws => Some(t.daemon.initialized_client().await),
        Transport::Stdio => None,
    };
    let id = t
        .client
        .send_request(
            "command/exec",
            json!({
                "command": sh("printf one; sleep 0.2; printf two >&2; sleep 0.2; printf three"),
                "processId": "s1",
                "streamStdoutStderr": true,
            }),
        )
        .await;
    let seen = read_stream(&mut t.client, &id, "s1").await;
    assert_eq!(
        (seen.stdout.as_str(), seen.stderr.as_str()),
        ("onethree", "two")
    );
    assert!(seen.deltas >= 3, "{seen:?}");
    assert!(!seen.stdout_cap_reached);
    // Streamed bytes are not repeated in the answer.
    assert_eq!(
        seen.answer.unwrap().unwrap(),
        json!({"exitCode": 0, "stdout": "", "stderr": ""})
    );
    // The cap holds for streams too: the last delta says so.
    let id = t
        .client
        .send_request(
            "command/exec",
            json!({
                "command": sh("head -c 100000 /dev/zero | tr '\\0' a"),
                "processId": "s2",
                "streamStdoutStderr": true,
                "outputBytesCap": 7,
            }),
        )
        .await;
    let seen = read_stream(&mut t.client, &id, "s2").await;
    assert_eq!(seen.stdout, "aaaaaaa");
    assert!(seen.stdout_cap_reached);
    assert_eq!(seen.answer.unwrap().unwrap()["exitCode"], 0);
    if let Some(other) = other.as_mut() {
        other
            .expect_no_message_within(Duration::from_millis(300))
            .await;
    }
}

async fn a_pty_command_sees_a_terminal_and_its_resize(transport: Transport) {
    let mut t = Commands::start(transport, "").await;
    let id = t
        .client
        .send_request(
            "command/exec",
            json!({
                "command": sh("test -t 0 && test -t 1 && echo is-a-tty; stty size; read line; stty size; echo got $line"),
                "processId": "tty1",
                "tty": true,
                "size": {"rows": 30, "cols": 100},
            }),
        )
        .await;
    let mut seen = Default::default();
    collect_until(&mut t.client, &id, "tty1", &mut seen, |s| {
        s.stdout.contains("30 100")
    })
    .await;
    assert!(seen.stdout.contains("is-a-tty"), "{seen:?}");
    t.client
        .request_ok(
            "command/exec/resize",
            json!({"processId": "tty1", "size": {"rows": 40, "cols": 120}}),
        )
        .await;
    t.client
        .request_ok(
            "command/exec/write",
            json!({"processId": "tty1", "deltaBase64": b64("hello\n")}),
        )
        .await;
    collect_until(&mut t.client, &id, "tty1", &mut seen, |_| false).await;
    // A terminal turns `\n` into `\r\n`; everything arrives on stdout.
    assert!(seen.stdout.contains("40 120\r\n"), "{seen:?}");
    assert!(seen.stdout.contains("got hello"), "{seen:?}");
    assert_eq!(seen.stderr, "");
    assert_eq!(
        seen.answer.unwrap().unwrap(),
        json!({"exitCode": 0, "stdout": "", "stderr": ""})
    );
}

async fn input_is_written_in_order_then_closed(transport: Transport) {
    let mut t = Commands::start(transport, "").await;
    let id = t
        .client
        .send_request(
            "command/exec",
            json!({"command": ["cat"], "processId": "in1", "streamStdin": true}),
        )
        .await;
    for (delta, close) in [("hello ", false), ("wor", false), ("ld", true)] {
        let answer = t
            .client
            .request_ok(
                "command/exec/write",
                json!({"processId": "in1", "deltaBase64": b64(delta), "closeStdin": close}),
            )
            .await;
        assert_eq!(answer, json!({}));
    }
    let answer = t.client.response_to(&id).await.unwrap();
    assert_eq!(
        answer,
        json!({"exitCode": 0, "stdout": "hello world", "stderr": ""})
    );
    // Closing without writing, and a write after the close.
    let id = t
        .client
        .send_request(
            "command/exec",
            json!({"command": sh("cat; sleep 30"), "processId": "in2", "streamStdin": true, "streamStdoutStderr": true}),
        )
        .await;
    t.client
        .request_ok(
            "command/exec/write",
            json!({"processId": "in2", "closeStdin": true}),
        )
        .await;
    let error = t
        .refused(
            "command/exec/write",
            json!({"processId": "in2", "deltaBase64": b64("late")}),
        )
        .await;
    assert_eq!(
        (error.code, error.message.as_str()),
        (INVALID_REQUEST, "stdin is already closed")
    );
    t.client
        .request_ok("command/exec/terminate", json!({"processId": "in2"}))
        .await;
    let seen = read_stream(&mut t.client, &id, "in2").await;
    assert_eq!(seen.answer.unwrap().unwrap()["exitCode"], 137);
}

async fn terminate_kills_the_whole_group(transport: Transport) {
    let mut t = Commands::start(transport, "").await;
    let pid_file = t.ws.join("child.pid");
    let id = t
        .client
        .send_request(
            "command/exec",
            json!({
                "command": sh(&format!("sleep 30 & echo $! > {}; wait", pid_file.display())),
                "processId": "t1",
                "disableTimeout": true,
            }),
        )
        .await;
    let child = pid_in(&pid_file).await;
    assert!(alive(child));
    let answer = t
        .client
        .request_ok("command/exec/terminate", json!({"processId": "t1"}))
        .await;
    assert_eq!(answer, json!({}));
    let answer = t.client.response_to(&id).await.unwrap();
    assert_eq!(answer["exitCode"], 137);
    until_dead(child).await;
    // It is gone: a second terminate finds nothing.
    let error = t
        .refused("command/exec/terminate", json!({"processId": "t1"}))
        .await;
    assert_eq!(
        error.message,
        "no active command/exec for process id \"t1\""
    );
}

async fn closing_the_connection_kills_its_processes(transport: Transport) {
    let mut t = Commands::start(transport, "[limits]\nshutdown_grace_secs = 1\n").await;
    let pid_file = t.ws.join("long.pid");
    t.client
        .send_request(
            "command/exec",
            json!({
                "command": sh(&format!("echo $$ > {}; exec sleep 60", pid_file.display())),
                "processId": "k1",
                "streamStdoutStderr": true,
                "disableTimeout": true,
            }),
        )
        .await;
    let pid = pid_in(&pid_file).await;
    if transport == Transport::Ws {
        // Ids are per connection: another connection runs its own "k1" and cannot end ours.
        let mut other = t.daemon.initialized_client().await;
        let answer = other
            .request_ok(
                "command/exec",
                json!({"command": ["echo", "mine"], "processId": "k1"}),
            )
            .await;
        assert_eq!(answer["stdout"], "mine\n");
        let error = other
            .request_err("command/exec/terminate", json!({"processId": "k1"}))
            .await;
        assert_eq!(error.code, INVALID_REQUEST);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(alive(pid));
    }
    t.client.close().await;
    until_dead(pid).await;
}

on_both_transports!(
    streamed_output_comes_as_deltas_before_an_empty_answer,
    a_pty_command_sees_a_terminal_and_its_resize,
    input_is_written_in_order_then_closed,
    terminate_kills_the_whole_group,
    closing_the_connection_kills_its_processes,
);
