//! `thread/readState/update` (experimental): a client marks a loaded durable thread read or
//! unread, guarded by the revision it saw (docs/protocol.md §7.26). The new state goes to
//! the thread's subscribers in `thread/readState/changed` before the response.

use weft_protocol::{
    ThreadReadStateChangedNotification, ThreadReadStateUpdateParams, ThreadReadStateUpdateResponse,
};

use crate::dispatch::{Answer, Context, HandlerResult};

/// `thread/readState/update`: core marks it (`ThreadManager::mark_read_state`).
pub async fn update(
    cx: Context<'_>,
    params: ThreadReadStateUpdateParams,
) -> HandlerResult<Answer<ThreadReadStateUpdateResponse>> {
    let read_state = cx.state.threads.mark_read_state(&params).await?;
    let changed = ThreadReadStateChangedNotification {
        thread_id: params.thread_id.clone(),
        read_state: read_state.clone(),
    };
    Ok(Answer::new(ThreadReadStateUpdateResponse { read_state })
        .before_subscribers(params.thread_id, changed))
}
