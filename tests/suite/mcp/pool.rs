//! The one pool per daemon (docs/mcp.md §1, §3): two threads share one server process, a
//! crashed server is restarted, `list_changed` reaches the next step, progress, interrupts
//! during a call and during an approval, a server that cannot start, streamable HTTP, and no
//! server outliving the daemon.

use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{
    ELICITATION, Mcp, assert_call_failed, completed_call, completed_item, eventually, names,
    namespace_tools, output_of, read_through_turn_completed, serve_http, status, str_at,
    wait_request, wait_startup, weft_call,
};
use crate::requests::Requests;

/// The `pid` tool's answer in a completed item.
fn pid_of(messages: &[Value], call_id: &str) -> i64 {
    completed_item(messages, call_id)["result"]["structuredContent"]["result"]
        .as_i64()
        .unwrap_or_else(|| panic!("no pid in {call_id}"))
}

fn alive(pid: i64) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

/// A server process started with a `pid` call, then the daemon stopped with `signal`: the
/// process is gone once the daemon is.
async fn no_server_outlives_the_daemon(t: &mut Mcp, pid: i64, signal: &str) {
    assert!(alive(pid));
    t.h.daemon.signal(signal);
    t.h.daemon.wait_exit().await;
    let what = format!("the server process is gone after {signal} of the daemon");
    eventually(&what, || !alive(pid)).await;
}

/// Two threads call the same server: one process serves both, and stopping the daemon stops it.
async fn two_threads_share_one_process(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    t.script([weft_call("call_a", "pid", json!({}))], "a");
    t.script([weft_call("call_b", "pid", json!({}))], "b");
    let first = t.thread("never").await;
    let second = t.thread("never").await;
    let a = t.turn(&first, "pid").await;
    let b = t.turn(&second, "pid").await;
    let pid = pid_of(&a, "call_a");
    assert_eq!(pid, pid_of(&b, "call_b"), "both threads reach one process");
    assert_eq!(t.starts(), 1, "started once: {:?}", t.event_lines());
    no_server_outlives_the_daemon(&mut t, pid, "TERM").await;
}

/// A server killed with the daemon (SIGKILL, no clean-up) does not outlive it.
async fn no_orphan_after_kill(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    t.script([weft_call("call_pid", "pid", json!({}))], "done");
    let (_, messages) = t.thread_turn("never", "pid").await;
    let pid = pid_of(&messages, "call_pid");
    no_server_outlives_the_daemon(&mut t, pid, "KILL").await;
}

/// A server that crashes mid-call: the call fails with a clear error, the status goes to
/// failed, and the next call runs on a restarted process.
async fn crash_mid_call_and_restart(transport: Transport) {
    let mut t = Mcp::start_with(transport, "default_tools_approval_mode = \"approve\"", "").await;
    t.script([weft_call("call_crash", "crash", json!({}))], "crashed");
    let (thread, messages) = t.thread_turn("never", "crash it").await;
    let crashed = completed_item(&messages, "call_crash");
    assert_eq!(crashed["status"], "failed");
    let error = crashed["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        error.starts_with("tool call error: MCP server connection closed"),
        "{error}"
    );
    let requests = t.h.wait_for_requests(2).await;
    assert_call_failed(&requests[1], "call_crash", &error);
    eventually("the server was started again", || t.starts() == 2).await;
    t.script(
        [weft_call("call_echo", "echo", json!({"text": "again"}))],
        "back",
    );
    let messages = t.turn(&thread, "again").await;
    completed_call(&messages, "call_echo");
}

/// `add_tool` makes the server send `notifications/tools/list_changed`: the next step offers
/// the new tool.
async fn list_changed_reaches_the_next_step(transport: Transport) {
    let mut t = Mcp::start_with(transport, "default_tools_approval_mode = \"approve\"", "").await;
    let add = weft_call("call_add_tool", "add_tool", json!({"name": "brand_new"}));
    t.script([add], "added");
    let (thread, _) = t.thread_turn("never", "add a tool").await;
    let offered = |request| names(&namespace_tools(request, "mcp__weft")).contains(&"brand_new");
    let requests = t.h.wait_for_requests(2).await;
    assert!(!offered(&requests[0]), "not there before");
    // The refresh runs beside the call's answer: wait until the pool lists the new tool.
    let mut listed = false;
    for _ in 0..100 {
        let status = status(&mut t.h.client, json!({"serverName": "weft"})).await;
        if status["data"][0]["tools"]["brand_new"].is_object() {
            listed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(listed, "the pool never listed the new tool");
    t.script([], "seen");
    t.turn(&thread, "look").await;
    let requests = t.h.wait_for_requests(3).await;
    assert!(offered(&requests[2]), "offered after list_changed");
}

/// Progress of a call becomes `item/mcpToolCall/progress`.
async fn progress_notifications(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    t.script(
        [weft_call(
            "call_slow",
            "slow",
            json!({"seconds": 0.6, "steps": 3}),
        )],
        "slept",
    );
    let thread = t.thread("never").await;
    let turn = t.h.start_turn(&thread, "sleep").await;
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "item/mcpToolCall/progress")
        .collect();
    assert!(!progress.is_empty(), "no progress notification");
    assert_eq!(progress[0]["params"]["threadId"], thread.as_str());
    assert_eq!(progress[0]["params"]["turnId"], turn.as_str());
    assert_eq!(progress[0]["params"]["itemId"], "call_slow");
    assert!(progress[0]["params"]["message"].is_string());
    completed_call(&messages, "call_slow");
}

/// An interrupt during a call cancels it at the server (`notifications/cancelled`).
async fn interrupt_during_a_call(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    t.push(weft_call(
        "call_slow",
        "slow",
        json!({"seconds": 20, "steps": 40}),
    ));
    let thread = t.thread("never").await;
    let turn = t.h.start_turn(&thread, "sleep long").await;
    t.h.client
        .wait_for("the slow call's progress", |m| {
            m["method"] == "item/mcpToolCall/progress"
        })
        .await;
    t.h.client
        .interrupt(&thread, &turn)
        .await
        .expect("turn/interrupt");
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let done = completed_item(&messages, "call_slow");
    assert_eq!(done["status"], "failed");
    assert!(
        done["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("aborted by user after")),
        "{done}"
    );
    eventually("the server saw the cancellation", || {
        t.event_lines().iter().any(|line| line == "cancelled slow")
    })
    .await;
}

/// An interrupt during an approval withdraws the request; the call never runs.
async fn interrupt_during_an_approval(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    t.push(weft_call("call_add", "add", json!({"a": 1, "b": 1})));
    let thread = t.thread("on-request").await;
    let turn = t.h.start_turn(&thread, "add").await;
    let request = wait_request(&mut t.h.client, ELICITATION).await;
    t.h.client
        .interrupt(&thread, &turn)
        .await
        .expect("turn/interrupt");
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let log = t.h.client.log().to_vec();
    assert!(
        log.iter().any(|m| m["method"] == "serverRequest/resolved"
            && m["params"]["requestId"] == request["id"]),
        "the request was withdrawn"
    );
    let done = completed_item(&messages, "call_add");
    assert_eq!(done["status"], "failed");
    assert_eq!(
        done["error"],
        json!({"message": "user cancelled MCP tool call"})
    );
    assert_eq!(done["result"], Value::Null);
    assert!(
        !t.event_lines().is_empty() && t.starts() == 1,
        "the server is still the one process"
    );
}

/// A server that cannot start: `failed` with the error, the thread and its turns still work,
/// and the tools are not offered.
async fn a_server_that_fails_to_start(transport: Transport) {
    let broken = "[mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n";
    let mut t = Mcp::start_with(transport, "", broken).await;
    t.push(Reply::new().text("still here"));
    let (thread, failed) = t.thread_failing("broken").await;
    let error = failed["params"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("/nonexistent/mcp-server"), "{error}");
    wait_startup(&mut t.h.client, &thread, "weft", "ready").await;
    let run = t.h.run_turn(&thread, "hello").await;
    assert_eq!(str_at(run.completed_turn(), "/status"), "completed");
    let requests = t.h.wait_for_requests(1).await;
    let names = names(requests[0].tools());
    assert!(
        names.contains(&"mcp__weft") && !names.contains(&"mcp__broken"),
        "{names:?}"
    );
}

/// A bad `[mcp_servers.*]` entry is a warning, never fatal: the daemon starts, the good
/// server works.
async fn a_bad_entry_is_skipped(transport: Transport) {
    let bad = "[mcp_servers.nothing]\nargs = [\"x\"]\n";
    let mut t = Mcp::start_with(transport, "", bad).await;
    t.h.daemon
        .wait_for_stderr("skipping MCP server `nothing`")
        .await;
    t.script(
        [weft_call("call_echo", "echo", json!({"text": "ok"}))],
        "done",
    );
    let (thread, messages) = t.thread_turn("never", "go").await;
    completed_call(&messages, "call_echo");
    let params = json!({"serverName": "nothing", "threadId": thread});
    let status = status(&mut t.h.client, params).await;
    assert_eq!(status["data"][0]["name"], "nothing");
    assert_eq!(status["data"][0]["runtimeStatus"], "failed");
    let error = status["data"][0]["toolsError"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("invalid config entry: set `command`"),
        "{error}"
    );
}

/// `[mcp] eager_start`: the server starts with the daemon, before any thread; the first
/// thread then shares it.
async fn eager_start(transport: Transport) {
    let mut t = Mcp::start_with(transport, "", "[mcp]\neager_start = true\n").await;
    eventually("the server started before any thread", || t.starts() == 1).await;
    t.thread("never").await;
    assert_eq!(t.starts(), 1, "the thread used the running server");
}

/// Streamable HTTP with a bearer token from the daemon's environment.
async fn streamable_http_with_bearer(transport: Transport) {
    let script = &weft_test_support::mcp_servers().test_server;
    let (url, child) = serve_http(script, &["--bearer", "s3cret-token"], &[]).await;
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let http = format!(
        "[mcp_servers.remote]\nurl = \"{url}\"\nbearer_token_env_var = \"WEFT_E2E_MCP_TOKEN\"\n\
         default_tools_approval_mode = \"approve\"\n"
    );
    let mut t =
        Mcp::start_with_env(transport, &http, &[("WEFT_E2E_MCP_TOKEN", "s3cret-token")]).await;
    let add = super::namespaced_call("call_remote", "mcp__remote", "add", r#"{"a": 40, "b": 2}"#);
    t.script([add], "done");
    let thread = t.thread("never").await;
    wait_startup(&mut t.h.client, &thread, "remote", "ready").await;
    let messages = t.turn(&thread, "remote add").await;
    let done = completed_item(&messages, "call_remote");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["server"], "remote");
    let requests = t.h.wait_for_requests(2).await;
    assert!(output_of(&requests[1], "call_remote").ends_with("\nOutput:\n{\"result\":42}"));
    drop(child);
}

on_both_transports!(
    two_threads_share_one_process,
    no_orphan_after_kill,
    crash_mid_call_and_restart,
    list_changed_reaches_the_next_step,
    progress_notifications,
    interrupt_during_a_call,
    interrupt_during_an_approval,
    a_server_that_fails_to_start,
    a_bad_entry_is_skipped,
    eager_start,
    streamable_http_with_bearer,
);
