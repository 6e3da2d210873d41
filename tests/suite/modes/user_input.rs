//! `request_user_input`: the model's questions become the `item/tool/requestUserInput`
//! server request; the client's answers reach the model as JSON; an interrupt withdraws the
//! request (`serverRequest/resolved`) and ends the turn `interrupted`.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{Modes, in_mode, send_turn};
use crate::requests::interrupt_params;
use crate::tools::{answer, output_of, wait_request};
use crate::turns::read_through_turn_completed;
use crate::turns::read_through_turn_ending;

/// A mock reply asking the user where the data should live (two options).
pub fn ask_call(call_id: &str) -> Reply {
    Reply::new().function_call(
        call_id,
        "request_user_input",
        json!({"questions": [{
            "id": "storage",
            "header": "Storage",
            "question": "Where should the data live?",
            "options": [
                {"label": "SQLite (Recommended)", "description": "One file, no server."},
                {"label": "Postgres", "description": "A server to run."}
            ]
        }]})
        .to_string(),
    )
}

/// `turn/start` on `thread` with `text` in the collaboration mode `kind`, and the turn's
/// questions: the `turn/start` request id and the `item/tool/requestUserInput` request.
async fn asked(m: &mut Modes, thread: &str, text: &str, kind: &str) -> (Value, Value) {
    let id = send_turn(&mut m.h.client, thread, text, in_mode(kind)).await;
    let request = wait_request(&mut m.h.client, "item/tool/requestUserInput").await;
    (id, request)
}

async fn questions_reach_the_client_and_answers_the_model(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let thread = m.plain_thread().await;
    m.push(ask_call("call_ask"));
    m.push(Reply::new().text("SQLite it is."));
    let (id, request) = asked(&mut m, &thread, "plan the storage", "plan").await;
    let params = &request["params"];
    assert_eq!(params["threadId"], thread.as_str());
    assert_eq!(params["itemId"], "call_ask");
    assert_eq!(params["isBlocking"], true);
    assert_eq!(
        params["questions"],
        json!([{
            "id": "storage",
            "header": "Storage",
            "question": "Where should the data live?",
            "isOther": true,
            "isSecret": false,
            "options": [
                {"label": "SQLite (Recommended)", "description": "One file, no server."},
                {"label": "Postgres", "description": "A server to run."}
            ]
        }])
    );
    answer(
        &mut m.h.client,
        &request,
        json!({"answers": {"storage": {"answers": ["SQLite (Recommended)"]}}}),
    )
    .await;
    let messages = read_through_turn_completed(&mut m.h.client).await;
    assert!(
        messages
            .iter()
            .any(|msg| msg.get("id") == Some(&id) || msg["method"] == "turn/completed")
    );
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    let request_id = request["id"].clone();
    assert!(
        messages
            .iter()
            .any(|msg| msg["method"] == "serverRequest/resolved"
                && msg["params"]["requestId"] == request_id),
        "{messages:?}"
    );
    let output: Value = serde_json::from_str(&m.h.output_in(2, "call_ask").await).unwrap();
    assert_eq!(
        output,
        json!({"answers": {"storage": {"answers": ["SQLite (Recommended)"]}}})
    );
}

async fn an_interrupt_withdraws_the_questions(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let thread = m.plain_thread().await;
    m.push(ask_call("call_ask"));
    let (_id, request) = asked(&mut m, &thread, "plan", "default").await;
    let turn = request["params"]["turnId"].as_str().unwrap().to_string();
    m.h.client
        .send_request("turn/interrupt", interrupt_params(&thread, &turn))
        .await;
    let messages = read_through_turn_ending(&mut m.h.client, "interrupted").await;
    let request_id = request["id"].clone();
    let resolved = |msg: &Value| {
        msg["method"] == "serverRequest/resolved" && msg["params"]["requestId"] == request_id
    };
    if !messages.iter().any(resolved) {
        m.h.client
            .wait_for(
                "serverRequest/resolved for the withdrawn questions",
                resolved,
            )
            .await;
    }
    // The thread takes the next turn; the model saw the call answered as interrupted.
    m.push(Reply::new().text("Again."));
    let messages = m.turn(&thread, "next", json!({})).await;
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    let requests = m.h.wait_for_requests(2).await;
    requests[1].check_tool_pairing().unwrap();
    assert_eq!(
        output_of(&requests[1], "call_ask"),
        "request_user_input was interrupted before the user answered"
    );
}

on_both_transports!(
    questions_reach_the_client_and_answers_the_model,
    an_interrupt_withdraws_the_questions,
);
