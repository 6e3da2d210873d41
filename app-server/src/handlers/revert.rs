//! `thread/revert` (docs/protocol.md §7.27): the history cut before a turn, and with Weft's
//! `restoreWorkspace` the workspace put back from the ghost snapshot taken before it.

use weft_protocol::{ThreadRevertParams, ThreadRevertResponse, ThreadRevertedNotification};

use crate::dispatch::{Answer, Context, HandlerResult};
use crate::handlers::loaded_thread;

/// `thread/revert`: the caller joins the thread's subscribers (as the reference's revert
/// attaches its listener); the response, then `thread/reverted` to every connection.
pub async fn revert(
    cx: Context<'_>,
    params: ThreadRevertParams,
) -> HandlerResult<Answer<ThreadRevertResponse>> {
    let handle = loaded_thread(cx.state, &params.thread_id)?;
    if let Some(subscribers) = cx.state.subscribers_of(handle.id()) {
        subscribers.subscribe(cx.connection);
    }
    let snapshot = cx
        .state
        .threads
        .revert_thread(
            handle.id(),
            params.before_turn_id,
            params.restore_workspace.unwrap_or(false),
        )
        .await?;
    let pages = cx.state.threads.resume_pages(handle.id(), None).await?;
    let mut thread = snapshot.thread;
    thread.turns = Vec::new();
    let thread_id = thread.id.clone();
    Ok(Answer::new(ThreadRevertResponse {
        thread,
        turns_backwards_cursor: pages.turns_backwards_cursor,
        items_backwards_cursor: pages.items_backwards_cursor,
    })
    .then_broadcast(ThreadRevertedNotification { thread_id }))
}
