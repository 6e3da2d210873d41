//! Issue 12: collaboration modes (Default, Plan), `request_user_input`, permission profiles and
//! the other `thread/start` / `turn/start` params the Codex TUI sends (docs/protocol.md §7.25),
//! end to end against the mock model. Every client here initializes with `experimentalApi`.

mod permissions;
mod plan;
mod plan_items;
mod settings;
pub mod user_input;

use std::path::PathBuf;

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::{Client, Transport};

use crate::turns::{Harness, Setup, run_turn_with_on, str_at};

/// The TUI's handshake.
pub fn experimental_init() -> Value {
    json!({
        "clientInfo": {"name": "weft-e2e", "title": "Weft e2e tests", "version": "0.1.0"},
        "capabilities": {"experimentalApi": true}
    })
}

/// A harness whose first client opted into the experimental API, and a workspace.
pub struct Modes {
    /// Mock, daemon, first client.
    pub h: Harness,
    /// The threads' cwd (`$WEFT_HOME/ws`, canonical).
    pub ws: PathBuf,
}

impl Modes {
    /// Start the daemon on `transport`.
    pub async fn start(transport: Transport) -> Modes {
        let h = Harness::start(Setup::new(transport).init_params(experimental_init())).await;
        let ws = h.home.path().join("ws");
        std::fs::create_dir_all(&ws).expect("create the workspace");
        let ws = std::fs::canonicalize(&ws).expect("canonical workspace");
        Modes { h, ws }
    }

    /// The workspace as a string.
    pub fn cwd(&self) -> String {
        self.ws.display().to_string()
    }

    /// `thread/start` with these extra params (cwd = the workspace); waits for
    /// `thread/started` and returns the response.
    pub async fn thread(&mut self, params: Value) -> Value {
        let mut params = params;
        params["cwd"] = json!(self.cwd());
        let result = self
            .h
            .client
            .request("thread/start", params)
            .await
            .unwrap_or_else(|err| panic!("thread/start failed: {err}"));
        let thread_id = str_at(&result, "/thread/id");
        self.h
            .client
            .wait_for("thread/started", |m| {
                m["method"] == "thread/started" && m["params"]["thread"]["id"] == thread_id.as_str()
            })
            .await;
        result
    }

    /// `thread/start` with no extra params; the thread id.
    pub async fn plain_thread(&mut self) -> String {
        let started = self.thread(json!({})).await;
        str_at(&started, "/thread/id")
    }

    /// Queue a mock reply.
    pub fn push(&self, reply: Reply) {
        self.h.push(reply);
    }

    /// `turn/start` with these params (plus the thread and one text input), then every
    /// message through `turn/completed`.
    pub async fn turn(&mut self, thread_id: &str, text: &str, extra: Value) -> Vec<Value> {
        let params = turn_params(thread_id, text, extra);
        run_turn_with_on(&mut self.h.client, params).await.messages
    }
}

/// Send `turn/start` (thread, one text input, and `extra`'s members); returns the request id.
pub async fn send_turn(client: &mut Client, thread_id: &str, text: &str, extra: Value) -> Value {
    let params = turn_params(thread_id, text, extra);
    client.send_request("turn/start", params).await
}

/// `turn/start` params: the thread, one text input, and `extra`'s members.
fn turn_params(thread_id: &str, text: &str, extra: Value) -> Value {
    let mut params = json!({
        "threadId": thread_id,
        "input": [{"type": "text", "text": text, "text_elements": []}],
    });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    params
}

/// A `collaborationMode` param.
pub fn mode(kind: &str, instructions: Option<&str>) -> Value {
    json!({
        "mode": kind,
        "settings": {"model": "mock-model", "reasoning_effort": null, "developer_instructions": instructions}
    })
}

/// `turn/start` params choosing the collaboration mode `kind` with its built-in instructions.
pub fn in_mode(kind: &str) -> Value {
    json!({"collaborationMode": mode(kind, None)})
}

/// The developer messages of a model request that carry a collaboration mode.
pub fn mode_messages(request: &weft_mock_model::RecordedRequest) -> Vec<String> {
    request
        .message_texts("developer")
        .into_iter()
        .filter(|text| text.starts_with("<collaboration_mode>"))
        .collect()
}

/// The names of the tools a model request offers.
pub fn tool_names(request: &weft_mock_model::RecordedRequest) -> Vec<String> {
    request
        .tools()
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect()
}

async fn modes_are_listed(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let result =
        m.h.client
            .request_ok("collaborationMode/list", json!({}))
            .await;
    assert_eq!(
        result,
        json!({"data": [
            {"name": "Plan", "mode": "plan", "model": null, "reasoning_effort": "medium"},
            {"name": "Default", "mode": "default", "model": null, "reasoning_effort": null}
        ]})
    );
    // A client without the experimental API is refused, as by the reference.
    let mut plain = Harness::responses(transport).await;
    crate::turns::assert_invalid_request(
        plain
            .client
            .request("collaborationMode/list", json!({}))
            .await,
        "collaborationMode/list requires experimentalApi capability",
    );
}

on_both_transports!(modes_are_listed);
