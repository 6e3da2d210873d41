//! Request handlers, one file per domain. A handler takes the state, the connection and its
//! method's typed params, turns them into a core call, and returns the method's response or a
//! [`JsonRpcError`] carrying the reference's exact text (core's errors convert with `?`); the
//! dispatcher (`dispatch.rs`) sends it, in the mode the route table (`processor.rs`) names.
//! Two shapes:
//!
//! - Most handlers are `async fn(&AppState, &Arc<Connection>, Params) -> Result<R,
//!   JsonRpcError>`, where `R` is the response or a `dispatch::Answer` (the response with the
//!   notifications that precede it and what follows it, in order). No handler sends anything
//!   itself.
//! - Requests a thread answers itself (`turn/*`, `thread/compact/start`, `thread/goal/set`) go
//!   through core: their handler gets a `dispatch::ThreadReply`, hands it to core with the
//!   request, and returns only the outcome of its up-front checks. The thread sends the
//!   response before the events the request causes (the `Reply` ordering contract).
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

use weft_core::thread::ThreadHandle;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{ApprovalsReviewer, ThreadId, wire_name};

use crate::state::AppState;

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
