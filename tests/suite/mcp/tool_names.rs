//! Issue 24, item 3 (docs/mcp.md §4, "Tool names"): a server's tool names that the model
//! API refuses (`../../etc/passwd`, spaces, non-ASCII letters, too long, the same name twice)
//! are offered under valid, unique names; valid names are unchanged; a call of a renamed tool
//! reaches the server under its own name; the daemon warns once about what it changed.

use serde_json::Value;
use weft_mock_model::Reply;
use weft_test_support::Transport;
use weft_test_support::mcp::toml_string;

use super::{
    Mcp, completed_item, namespaced_call, output_of, read_through_turn_completed, wait_startup,
};

/// The functions of the `mcp__names` namespace a model request offered.
fn offered(tools: &[Value]) -> Vec<String> {
    let namespace = tools
        .iter()
        .find(|tool| tool["type"] == "namespace" && tool["name"] == "mcp__names")
        .unwrap_or_else(|| panic!("no mcp__names namespace in {tools:#?}"));
    namespace["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["name"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

async fn names_the_api_refuses_are_sanitised(transport: Transport) {
    let servers = weft_test_support::mcp_servers();
    let names_server = format!(
        "[mcp_servers.names]\ncommand = {}\nargs = [{}, \"--names\"]\n\
         default_tools_approval_mode = \"approve\"\n",
        toml_string(&servers.python.display().to_string()),
        toml_string(&super::questions::edge_server().display().to_string()),
    );
    let mut t = Mcp::start_with(transport, "", &names_server).await;
    t.push(namespaced_call(
        "call_passwd",
        "mcp__names",
        "______etc_passwd",
        "{}",
    ));
    t.push(namespaced_call("call_ok", "mcp__names", "ok-name", "{}"));
    t.push(Reply::new().text("done"));
    let thread = t.thread("never").await;
    wait_startup(&mut t.h.client, &thread, "names", "ready").await;
    t.h.start_turn(&thread, "call them").await;
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let requests = t.h.wait_for_requests(3).await;
    let names = offered(requests[0].tools());
    for name in &names {
        assert!(valid(name), "{name:?} in {names:?}");
    }
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "unique: {names:?}");
    // Seven listed, one of them a second `echo`: six offered, in the server's order.
    assert_eq!(names.len(), 6, "{names:?}");
    assert_eq!(names[0], "______etc_passwd");
    assert_eq!(names[1], "has_space");
    assert_eq!(names[2], "na_ve");
    assert_eq!(names[3], "echo", "a valid name is unchanged");
    assert_eq!(names[4].len(), 64, "{names:?}");
    assert!(names[4].starts_with("xxxxxxxx"), "{names:?}");
    assert_eq!(names[5], "ok-name", "a valid name is unchanged");
    // The renamed tool is called under the server's own name.
    let passwd = completed_item(&messages, "call_passwd");
    assert_eq!(passwd["status"], "completed", "{passwd}");
    assert_eq!(passwd["tool"], "../../etc/passwd");
    assert!(
        output_of(&requests[1], "call_passwd").ends_with("\nOutput:\ncalled ../../etc/passwd"),
        "{}",
        output_of(&requests[1], "call_passwd")
    );
    assert!(output_of(&requests[2], "call_ok").ends_with("\nOutput:\ncalled ok-name"));
    // The next request offers the same names.
    assert_eq!(offered(requests[2].tools()), names);
    let log =
        t.h.daemon
            .wait_for_stderr("tool names the model API refuses")
            .await;
    let line = log
        .lines()
        .find(|line| line.contains("tool names the model API refuses"))
        .unwrap_or_default();
    assert!(
        line.contains(r#"tool "../../etc/passwd" is offered to the model as `______etc_passwd`"#),
        "{line}"
    );
    assert!(line.contains("a second tool named"), "{line}");
    assert_eq!(
        log.matches("tool names the model API refuses").count(),
        1,
        "warned once: {log}"
    );
}

on_both_transports!(names_the_api_refuses_are_sanitised);
