//! The MCP client methods (docs/mcp.md §6): `mcpServerStatus/list`, `mcpServer/tool/call`,
//! `mcpServer/resource/read`, `config/mcpServer/reload`; and server-everything, the MCP
//! project's own reference server, through them and through a model's call.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::{Client, RpcError, Transport, mcp_servers};

use super::{Mcp, completed_item, names, namespace_tools, namespaced_call, status};

/// Status with and without a thread, detail levels, paging and a server filter.
/// `mcpServer/tool/call` of `tool` on `server`, for `thread`.
async fn tool_call(
    client: &mut Client,
    thread: &str,
    server: &str,
    tool: &str,
    arguments: Value,
) -> Result<Value, RpcError> {
    let params =
        json!({"threadId": thread, "server": server, "tool": tool, "arguments": arguments});
    client.request("mcpServer/tool/call", params).await
}

async fn status_list(transport: Transport) {
    let second = mcp_servers().test_server_toml("zeta", "enabled = false");
    let mut t = Mcp::start_with(transport, "", &second).await;
    let thread = t.thread("never").await;
    let all = status(&mut t.h.client, json!({})).await;
    let data = all["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(names(&data), ["weft", "zeta"]);
    assert_eq!(all["nextCursor"], Value::Null);
    let weft = &data[0];
    assert_eq!(
        weft["runtimeStatus"],
        Value::Null,
        "no threadId: no runtime status"
    );
    assert_eq!(weft["authStatus"], "unsupported");
    assert_eq!(weft["serverInfo"]["name"], "weft-test-server");
    let tools = weft["tools"].as_object().expect("tools by name");
    assert!(tools.contains_key("echo") && tools.contains_key("add"));
    assert_eq!(tools["echo"]["name"], "echo");
    assert_eq!(tools["echo"]["annotations"]["readOnlyHint"], true);
    let uris: Vec<&str> = weft["resources"]
        .as_array()
        .map(|r| r.iter().filter_map(|r| r["uri"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(uris, ["weft://greeting"]);
    assert_eq!(
        weft["resourceTemplates"][0]["uriTemplate"],
        "weft://items/{item_id}"
    );
    assert_eq!(data[1]["tools"], json!({}), "disabled: not started");

    let params = json!({"limit": 1, "detail": "toolsAndAuthOnly", "threadId": thread});
    let page = status(&mut t.h.client, params).await;
    assert_eq!(page["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(page["data"][0]["runtimeStatus"], "connected");
    assert_eq!(page["data"][0]["resources"], json!([]));
    assert_eq!(page["nextCursor"], "weft");
    let next = status(
        &mut t.h.client,
        json!({"cursor": "weft", "threadId": thread}),
    )
    .await;
    assert_eq!(next["data"][0]["name"], "zeta");
    assert_eq!(next["data"][0]["runtimeStatus"], "disabled");
    let one = status(&mut t.h.client, json!({"serverName": "zeta"})).await;
    assert_eq!(one["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(t.starts(), 1, "status requests share the running server");
}

/// `mcpServer/tool/call`: the server's answer as it is, no approval (even for `add`), no
/// item; an unknown server is `-32603`.
async fn tool_call_and_resource_read(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    let thread = t.thread("untrusted").await;
    let add = tool_call(
        &mut t.h.client,
        &thread,
        "weft",
        "add",
        json!({"a": 40, "b": 2}),
    )
    .await
    .expect("add");
    assert_eq!(
        add,
        json!({"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42},
               "isError": false})
    );
    let unknown_tool = tool_call(&mut t.h.client, &thread, "weft", "nope", json!({}))
        .await
        .expect("unknown tool is the server's answer");
    assert_eq!(unknown_tool["isError"], true);
    assert_eq!(unknown_tool["content"][0]["text"], "Unknown tool: nope");
    let err = tool_call(&mut t.h.client, &thread, "nope", "echo", json!({}))
        .await
        .expect_err("unknown server");
    assert_eq!(err.code, -32603);
    assert_eq!(err.message, "unknown MCP server 'nope'");
    assert!(
        !t.h.client.log().iter().any(
            |m| m["method"] == "item/started" || m["method"] == "mcpServer/elicitation/request"
        ),
        "no item and no approval"
    );
    let read =
        t.h.client
            .request(
                "mcpServer/resource/read",
                json!({"threadId": thread, "server": "weft", "uri": "weft://greeting"}),
            )
            .await
            .expect("resource read");
    assert_eq!(
        read["contents"],
        json!([{"uri": "weft://greeting", "mimeType": "text/plain",
                "text": "hello from the weft test server"}])
    );
}

/// The model's resource tools.
async fn resource_tools(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    let calls = [
        Reply::new().function_call("call_list", "list_mcp_resources", "{}"),
        Reply::new().function_call(
            "call_read",
            "read_mcp_resource",
            r#"{"server": "weft", "uri": "weft://items/7"}"#,
        ),
    ];
    t.script(calls, "read");
    t.thread_turn("never", "resources").await;
    let requests = t.h.wait_for_requests(3).await;
    let listed: Value =
        serde_json::from_str(&super::output_of(&requests[1], "call_list")).expect("JSON output");
    assert_eq!(listed["resources"][0]["uri"], "weft://greeting");
    assert_eq!(listed["resources"][0]["server"], "weft");
    let read: Value =
        serde_json::from_str(&super::output_of(&requests[2], "call_read")).expect("JSON output");
    assert_eq!(read["server"], "weft");
    assert_eq!(read["contents"][0]["uri"], "weft://items/7");
}

/// `config/mcpServer/reload`, which must succeed.
async fn reload_config(client: &mut Client) -> Value {
    let answer = client.request("config/mcpServer/reload", Value::Null).await;
    answer.unwrap_or_else(|err| panic!("config/mcpServer/reload failed: {err}"))
}

/// `config/mcpServer/reload`: a server added to the file appears, a removed one is stopped,
/// without restarting the daemon.
async fn reload(transport: Transport) {
    let mut t = Mcp::start(transport).await;
    let thread = t.thread("never").await;
    let config = std::fs::read_to_string(t.h.home.config_path()).expect("config");
    let added = format!("{config}\n{}", mcp_servers().test_server_toml("extra", ""));
    t.h.home.write_config(&added);
    assert_eq!(reload_config(&mut t.h.client).await, json!({}));
    let listed = |status: &Value| -> Vec<String> {
        let data = status["data"].as_array().cloned().unwrap_or_default();
        names(&data).into_iter().map(str::to_owned).collect()
    };
    let now = status(&mut t.h.client, json!({"threadId": thread})).await;
    assert_eq!(listed(&now), ["extra", "weft"]);
    assert_eq!(t.starts(), 1, "the unchanged server kept running");
    // Removing `weft` stops it; `extra` stays.
    let without_weft = format!(
        "{}\n{}",
        config
            .split("[mcp_servers.weft]")
            .next()
            .unwrap_or_default(),
        mcp_servers().test_server_toml("extra", "")
    );
    t.h.home.write_config(&without_weft);
    reload_config(&mut t.h.client).await;
    let now = status(&mut t.h.client, json!({})).await;
    assert_eq!(listed(&now), ["extra"]);
}

/// server-everything, the MCP project's reference server: its tools are offered and called.
async fn server_everything(transport: Transport) {
    let everything = mcp_servers().everything_toml(
        "everything",
        "default_tools_approval_mode = \"approve\"\nenv = { FROM_ENTRY = \"entry-value\" }",
    );
    let env = [
        ("WEFT_E2E_VISIBLE", "daemon-value"),
        ("OPENAI_API_KEY", "sk-weft-e2e-secret"),
    ];
    let mut t = Mcp::start_full(
        transport,
        weft_mock_model::WireApi::Responses,
        "",
        &everything,
        &env,
    )
    .await;
    let sum = namespaced_call(
        "call_sum",
        "mcp__everything",
        "get-sum",
        r#"{"a": 2, "b": 3}"#,
    );
    t.script([sum], "summed");
    let thread = t.thread("never").await;
    super::wait_startup(&mut t.h.client, &thread, "everything", "ready").await;
    let messages = t.turn(&thread, "sum").await;
    let done = completed_item(&messages, "call_sum");
    assert_eq!(done["status"], "completed", "{done}");
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains('5'), "{text}");
    let requests = t.h.wait_for_requests(2).await;
    let offered = namespace_tools(&requests[0], "mcp__everything");
    let names = names(&offered);
    for name in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let status = status(&mut t.h.client, json!({"serverName": "everything"})).await;
    assert!(status["data"][0]["tools"]["echo"].is_object());
    // Its environment: the shell environment policy's (providers' keys removed), then `env`.
    let env = tool_call(&mut t.h.client, &thread, "everything", "get-env", json!({}))
        .await
        .expect("get-env");
    let text = env["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("daemon-value"), "inherited: {text}");
    assert!(text.contains("entry-value"), "the entry's env: {text}");
    assert!(
        !text.contains("sk-weft-e2e-secret"),
        "a provider key leaked: {text}"
    );
}

on_both_transports!(
    status_list,
    tool_call_and_resource_read,
    resource_tools,
    reload,
    server_everything,
);
