//! Receiving: reads (kept messages first), waits for a matching message, and the request
//! routing that pairs each answer with the method of the request it answers, so the answer is
//! validated against that method's schema.

use std::time::Duration;

use serde_json::Value;

use super::transport::Raw;
use super::{Client, Recv, RpcError};
use crate::{clip, schema};

impl Client {
    pub(super) fn remember_request(&mut self, value: &Value) {
        if let (Some(id), Some(method)) = (value.get("id"), value.get("method")) {
            let method = method.as_str().unwrap_or("<non-string method>").to_owned();
            self.in_flight
                .entry(id.to_string())
                .or_default()
                .push_back(method);
        }
    }

    // ---- receiving ----------------------------------------------------------------------

    /// The next message (kept ones first); panics on timeout or close.
    pub async fn next_message(&mut self) -> Value {
        match self.recv(self.timeout).await {
            Recv::Message(msg) => msg,
            Recv::Closed(how) => self.fail(&format!("connection closed ({how})")),
            Recv::TimedOut => self.fail(&format!("no message within {:?}", self.timeout)),
        }
    }

    /// The next message (kept ones first), a close, or a timeout after `timeout`.
    pub async fn recv(&mut self, timeout: Duration) -> Recv {
        if let Some(msg) = self.queue.pop_front() {
            return Recv::Message(msg);
        }
        self.read_new(timeout).await
    }

    /// Wait for a message matching `pred`; others are kept for later. Panics on timeout or
    /// close, naming `what`.
    pub async fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(pos) = self.queue.iter().position(&pred) {
            return self.queue.remove(pos).expect("position is in range");
        }
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.read_new(left).await {
                Recv::Message(msg) if pred(&msg) => return msg,
                Recv::Message(msg) => self.queue.push_back(msg),
                Recv::Closed(how) => self.fail(&format!(
                    "connection closed ({how}) while waiting for {what}"
                )),
                Recv::TimedOut => self.fail(&format!(
                    "timed out after {:?} waiting for {what}",
                    self.timeout
                )),
            }
        }
    }

    /// The answer (result or error) to the request with this id.
    pub async fn response_to(&mut self, id: &Value) -> Result<Value, RpcError> {
        let what = format!("the response to request id {id}");
        let msg = self
            .wait_for(&what, |m| {
                m.get("method").is_none()
                    && m.get("id") == Some(id)
                    && (m.get("result").is_some() || m.get("error").is_some())
            })
            .await;
        match msg.get("error") {
            Some(error) => Err(RpcError::from_error_object(error)),
            None => Ok(msg["result"].clone()),
        }
    }

    /// Wait for a server notification with this method; returns the whole message
    /// (`method`, `params`, `emittedAtMs`, …).
    pub async fn wait_for_notification(&mut self, method: &str) -> Value {
        let what = format!("a `{method}` notification");
        self.wait_for(&what, |m| {
            m.get("id").is_none() && m.get("method").and_then(Value::as_str) == Some(method)
        })
        .await
    }

    /// Wait for the `item/started` notification of the item with this id; returns the whole
    /// message.
    pub async fn wait_for_item_started(&mut self, item_id: &str) -> Value {
        let what = format!("`{item_id}`'s item/started");
        self.wait_for(&what, |m| {
            m["method"] == "item/started" && m["params"]["item"]["id"] == item_id
        })
        .await
    }

    /// Assert that nothing arrives within `within` (keep it short: this is the one
    /// time-based check, for "no reply" rules).
    pub async fn expect_no_message_within(&mut self, within: Duration) {
        if let Some(msg) = self.queue.front().cloned() {
            self.fail(&format!("expected no message, but one was pending: {msg}"));
        }
        match self.read_new(within).await {
            Recv::TimedOut => {}
            Recv::Message(msg) => self.fail(&format!(
                "expected no message within {within:?}, got {}",
                clip(&msg.to_string(), 2000)
            )),
            Recv::Closed(how) => self.fail(&format!(
                "expected no message within {within:?}, but the connection closed ({how})"
            )),
        }
    }

    /// Read until the daemon closes the connection; returns the messages that came first.
    /// Panics if the connection stays open longer than the timeout after the last message.
    pub async fn read_until_closed(&mut self) -> Vec<Value> {
        let mut messages: Vec<Value> = self.queue.drain(..).collect();
        loop {
            match self.read_new(self.timeout).await {
                Recv::Message(msg) => messages.push(msg),
                Recv::Closed(_) => return messages,
                Recv::TimedOut => self.fail(&format!(
                    "the connection stayed open for {:?} after {} messages",
                    self.timeout,
                    messages.len()
                )),
            }
        }
    }

    /// Read and validate one new message from the transport.
    pub(super) async fn read_new(&mut self, timeout: Duration) -> Recv {
        self.read_new_or_pong(timeout, false).await
    }

    /// Like [`Client::read_new`]; with `stop_on_pong`, a pong ends the read early (reported
    /// as `TimedOut`, the pong itself is recorded in `pongs`).
    pub(super) async fn read_new_or_pong(&mut self, timeout: Duration, stop_on_pong: bool) -> Recv {
        if let Some(how) = &self.closed {
            return Recv::Closed(how.clone());
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let raw = loop {
            match tokio::time::timeout_at(deadline, self.reader.next()).await {
                Err(_) => return Recv::TimedOut,
                Ok(Err(how)) => {
                    self.closed = Some(how.clone());
                    return Recv::Closed(how);
                }
                Ok(Ok(Raw::Pong(payload))) => {
                    self.pongs.push(payload);
                    if stop_on_pong {
                        return Recv::TimedOut;
                    }
                }
                Ok(Ok(Raw::Text(raw))) => break raw,
            }
        };
        let msg: Value = match serde_json::from_str(&raw) {
            Ok(msg) => msg,
            Err(err) => self.fail(&format!(
                "the daemon sent something that is not JSON ({err}): {}",
                clip(&raw, 2000)
            )),
        };
        let method = self.answered_method(&msg);
        if let Err(problem) = schema::validate_message(&msg, method.as_deref()) {
            let context = match &method {
                Some(method) => format!(" (answer to a `{method}` request)"),
                None => String::new(),
            };
            self.fail(&format!(
                "invalid message from the daemon{context}: {problem}\nmessage: {}",
                clip(&raw, 4000)
            ));
        }
        self.log.push(msg.clone());
        Recv::Message(msg)
    }

    /// For a response or error, the method of the request it answers (consumed).
    fn answered_method(&mut self, msg: &Value) -> Option<String> {
        if msg.get("method").is_some() {
            return None;
        }
        let key = msg.get("id")?.to_string();
        let methods = self.in_flight.get_mut(&key)?;
        let method = methods.pop_front();
        if methods.is_empty() {
            self.in_flight.remove(&key);
        }
        method
    }
}
