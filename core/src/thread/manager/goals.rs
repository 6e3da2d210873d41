//! The clients' goal requests, `thread/goal/get|set|clear` (docs/protocol.md §7.26): the
//! goal lives in the state DB (`state/goals.rs`), so a stored thread has one whether it is
//! loaded or not; a `set` on a loaded thread is also told to its actor, which answers it
//! before anything the change makes it do (a continuation turn, `thread/actor/goal.rs`).

use std::sync::Arc;

use weft_protocol::ThreadGoal;
use weft_protocol::ThreadId;
use weft_protocol::jsonrpc::JsonRpcError;

use super::ThreadManager;
use crate::events::Reply;
use crate::state::{GoalError, GoalUpdate, StateDb, StateError};
use crate::thread::handle::Op;
use crate::time::now_secs;

/// Why a client's goal request failed. `Display` is the client-facing message.
#[derive(Debug, thiserror::Error)]
pub enum GoalRequestError {
    /// Not a stored thread (or no state DB: every thread is ephemeral).
    #[error("thread not found: {0}")]
    ThreadNotFound(ThreadId),
    /// The update itself was refused (an empty objective, no goal to update).
    #[error(transparent)]
    Refused(GoalError),
    /// The state DB failed.
    #[error(transparent)]
    State(#[from] StateError),
}

impl From<GoalError> for GoalRequestError {
    fn from(err: GoalError) -> GoalRequestError {
        match err {
            GoalError::State(err) => GoalRequestError::State(err),
            refused => GoalRequestError::Refused(refused),
        }
    }
}

impl From<GoalRequestError> for JsonRpcError {
    /// `-32600` for a request the client can fix, `-32603` for a failing DB.
    fn from(err: GoalRequestError) -> JsonRpcError {
        match err {
            GoalRequestError::State(err) => JsonRpcError::internal(err.to_string()),
            other => JsonRpcError::invalid_request(other.to_string()),
        }
    }
}

impl ThreadManager {
    /// `thread/goal/get`: the stored thread's goal, if it has one.
    pub async fn goal(&self, thread_id: &ThreadId) -> Result<Option<ThreadGoal>, GoalRequestError> {
        let not_found = || GoalRequestError::ThreadNotFound(thread_id.clone());
        let db = self.services().state.as_ref().ok_or_else(not_found)?;
        db.indexed_goal(thread_id).await?.ok_or_else(not_found)
    }

    /// `thread/goal/clear`: whether there was a goal to clear.
    pub async fn clear_goal(&self, thread_id: &ThreadId) -> Result<bool, GoalRequestError> {
        Ok(self.goal_db(thread_id).await?.clear_goal(thread_id).await?)
    }

    /// `thread/goal/set`: store the change, then answer `reply` with the goal as stored. A
    /// loaded thread is told of the change and sends `reply` itself, before anything the
    /// change makes it do (docs/architecture.md §5.3); when the thread is not loaded, or stops
    /// before it answers, `reply` is sent here. A refused change is answered at once.
    pub async fn set_goal(
        &self,
        thread_id: &ThreadId,
        update: GoalUpdate,
        reply: Reply<Result<ThreadGoal, GoalRequestError>>,
    ) {
        let set = match self.goal_db(thread_id).await {
            Ok(db) => db
                .set_goal(thread_id, update, now_secs())
                .await
                .map_err(GoalRequestError::from),
            Err(err) => Err(err),
        };
        let set = match set {
            Ok(set) => set,
            Err(err) => return reply.send(Err(err)).await,
        };
        let goal = set.goal.clone();
        let Some(handle) = self.get(thread_id) else {
            return reply.send(Ok(goal)).await;
        };
        // Whoever takes the reply out of the slot sends it: the thread, or this call once
        // the thread has dropped its copy unsent.
        let slot = Arc::new(parking_lot::Mutex::new(Some(reply)));
        let (ran, ran_rx) = tokio::sync::oneshot::channel::<()>();
        let thread_reply = {
            let (slot, goal) = (slot.clone(), goal.clone());
            Reply::new(move |()| {
                Box::pin(async move {
                    let reply = slot.lock().take();
                    if let Some(reply) = reply {
                        reply.send(Ok(goal)).await;
                    }
                    let _ = ran.send(());
                })
            })
        };
        if let Err(err) = handle
            .send(Op::GoalChanged {
                set,
                reply: thread_reply,
            })
            .await
        {
            tracing::debug!(%err, "the goal's thread is gone");
        }
        if ran_rx.await.is_err() {
            let reply = slot.lock().take();
            if let Some(reply) = reply {
                reply.send(Ok(goal)).await;
            }
        }
    }

    /// The state DB, once `thread_id` is known to be a stored thread.
    async fn goal_db(&self, thread_id: &ThreadId) -> Result<&StateDb, GoalRequestError> {
        let not_found = || GoalRequestError::ThreadNotFound(thread_id.clone());
        let db = self.services().state.as_ref().ok_or_else(not_found)?;
        match db.get(thread_id).await? {
            Some(_) => Ok(db),
            None => Err(not_found()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_invalid_and_a_failing_db_internal() {
        let id = ThreadId::from("t".to_string());
        let missing = JsonRpcError::from(GoalRequestError::ThreadNotFound(id.clone()));
        assert_eq!(
            (missing.code, missing.message.as_str()),
            (-32600, "thread not found: t")
        );
        let empty = JsonRpcError::from(GoalRequestError::from(GoalError::EmptyObjective));
        assert_eq!(
            (empty.code, empty.message.as_str()),
            (-32600, "goal objective must not be empty")
        );
        let none = JsonRpcError::from(GoalRequestError::from(GoalError::NoGoal(id)));
        assert_eq!(
            none.message,
            "cannot update goal for thread t: no goal exists"
        );
        let closed = StateError::from(sqlx::Error::PoolClosed);
        let text = closed.to_string();
        let failed = JsonRpcError::from(GoalRequestError::from(GoalError::State(closed)));
        assert_eq!((failed.code, failed.message), (-32603, text));
    }
}
