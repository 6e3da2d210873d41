//! Request handlers, one file per domain. A handler takes the request's context (the state
//! and the connection) and its method's typed params, turns them into a core call, and returns
//! the method's response or a [`JsonRpcError`] carrying the reference's exact text (core's
//! errors convert with `?`); the dispatcher (`dispatch.rs`) sends it, in the mode the route
//! table (`processor.rs`) names. Two shapes:
//!
//! - Most handlers are `async fn(Context<'_>, Params) -> HandlerResult<R>`, where `R` is the
//!   response or a `dispatch::Answer` (the response with the notifications that precede it and
//!   what follows it, in order). No handler sends anything itself. A method about one thread
//!   ([`ThreadParams`]) is routed `scoped(handler)`: the dispatcher checks its `threadId` first.
//!   One whose answer is always the same is a plain `fn() -> R`, in the route mode `fixed`.
//! - Requests a thread answers itself (`turn/*`, `thread/compact/start`, `thread/goal/set`) go
//!   through core: their handler gets a `dispatch::ThreadReply` and hands it to core with the
//!   request (`turn/*` and `thread/compact/start` return the op, which the dispatcher queues on
//!   the loaded thread), returning only the outcome of its up-front checks. The thread sends
//!   the response before the events the request causes (the `Reply` ordering contract).
//!
//! Files: [`initialize`]; [`threads`] (starting threads and loaded threads); [`history`]
//! (stored threads: list, read, resume, fork, archive, name); [`turns`]; [`models`];
//! [`account`]; [`config`]; [`hooks`]; [`skills`]; [`collaboration`].

pub mod account;
pub mod attachments;
pub mod collaboration;
pub mod command;
pub mod config;
pub mod config_write;
pub mod external_agent;
pub mod features;
pub mod feedback;
pub mod fs;
pub mod goals;
pub mod guardian;
pub mod history;
pub mod hooks;
pub mod initialize;
pub mod mcp;
pub mod mcp_oauth;
pub mod model_provider_write;
pub mod model_providers;
pub mod models;
pub mod pages;
pub mod permissions;
pub mod read_state;
pub mod revert;
pub mod review;
pub mod search;
pub mod search_sessions;
pub mod sections;
pub mod settings;
pub mod shell;
pub mod skills;
pub mod skills_write;
pub mod terminals;
pub mod thread_list;
pub mod thread_manage;
pub mod threads;
pub mod turns;

use weft_core::thread::ThreadHandle;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{ThreadId, history_api, thread_api, turn_api};

use crate::state::AppState;

/// Thread ids must be UUIDs; the error text is the reference's.
pub fn parse_thread_id(id: &ThreadId) -> Result<(), JsonRpcError> {
    uuid::Uuid::parse_str(id.as_str())
        .map(|_| ())
        .map_err(|err| JsonRpcError::invalid_request(format!("invalid thread id: {err}")))
}

/// The params of a method about one thread, named by their `threadId`: the dispatcher checks
/// it before the handler runs (`dispatch::scoped`, `Dispatcher::to_thread`).
pub trait ThreadParams {
    /// The thread the request is about.
    fn thread_id(&self) -> &ThreadId;
}

macro_rules! thread_params {
    ($($params:ty),* $(,)?) => {
        $(impl ThreadParams for $params {
            fn thread_id(&self) -> &ThreadId {
                &self.thread_id
            }
        })*
    };
}

thread_params!(
    thread_api::ThreadResumeParams,
    thread_api::ThreadForkParams,
    thread_api::ThreadReadParams,
    thread_api::ThreadArchiveParams,
    thread_api::ThreadUnarchiveParams,
    thread_api::ThreadUnsubscribeParams,
    thread_api::ThreadSetNameParams,
    thread_api::ThreadCompactStartParams,
    weft_protocol::ThreadRevertParams,
    weft_protocol::ThreadShellCommandParams,
    turn_api::TurnStartParams,
    turn_api::TurnSteerParams,
    turn_api::TurnInterruptParams,
    history_api::ThreadTurnsListParams,
    history_api::ThreadItemsListParams,
    weft_protocol::ThreadReadStateUpdateParams,
    weft_protocol::ThreadGoalGetParams,
    weft_protocol::ThreadGoalSetParams,
    weft_protocol::ThreadGoalClearParams,
    weft_protocol::ThreadBackgroundTerminalsListParams,
    weft_protocol::ThreadBackgroundTerminalsTerminateParams,
    weft_protocol::ThreadBackgroundTerminalsCleanParams,
    weft_protocol::McpServerToolCallParams,
    weft_protocol::ReviewStartParams,
    weft_protocol::ThreadApproveGuardianDeniedActionParams,
    weft_protocol::ThreadSettingsUpdateParams,
    weft_protocol::ThreadDeleteParams,
    weft_protocol::ThreadMetadataUpdateParams,
    weft_protocol::ThreadInjectItemsParams,
    weft_protocol::ThreadSectionMoveParams,
);

/// A loaded thread's handle, or the reference's `thread not found` error.
pub fn loaded_thread(state: &AppState, id: &ThreadId) -> Result<ThreadHandle, JsonRpcError> {
    parse_thread_id(id)?;
    state
        .threads
        .get(id)
        .ok_or_else(|| JsonRpcError::invalid_request(format!("thread not found: {id}")))
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
