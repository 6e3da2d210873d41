//! Features per model (docs/architecture.md §7.7), seen in the requests the mock receives on
//! the Responses API: a model the catalog knows to read namespaces (gpt-5.5) gets the
//! multi-agent tools as a namespace, deferred behind `tool_search` unless `[features]
//! tool_search` says otherwise; a model it knows does not (gpt-4.1) gets them as flat
//! `<namespace>__<name>` functions; a model it does not know keeps the namespace, without tool
//! search, as before the catalog.

use serde_json::Value;
use weft_mock_model::{RecordedRequest, Reply, WireApi};
use weft_test_support::Transport;

use super::{Config, harness};

/// `(type, name)` of each tool offered.
fn offered(request: &RecordedRequest) -> Vec<(String, String)> {
    request
        .tools()
        .iter()
        .map(|tool| {
            let field = |key: &str| tool[key].as_str().unwrap_or("").to_owned();
            (field("type"), field("name"))
        })
        .collect()
}

async fn first_request(transport: Transport, config: Config<'_>) -> RecordedRequest {
    let mut h = harness(transport, WireApi::Responses, config).await;
    h.push(Reply::new().text("ok"));
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hi").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    h.mock.single_request()
}

fn has(tools: &[(String, String)], kind: &str, name: &str) -> bool {
    tools.iter().any(|(k, n)| k == kind && n == name)
}

async fn tools_follow_the_model(transport: Transport) {
    let unknown = offered(&first_request(transport, Config::default()).await);
    assert!(has(&unknown, "namespace", "multi_agent_v1"), "{unknown:?}");
    assert!(!unknown.iter().any(|(kind, _)| kind == "tool_search"));

    let old = Config {
        model: Some("gpt-4.1"),
        ..Config::default()
    };
    let flat = offered(&first_request(transport, old).await);
    assert!(
        !flat.iter().any(|(kind, _)| kind == "namespace"),
        "{flat:?}"
    );
    assert!(
        has(&flat, "function", "multi_agent_v1__spawn_agent"),
        "{flat:?}"
    );
    assert!(!flat.iter().any(|(kind, _)| kind == "tool_search"));

    let five = Config {
        model: Some("gpt-5.5"),
        ..Config::default()
    };
    let searched = first_request(transport, five).await;
    let tools = offered(&searched);
    assert!(
        tools.iter().any(|(kind, _)| kind == "tool_search"),
        "gpt-5.5 knows tool search: {tools:?}"
    );
    assert!(
        !has(&tools, "namespace", "multi_agent_v1"),
        "the namespace is deferred behind tool_search: {tools:?}"
    );
    assert_eq!(searched.body["model"], Value::from("gpt-5.5"));

    let switched_off = Config {
        model: Some("gpt-5.5"),
        tables: "[features]\ntool_search = false\n",
        ..Config::default()
    };
    let inline = offered(&first_request(transport, switched_off).await);
    assert!(has(&inline, "namespace", "multi_agent_v1"), "{inline:?}");
    assert!(!inline.iter().any(|(kind, _)| kind == "tool_search"));
}

/// A client's runtime switch (`experimentalFeature/enablement/set`) decides over the catalog,
/// off as well as on: gpt-5.5 switched off gets its namespace inline, without `tool_search`.
async fn a_runtime_switch_decides_over_the_catalog(transport: Transport) {
    let five = Config {
        model: Some("gpt-5.5"),
        ..Config::default()
    };
    let mut h = harness(transport, WireApi::Responses, five).await;
    let answer = h
        .client
        .request_ok(
            "experimentalFeature/enablement/set",
            serde_json::json!({"enablement": {"tool_search": false}}),
        )
        .await;
    assert_eq!(answer["enablement"]["tool_search"], Value::Bool(false));
    h.push(Reply::new().text("ok"));
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hi").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let tools = offered(&h.mock.single_request());
    assert!(has(&tools, "namespace", "multi_agent_v1"), "{tools:?}");
    assert!(
        !tools.iter().any(|(kind, _)| kind == "tool_search"),
        "{tools:?}"
    );
}

on_both_transports!(
    tools_follow_the_model,
    a_runtime_switch_decides_over_the_catalog
);
