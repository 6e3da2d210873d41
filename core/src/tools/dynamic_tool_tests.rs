//! Tests of the client-defined tools: what is offered, how calls resolve, what the model gets.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use weft_protocol::{
    DynamicToolCallOutputContentItem, DynamicToolCallStatus, DynamicToolSpec, ThreadItemDetails,
};

use super::*;
use crate::model::ResponseItem;
use crate::tools::context::{ToolCall, ToolInput};
use crate::tools::offer::ToolOffer;
use crate::tools::runtime::ToolRuntime;
use crate::tools::tests::{ScriptedSink, plain_turn};
use crate::tools::tool::ToolSet;

fn tools() -> Vec<DynamicToolSpec> {
    serde_json::from_value(json!([
        {"type": "function", "name": "lookup", "description": "Look up.",
         "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
        {"type": "namespace", "name": "ns", "description": "A namespace.", "tools": [
            {"type": "function", "name": "act", "description": "Act.", "inputSchema": {}},
            {"type": "function", "name": "later", "description": "Deferred.", "inputSchema": {},
             "deferLoading": true}
        ]},
        {"type": "namespace", "name": "hidden", "description": "All deferred.", "tools": [
            {"type": "function", "name": "x", "description": "x", "inputSchema": {},
             "deferLoading": true}
        ]}
    ]))
    .unwrap()
}

#[test]
fn offered_as_function_and_namespace_tools_without_deferred_ones() {
    assert_eq!(
        dynamic_tool_specs(&tools()),
        vec![
            json!({"type": "function", "name": "lookup", "description": "Look up.",
                   "strict": false,
                   "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}),
            json!({"type": "namespace", "name": "ns", "description": "A namespace.", "tools": [
                {"type": "function", "name": "act", "description": "Act.", "strict": false,
                 "parameters": {}}
            ]}),
        ]
    );
}

#[test]
fn calls_resolve_by_name_and_namespace_or_flat_name() {
    let tools = tools();
    assert_eq!(
        resolve(&tools, None, "lookup"),
        Some((None, "lookup".to_string()))
    );
    assert_eq!(
        resolve(&tools, Some("ns"), "act"),
        Some((Some("ns".to_string()), "act".to_string()))
    );
    assert_eq!(
        resolve(&tools, None, "ns__act"),
        Some((Some("ns".to_string()), "act".to_string()))
    );
    assert_eq!(resolve(&tools, None, "act"), None);
    assert_eq!(resolve(&tools, Some("ns"), "lookup"), None);
    assert_eq!(resolve(&tools, Some("ns"), "later"), None);
    assert_eq!(resolve(&tools, None, "nothing"), None);
}

fn answered(value: Value) -> DynamicToolResult {
    read_result(ServerRequestOutcome::Answered(value))
}

#[test]
fn answers_become_the_model_output() {
    let text = |t: &str| DynamicToolCallOutputContentItem::InputText { text: t.into() };
    // One text part: a plain string.
    let one =
        answered(json!({"contentItems": [{"type": "inputText", "text": "hi"}], "success": true}));
    assert_eq!(one.output, ToolOutput::Text("hi".into()));
    assert_eq!((one.content_items, one.success), (vec![text("hi")], true));
    // Several parts, `success: false`: content parts, the item fails.
    let many = answered(json!({"contentItems": [
        {"type": "inputText", "text": "a"},
        {"type": "inputImage", "imageUrl": "data:image/png;base64,AAAA"},
        {"type": "inputAudio", "audioUrl": "data:audio/wav;base64,AAAA"}
    ], "success": false}));
    assert!(!many.success);
    assert_eq!(
        many.output,
        ToolOutput::Content(vec![
            ContentItem::InputText { text: "a".into() },
            ContentItem::InputImage {
                image_url: "data:image/png;base64,AAAA".into(),
                detail: None
            },
            ContentItem::InputText {
                text: AUDIO_OMITTED.into()
            },
        ])
    );
    // No parts: an empty list.
    let none = answered(json!({"contentItems": [], "success": true}));
    assert_eq!(none.output, ToolOutput::Content(Vec::new()));
    // A remote image fails the call.
    let remote = answered(json!({"contentItems": [
        {"type": "inputImage", "imageUrl": "https://example.com/a.png"}
    ], "success": true}));
    assert_eq!(remote.output, ToolOutput::Text(REMOTE_IMAGE.into()));
    assert_eq!(
        (remote.content_items, remote.success),
        (vec![text(REMOTE_IMAGE)], false)
    );
}

#[test]
fn no_answer_is_an_error_output() {
    let invalid = answered(json!({"bogus": 1}));
    assert_eq!(invalid.output, ToolOutput::Text(RESPONSE_INVALID.into()));
    assert!(!invalid.success);
    let failed = read_result(ServerRequestOutcome::Failed("boom".into()));
    assert_eq!(failed.output, ToolOutput::Text(REQUEST_FAILED.into()));
    assert_eq!(
        failed.content_items,
        vec![DynamicToolCallOutputContentItem::InputText {
            text: REQUEST_FAILED.into()
        }]
    );
    let cancelled = read_result(ServerRequestOutcome::Cancelled);
    assert_eq!(cancelled.output, ToolOutput::Text(CANCELLED.into()));
    assert!(cancelled.content_items.is_empty());
    assert!(!cancelled.success);
}

/// The thread's tools for a turn offering the client-defined tools of [`tools`].
fn tool_set(runtime: &ToolRuntime, turn: &ToolTurn) -> Arc<ToolSet> {
    let offer = ToolOffer {
        dynamic_tools: Arc::new(tools()),
        ..ToolOffer::default()
    };
    runtime.tool_set(&offer, turn)
}

/// Run one call on a new thread's tools.
fn handle(
    call: ToolCall,
    turn: ToolTurn,
) -> impl std::future::Future<Output = ResponseItem> + 'static {
    tool_set(&ToolRuntime::new(), &turn).handle(call, turn)
}

/// A sink answering the first request with `answer`, or never.
fn sink(answer: Option<ServerRequestOutcome>) -> Arc<ScriptedSink> {
    let sink = Arc::new(ScriptedSink::default());
    match answer {
        Some(outcome) => sink.answer(outcome),
        None => sink.never_answer(),
    }
    sink
}

fn turn(sink: Arc<ScriptedSink>, cancel: CancellationToken) -> ToolTurn {
    plain_turn(sink, "turn", cancel)
}

fn function_call(name: &str, namespace: Option<&str>, arguments: &str) -> ToolCall {
    ToolCall {
        call_id: "call_1".into(),
        name: name.into(),
        namespace: namespace.map(str::to_string),
        input: ToolInput::Function(arguments.into()),
    }
}

#[tokio::test]
async fn a_namespaced_call_is_asked_and_answered() {
    let sink = sink(Some(ServerRequestOutcome::Answered(json!({
        "contentItems": [{"type": "inputText", "text": "done"}], "success": true
    }))));
    let output = handle(
        function_call("act", Some("ns"), r#"{"x": 1}"#),
        turn(sink.clone(), CancellationToken::new()),
    )
    .await;
    assert_eq!(output, ResponseItem::function_call_output("call_1", "done"));
    assert_eq!(
        sink.labels(),
        [
            "started:dynamicToolCall",
            "request:dynamicTool",
            "completed:dynamicToolCall",
        ]
    );
    let asked = sink.dynamic_requests();
    let asked: Vec<_> = asked
        .iter()
        .map(|p| {
            (
                p.namespace.as_deref(),
                p.tool.as_str(),
                p.arguments.to_string(),
            )
        })
        .collect();
    assert_eq!(asked, [(Some("ns"), "act", r#"{"x":1}"#.to_string())]);
    let items = sink.items();
    let ThreadItemDetails::DynamicToolCall(started) = &items[0] else {
        panic!("{items:?}");
    };
    assert_eq!(started.status, DynamicToolCallStatus::InProgress);
    assert_eq!(started.content_items, None);
    let ThreadItemDetails::DynamicToolCall(done) = &items[1] else {
        panic!("{items:?}");
    };
    assert_eq!(done.status, DynamicToolCallStatus::Completed);
    assert_eq!(done.namespace.as_deref(), Some("ns"));
    assert_eq!(done.arguments, json!({"x": 1}));
    assert_eq!(done.success, Some(true));
    assert!(done.duration_ms.is_some());
}

#[tokio::test]
async fn bad_arguments_are_not_asked() {
    let sink = sink(None);
    let output = handle(
        function_call("lookup", None, "not json"),
        turn(sink.clone(), CancellationToken::new()),
    )
    .await;
    let ResponseItem::FunctionCallOutput { output, .. } = output else {
        panic!("{output:?}");
    };
    assert!(
        output
            .text()
            .starts_with("failed to parse function arguments: "),
        "{output:?}"
    );
    assert!(sink.seen().is_empty());
}

#[tokio::test]
async fn an_interrupt_withdraws_the_request() {
    let sink = sink(None);
    let cancel = CancellationToken::new();
    let task = tokio::spawn(handle(
        function_call("lookup", None, "{}"),
        turn(sink.clone(), cancel.clone()),
    ));
    while sink.seen().len() < 2 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    cancel.cancel();
    let output = task.await.unwrap();
    assert_eq!(
        output,
        ResponseItem::function_call_output("call_1", CANCELLED)
    );
    let items = sink.items();
    let Some(ThreadItemDetails::DynamicToolCall(done)) = items.last() else {
        panic!("{items:?}");
    };
    assert_eq!(done.status, DynamicToolCallStatus::Failed);
    assert_eq!(done.content_items, Some(Vec::new()));
    assert_eq!(done.success, Some(false));
}

#[tokio::test]
async fn unknown_names_stay_unsupported() {
    let sink = sink(None);
    let output = handle(
        function_call("later", Some("ns"), "{}"),
        turn(sink.clone(), CancellationToken::new()),
    )
    .await;
    assert_eq!(
        output,
        ResponseItem::function_call_output("call_1", "unsupported call: later")
    );
    assert!(sink.seen().is_empty());
}
