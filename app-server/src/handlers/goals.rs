//! `thread/goal/get`, `thread/goal/set` and `thread/goal/clear`: a thread's goal, kept in the
//! state DB so that it survives unload and resume (docs/protocol.md §7.26). `set` is followed
//! by `thread/goal/updated` and a successful `clear` by `thread/goal/cleared`, to everyone; a
//! resume tells the caller the thread's goal the same way. Core keeps the goal
//! (`ThreadManager::goal`, `set_goal`, `clear_goal`); a `set` on a loaded thread is answered
//! by the thread itself, which then pursues an active goal.

use weft_core::state::GoalUpdate;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::notifications::ServerNotification;
use weft_protocol::{
    ThreadGoal, ThreadGoalClearParams, ThreadGoalClearResponse, ThreadGoalClearedNotification,
    ThreadGoalGetParams, ThreadGoalGetResponse, ThreadGoalSetParams, ThreadGoalSetResponse,
    ThreadGoalUpdatedNotification, ThreadId,
};

use crate::dispatch::{Answer, Context, HandlerResult, ThreadReply};
use crate::state::AppState;

/// `thread/goal/get`.
pub async fn get(
    cx: Context<'_>,
    params: ThreadGoalGetParams,
) -> HandlerResult<ThreadGoalGetResponse> {
    let goal = cx.state.threads.goal(&params.thread_id).await?;
    Ok(ThreadGoalGetResponse { goal })
}

/// `thread/goal/set`; `thread/goal/updated` follows, to everyone. Core stores the change and
/// answers through `reply`: a loaded thread does, before anything the change makes it do.
pub async fn set(
    state: &AppState,
    params: ThreadGoalSetParams,
    reply: ThreadReply<ThreadGoalSetResponse>,
) -> Result<(), JsonRpcError> {
    let update = GoalUpdate {
        objective: params.objective,
        status: params.status,
        token_budget: params.token_budget,
    };
    let reply = reply.into_core(|goal: ThreadGoal| {
        Answer::new(ThreadGoalSetResponse { goal: goal.clone() }).then_broadcast(
            ThreadGoalUpdatedNotification {
                thread_id: goal.thread_id.clone(),
                turn_id: None,
                goal,
            },
        )
    });
    state
        .threads
        .set_goal(&params.thread_id, update, reply)
        .await;
    Ok(())
}

/// `thread/goal/clear`; `thread/goal/cleared` follows when there was a goal.
pub async fn clear(
    cx: Context<'_>,
    params: ThreadGoalClearParams,
) -> HandlerResult<Answer<ThreadGoalClearResponse>> {
    let cleared = cx.state.threads.clear_goal(&params.thread_id).await?;
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
    match state.threads.goal(thread_id).await {
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
        Err(weft_core::thread::GoalRequestError::ThreadNotFound(_)) => None,
        Err(err) => {
            tracing::warn!(thread = %thread_id, %err, "cannot read the thread's goal");
            None
        }
    }
}
