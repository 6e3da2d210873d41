//! `thread/goal/get`, `thread/goal/set` and `thread/goal/clear`: a thread's goal, kept in the
//! state DB so that it survives unload and resume (docs/protocol.md §7.26). `set` is followed
//! by `thread/goal/updated` and a successful `clear` by `thread/goal/cleared`, to everyone; a
//! resume tells the caller the thread's goal the same way. A `set` on a loaded thread is
//! answered by the thread itself ([`tell_thread`]), which then pursues an active goal.

use weft_core::events::Reply;
use weft_core::state::{GoalError, GoalSet, GoalUpdate, StateDb};
use weft_core::thread::Op;
use weft_core::time::now_secs;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::notifications::ServerNotification;
use weft_protocol::{
    ThreadGoalClearParams, ThreadGoalClearResponse, ThreadGoalClearedNotification,
    ThreadGoalGetParams, ThreadGoalGetResponse, ThreadGoalSetParams, ThreadGoalSetResponse,
    ThreadGoalUpdatedNotification, ThreadId,
};

use crate::handlers::{Answer, parse_thread_id};
use crate::state::AppState;

/// `thread/goal/get`.
pub async fn get(
    state: &AppState,
    params: ThreadGoalGetParams,
) -> Result<ThreadGoalGetResponse, JsonRpcError> {
    let db = stored_thread(state, &params.thread_id).await?;
    let goal = db.goal(&params.thread_id).await.map_err(internal)?;
    Ok(ThreadGoalGetResponse { goal })
}

/// `thread/goal/set`; `thread/goal/updated` follows. With the answer, the change for
/// [`tell_thread`].
pub async fn set(
    state: &AppState,
    params: ThreadGoalSetParams,
) -> Result<(Answer<ThreadGoalSetResponse>, GoalSet), JsonRpcError> {
    let db = stored_thread(state, &params.thread_id).await?;
    let update = GoalUpdate {
        objective: params.objective,
        status: params.status,
        token_budget: params.token_budget,
    };
    let set = db
        .set_goal(&params.thread_id, update, now_secs())
        .await
        .map_err(|err| match err {
            GoalError::State(err) => internal(err),
            other => JsonRpcError::invalid_request(other.to_string()),
        })?;
    let goal = set.goal.clone();
    let answer = Answer::new(ThreadGoalSetResponse { goal: goal.clone() }).then_broadcast(
        ThreadGoalUpdatedNotification {
            thread_id: params.thread_id,
            turn_id: None,
            goal,
        },
    );
    Ok((answer, set))
}

/// Tell the goal's thread, if it is loaded, that a client changed its goal. The thread sends
/// `reply` (the answer and `thread/goal/updated`) before anything the change makes it do;
/// when the thread is not loaded, `reply` is dropped unsent.
pub async fn tell_thread(state: &AppState, set: GoalSet, reply: Reply<()>) {
    let Some(handle) = state.threads.get(&set.goal.thread_id) else {
        return;
    };
    if let Err(err) = handle.send(Op::GoalChanged { set, reply }).await {
        tracing::debug!(%err, "the goal's thread is gone");
    }
}

/// `thread/goal/clear`; `thread/goal/cleared` follows when there was a goal.
pub async fn clear(
    state: &AppState,
    params: ThreadGoalClearParams,
) -> Result<Answer<ThreadGoalClearResponse>, JsonRpcError> {
    let db = stored_thread(state, &params.thread_id).await?;
    let cleared = db.clear_goal(&params.thread_id).await.map_err(internal)?;
    let answer = Answer::new(ThreadGoalClearResponse { cleared });
    Ok(if cleared {
        answer.then_broadcast(ThreadGoalClearedNotification {
            thread_id: params.thread_id,
        })
    } else {
        answer
    })
}

/// What a resume tells the caller about the thread's goal: `thread/goal/updated` with it, or
/// `thread/goal/cleared` when it has none. `None` for a thread the index does not hold.
pub async fn on_resume(state: &AppState, thread_id: &ThreadId) -> Option<ServerNotification> {
    let db = state.threads.services().state.as_ref()?;
    db.get(thread_id).await.ok().flatten()?;
    match db.goal(thread_id).await {
        Ok(Some(goal)) => Some(
            ThreadGoalUpdatedNotification {
                thread_id: thread_id.clone(),
                turn_id: None,
                goal,
            }
            .into(),
        ),
        Ok(None) => Some(
            ThreadGoalClearedNotification {
                thread_id: thread_id.clone(),
            }
            .into(),
        ),
        Err(err) => {
            tracing::warn!(thread = %thread_id, %err, "cannot read the thread's goal");
            None
        }
    }
}

/// The state DB, once `thread_id` is known to be a stored thread; the reference's
/// `thread not found` otherwise.
async fn stored_thread<'a>(
    state: &'a AppState,
    thread_id: &ThreadId,
) -> Result<&'a StateDb, JsonRpcError> {
    parse_thread_id(thread_id)?;
    let not_found = || JsonRpcError::invalid_request(format!("thread not found: {thread_id}"));
    let db = state
        .threads
        .services()
        .state
        .as_ref()
        .ok_or_else(not_found)?;
    match db.get(thread_id).await.map_err(internal)? {
        Some(_) => Ok(db),
        None => Err(not_found()),
    }
}

fn internal(err: impl std::fmt::Display) -> JsonRpcError {
    JsonRpcError::internal(err.to_string())
}
