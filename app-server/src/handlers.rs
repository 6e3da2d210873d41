//! Request handlers, one file per domain. A handler takes the state, the connection and its
//! method's typed params, turns them into a core call, and returns the method's response or a
//! [`JsonRpcError`] carrying the reference's exact text; the router (`processor.rs`) sends
//! it. Two shapes:
//!
//! - Most handlers are `async fn … -> Result<R, JsonRpcError>`, where `R` is the response or
//!   an [`Answer`] (the response plus the notifications that must follow it, in order).
//! - Requests a thread answers itself (`turn/*`, `thread/compact/start`) go through the
//!   thread's mailbox: their handler gets a [`ThreadReply`] from the router, hands it to the
//!   thread with the op, and returns only the outcome of its up-front checks. The thread sends
//!   the response before the events the request causes (the `Reply` ordering contract).
//!
//! Files: [`initialize`]; [`threads`] (starting threads and loaded threads); [`history`]
//! (stored threads: list, read, resume, fork, archive, name); [`turns`]; [`models`];
//! [`account`]; [`config`]; [`hooks`]; [`skills`]; [`collaboration`].

pub mod account;
pub mod collaboration;
pub mod config;
pub mod goals;
pub mod history;
pub mod hooks;
pub mod initialize;
pub mod mcp;
pub mod models;
pub mod pages;
pub mod read_state;
pub mod skills;
pub mod terminals;
pub mod thread_list;
pub mod threads;
pub mod turns;

use std::marker::PhantomData;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use weft_core::events::Reply;
use weft_core::thread::{CoreError, ThreadHandle};
use weft_protocol::jsonrpc::{JsonRpcError, RequestId};
use weft_protocol::notifications::ServerNotification;
use weft_protocol::{ApprovalsReviewer, CodexErrorInfo, ThreadId, TurnError, wire_name};

use crate::connection::Connection;
use crate::outgoing;
use crate::state::AppState;

/// A handler's successful answer: the response, then the notifications that must follow it,
/// sent by the router in this order right after the response.
pub struct Answer<R> {
    /// The method's response.
    pub response: R,
    /// What follows the response.
    pub then: Vec<FollowUp>,
}

/// A notification that follows a response.
pub enum FollowUp {
    /// To every initialized connection that wants it.
    Broadcast(ServerNotification),
    /// To the requesting connection only, if it wants it.
    Caller(ServerNotification),
}

impl<R> Answer<R> {
    /// The response alone.
    pub fn new(response: R) -> Self {
        Answer {
            response,
            then: Vec::new(),
        }
    }

    /// Follow the response with a notification to everyone.
    pub fn then_broadcast(mut self, notification: impl Into<ServerNotification>) -> Self {
        self.then.push(FollowUp::Broadcast(notification.into()));
        self
    }

    /// Follow the response with a notification to the caller.
    pub fn then_tell_caller(mut self, notification: impl Into<ServerNotification>) -> Self {
        self.then.push(FollowUp::Caller(notification.into()));
        self
    }
}

/// What a handler may return on success: a bare response or an [`Answer`].
pub trait IntoAnswer {
    /// The response type.
    type Response: Serialize;
    /// The answer.
    fn into_answer(self) -> Answer<Self::Response>;
}

impl<R: Serialize> IntoAnswer for R {
    type Response = R;
    fn into_answer(self) -> Answer<R> {
        Answer::new(self)
    }
}

impl<R: Serialize> IntoAnswer for Answer<R> {
    type Response = R;
    fn into_answer(self) -> Answer<R> {
        self
    }
}

/// The response slot of a request a thread answers: made by the router for the request's
/// connection and id, handed to the thread as a core [`Reply`]. `R` is the method's response.
pub struct ThreadReply<R> {
    connection: Arc<Connection>,
    id: RequestId,
    response: PhantomData<fn() -> R>,
}

impl<R: Serialize + 'static> ThreadReply<R> {
    /// The slot for request `id` of `connection`.
    pub fn new(connection: Arc<Connection>, id: RequestId) -> Self {
        ThreadReply {
            connection,
            id,
            response: PhantomData,
        }
    }

    /// A core reply that queues the thread's answer, made into the response by
    /// `to_response`, on the connection (or the error, if the thread refused).
    pub fn into_core<T, F>(self, to_response: F) -> Reply<Result<T, CoreError>>
    where
        T: Send + 'static,
        F: FnOnce(T) -> R + Send + 'static,
    {
        let ThreadReply { connection, id, .. } = self;
        Reply::new(move |result: Result<T, CoreError>| {
            Box::pin(async move {
                let frame = match result {
                    Ok(value) => outgoing::response(&id, &to_response(value)),
                    Err(err) => outgoing::error(&id, &core_error(err)),
                };
                connection.answer(frame).await;
            })
        })
    }
}

/// `-32600` with a core error's message (and, for non-steerable turns, the `TurnError` data).
pub fn core_error(err: CoreError) -> JsonRpcError {
    let message = err.to_string();
    match err {
        CoreError::NotSteerable(kind) => {
            let data = TurnError {
                message: message.clone(),
                codex_error_info: Some(CodexErrorInfo::ActiveTurnNotSteerable { turn_kind: kind }),
                additional_details: None,
                misalignment: None,
            };
            JsonRpcError::invalid_request(message)
                .with_data(serde_json::to_value(data).unwrap_or(Value::Null))
        }
        CoreError::Overloaded => JsonRpcError::overloaded(),
        _ => JsonRpcError::invalid_request(message),
    }
}

/// Thread ids must be UUIDs; the error text is the reference's.
pub fn parse_thread_id(id: &ThreadId) -> Result<(), JsonRpcError> {
    uuid::Uuid::parse_str(id.as_str())
        .map(|_| ())
        .map_err(|err| JsonRpcError::invalid_request(format!("invalid thread id: {err}")))
}

/// A loaded thread's handle, or the reference's `thread not found` error.
pub fn loaded_thread(state: &AppState, id: &ThreadId) -> Result<ThreadHandle, JsonRpcError> {
    parse_thread_id(id)?;
    state
        .threads
        .get(id)
        .ok_or_else(|| JsonRpcError::invalid_request(format!("thread not found: {id}")))
}

/// Only `user` reviews approvals in Weft; the reviewing sub-agents are not implemented.
pub fn check_reviewer(reviewer: Option<ApprovalsReviewer>) -> Result<(), JsonRpcError> {
    match reviewer {
        None | Some(ApprovalsReviewer::User) => Ok(()),
        Some(other) => Err(JsonRpcError::invalid_request(format!(
            "approvalsReviewer `{}` is not supported by Weft; use `user`",
            wire_name(&other).unwrap_or_default()
        ))),
    }
}

/// The daemon's working directory: what an empty `cwds` means, and what relative ones are
/// taken from.
pub fn daemon_cwd() -> std::path::PathBuf {
    std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"))
}

/// One page of `items` from index `start`: at most `limit` items (at least one; all when
/// `None`), and whether more follow it.
pub fn page<T>(items: &[T], start: usize, limit: Option<u32>) -> (&[T], bool) {
    let limit = limit.map_or(usize::MAX, |l| l.max(1) as usize);
    let start = start.min(items.len());
    let end = start.saturating_add(limit).min(items.len());
    (&items[start..end], end < items.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages() {
        let items = [1, 2, 3, 4, 5];
        assert_eq!(page(&items, 0, None), (&items[..], false));
        assert_eq!(page(&items, 1, Some(2)), (&items[1..3], true));
        assert_eq!(page(&items, 3, Some(2)), (&items[3..], false));
        assert_eq!(page(&items, 2, Some(0)), (&items[2..3], true));
        assert_eq!(page(&items, 9, Some(2)), (&items[5..], false));
    }
}
