//! Stored threads: `thread/read`, `thread/resume`, `thread/fork`,
//! `thread/archive`, `thread/unarchive` and `thread/name/set`.

use weft_core::thread::{ThreadHandle, ThreadSnapshot};
use weft_protocol::history_api::ThreadResumeInitialTurnsPageParams;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::notifications::{
    ThreadArchivedNotification, ThreadNameUpdatedNotification, ThreadStartedNotification,
    ThreadStatusChangedNotification, ThreadUnarchivedNotification,
};
use weft_protocol::thread_api::{
    ThreadArchiveParams, ThreadArchiveResponse, ThreadForkParams, ThreadForkResponse,
    ThreadReadParams, ThreadReadResponse, ThreadResumeParams, ThreadResumeResponse,
    ThreadSetNameParams, ThreadSetNameResponse, ThreadUnarchiveParams, ThreadUnarchiveResponse,
};

use crate::dispatch::{Answer, Context, HandlerResult};
use crate::handlers::goals;
use crate::handlers::threads::{replay_token_usage, requested_settings, settings_response};
use crate::state::AppState;

/// `thread/resume`. A cold resume tells everyone the thread's status before the response;
/// the caller then gets the thread's last token usage.
pub async fn resume(
    cx: Context<'_>,
    params: ThreadResumeParams,
) -> HandlerResult<Answer<ThreadResumeResponse>> {
    let options = requested_settings!(params.overrides, ephemeral: false, thread_source: None)
        .into_options(cx.connection);
    // A cold resume makes this list the thread's before anyone else can see it loaded
    // (`EventSink::loaded`), so a concurrent warm resume from another cx.connection joins it.
    let subscribers = cx.state.new_subscribers();
    let (handle, mut snapshot, warm) = cx
        .state
        .threads
        .resume_thread(&params.thread_id, options, subscribers.clone())
        .await?;
    let subscribers = if warm {
        cx.state.subscribers_of(handle.id()).unwrap_or(subscribers)
    } else {
        subscribers
    };
    subscribers.subscribe(cx.connection);
    let status = snapshot.thread.status.clone();
    let pages = params.initial_turns_page;
    let resumed = resumed(
        cx.state,
        &handle,
        &mut snapshot,
        params.exclude_turns,
        pages,
    )
    .await;
    let answer = match resumed {
        Ok(response) => {
            let answer = replay_token_usage(
                Answer::new(response),
                handle.id(),
                snapshot.token_usage.take(),
            );
            match goals::on_resume(cx.state, handle.id()).await {
                Some(goal) => answer.then_tell_caller(goal),
                None => answer,
            }
        }
        Err(err) => Answer::error(err),
    };
    if warm {
        return Ok(answer);
    }
    // A thread coming back into memory announces its status to everyone, even when its
    // response is an error.
    Ok(answer.before_broadcast(ThreadStatusChangedNotification {
        thread_id: handle.id().clone(),
        status,
    }))
}

/// The `thread/resume` response for a resumed thread: its turns (unless excluded) and the
/// cursors of its history pages.
async fn resumed(
    state: &AppState,
    handle: &ThreadHandle,
    snapshot: &mut ThreadSnapshot,
    exclude_turns: bool,
    initial_turns_page: Option<ThreadResumeInitialTurnsPageParams>,
) -> Result<ThreadResumeResponse, JsonRpcError> {
    let mut response = settings_response(snapshot);
    if !exclude_turns {
        response.thread.turns = full_turns(state, handle, snapshot).await?;
    }
    let pages = state
        .threads
        .resume_pages(handle.id(), initial_turns_page)
        .await?;
    let mut response = ThreadResumeResponse::from(response);
    response.initial_turns_page = pages.initial_turns_page;
    response.turns_backwards_cursor = pages.turns_backwards_cursor;
    response.items_backwards_cursor = pages.items_backwards_cursor;
    response.collaboration_mode = Some(super::threads::reported_mode(snapshot));
    Ok(response)
}

/// The snapshot's turns with every item (those of earlier turns read back from the rollout).
async fn full_turns(
    state: &AppState,
    handle: &ThreadHandle,
    snapshot: &mut ThreadSnapshot,
) -> Result<Vec<weft_protocol::Turn>, JsonRpcError> {
    let turns = std::mem::take(&mut snapshot.turns);
    Ok(state.threads.full_turns(handle.id(), turns).await?)
}

/// `thread/fork`. The reference replays the copied token usage before announcing the new
/// thread (docs/protocol.md §7.4): response → `thread/tokenUsage/updated` → `thread/started`.
pub async fn fork(
    cx: Context<'_>,
    params: ThreadForkParams,
) -> HandlerResult<Answer<ThreadForkResponse>> {
    let options = requested_settings!(
        params.overrides,
        ephemeral: params.ephemeral,
        thread_source: params.thread_source
    )
    .into_options(cx.connection);
    let subscribers = cx.state.new_subscribers();
    subscribers.subscribe(cx.connection);
    let (handle, mut snapshot) = cx
        .state
        .threads
        .fork_thread(
            &params.thread_id,
            params.last_turn_id.as_ref(),
            options,
            subscribers.clone(),
        )
        .await?;
    super::attachments::copy_to_fork(cx.state, &params.thread_id, handle.id()).await;
    let mut response = settings_response(&snapshot);
    if !params.exclude_turns {
        response.thread.turns = full_turns(cx.state, &handle, &mut snapshot).await?;
    }
    let answer = Answer::new(ThreadForkResponse::from(response));
    Ok(
        replay_token_usage(answer, handle.id(), snapshot.token_usage).then_broadcast(
            ThreadStartedNotification {
                thread: snapshot.thread,
            },
        ),
    )
}

/// `thread/read`.
pub async fn read(cx: Context<'_>, params: ThreadReadParams) -> HandlerResult<ThreadReadResponse> {
    let thread = cx
        .state
        .threads
        .read_thread(&params.thread_id, params.include_turns)
        .await?;
    let read_state = cx.state.threads.read_state(&params.thread_id).await?;
    Ok(ThreadReadResponse { thread, read_state })
}

/// `thread/archive`. A loaded thread is unloaded first (`thread/status/changed {notLoaded}`
/// to everyone, before the response); `thread/archived` follows the response. Archiving the
/// root of a sub-agent tree closes the tree: its loaded sub-agents are unloaded too (a running
/// turn is interrupted), each with `thread/status/changed {notLoaded}` to its subscribers,
/// before the response (and before the root's).
pub async fn archive(
    cx: Context<'_>,
    params: ThreadArchiveParams,
) -> HandlerResult<Answer<ThreadArchiveResponse>> {
    let thread_id = params.thread_id;
    // Unloading it told everyone it is not loaded (before its sub-agents, closed next).
    cx.state.threads.archive_thread(&thread_id).await?;
    cx.state.threads.close_tree(&thread_id).await;
    Ok(Answer::new(ThreadArchiveResponse {})
        .then_broadcast(ThreadArchivedNotification { thread_id }))
}

/// `thread/unarchive`; `thread/unarchived` follows the response.
pub async fn unarchive(
    cx: Context<'_>,
    params: ThreadUnarchiveParams,
) -> HandlerResult<Answer<ThreadUnarchiveResponse>> {
    let thread_id = params.thread_id;
    let thread = cx.state.threads.unarchive_thread(&thread_id).await?;
    Ok(Answer::new(ThreadUnarchiveResponse { thread })
        .then_broadcast(ThreadUnarchivedNotification { thread_id }))
}

/// `thread/name/set`; `thread/name/updated` follows the response.
pub async fn set_name(
    cx: Context<'_>,
    params: ThreadSetNameParams,
) -> HandlerResult<Answer<ThreadSetNameResponse>> {
    let ThreadSetNameParams { thread_id, name } = params;
    cx.state.threads.set_thread_name(&thread_id, &name).await?;
    Ok(
        Answer::new(ThreadSetNameResponse {}).then_broadcast(ThreadNameUpdatedNotification {
            thread_id,
            thread_name: Some(name.trim().to_string()),
        }),
    )
}
