//! Requests that tests of many areas send, named by what they ask ([`Requests`], on the test
//! [`Client`]): each returns the answer as it came (result or JSON-RPC error), so the test
//! asserts on it as before; the `_params` functions build the params for a test that sends
//! without waiting.

use serde::Serialize;
use serde_json::{Value, json};
use weft_test_support::{Client, RpcError};

use crate::turns::{text_input, turn_start_params};

/// A request's answer: its result, or the JSON-RPC error.
pub type Answer = Result<Value, RpcError>;

/// `turn/interrupt` params.
pub fn interrupt_params(thread: impl Serialize, turn: impl Serialize) -> Value {
    json!({"threadId": thread, "turnId": turn})
}

/// `turn/steer` params: one text input for the running turn `turn`.
pub fn steer_params(thread: impl Serialize, turn: impl Serialize, text: &str) -> Value {
    json!({"threadId": thread, "expectedTurnId": turn, "input": [text_input(text)]})
}

/// `thread/name/set` params.
pub fn name_params(thread: impl Serialize, name: impl Serialize) -> Value {
    json!({"threadId": thread, "name": name})
}

/// The `status` of a thread, by `thread/read` (which must succeed).
pub async fn thread_status(client: &mut Client, thread: &str) -> Value {
    let read = client.request("thread/read", json!({"threadId": thread}));
    read.await.unwrap()["thread"]["status"].clone()
}

/// The requests, by name.
pub trait Requests {
    /// `turn/interrupt`.
    async fn interrupt(&mut self, thread: impl Serialize, turn: impl Serialize) -> Answer;
    /// `thread/read`.
    async fn thread_read(&mut self, thread: impl Serialize, turns: impl Serialize) -> Answer;
    /// `thread/name/set`.
    async fn set_name(&mut self, thread: impl Serialize, name: impl Serialize) -> Answer;
    /// `turn/start` with one text input.
    async fn turn_start(&mut self, thread: &str, text: &str) -> Answer;
    /// `turn/steer` with one text input.
    async fn steer(&mut self, thread: impl Serialize, turn: impl Serialize, text: &str) -> Answer;
}

impl Requests for Client {
    async fn interrupt(&mut self, thread: impl Serialize, turn: impl Serialize) -> Answer {
        let params = interrupt_params(thread, turn);
        self.request("turn/interrupt", params).await
    }

    async fn thread_read(&mut self, thread: impl Serialize, turns: impl Serialize) -> Answer {
        let params = json!({"threadId": thread, "includeTurns": turns});
        self.request("thread/read", params).await
    }

    async fn set_name(&mut self, thread: impl Serialize, name: impl Serialize) -> Answer {
        self.request("thread/name/set", name_params(thread, name))
            .await
    }

    async fn turn_start(&mut self, thread: &str, text: &str) -> Answer {
        self.request("turn/start", turn_start_params(thread, text))
            .await
    }

    async fn steer(&mut self, thread: impl Serialize, turn: impl Serialize, text: &str) -> Answer {
        self.request("turn/steer", steer_params(thread, turn, text))
            .await
    }
}
