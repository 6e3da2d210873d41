//! The thread layer as the sub-agent trees see it: the manager implements
//! [`AgentHost`] over its loaded threads (docs/agents.md §4). Every operation names a thread
//! by id; the ops sent to its actor are built here, never by the tools.

use futures::future::BoxFuture;
use weft_protocol::{ThreadId, Turn, TurnId, UserInput};

use super::ThreadManager;
use crate::agents::{AgentHost, AgentMailbox, ChildThread, SendMode};
use crate::events::Reply;
use crate::settings::ThreadSettings;
use crate::thread::error::CoreError;
use crate::thread::handle::{InputMode, Op, TurnOverrides};

impl AgentHost for ThreadManager {
    fn spawn(
        &self,
        child: ChildThread,
    ) -> BoxFuture<'_, Result<(ThreadId, ThreadSettings), String>> {
        Box::pin(async move {
            let (handle, snapshot) = self
                .spawn_child(child)
                .await
                .map_err(|err| err.to_string())?;
            Ok((handle.id().clone(), snapshot.settings))
        })
    }

    fn open<'a>(
        &'a self,
        id: &'a ThreadId,
        parent: &'a ThreadId,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if self.get(id).is_some() {
                return Ok(());
            }
            self.resume_child(id, parent)
                .await
                .map(|_| ())
                .map_err(|err| err.to_string())
        })
    }

    fn send<'a>(
        &'a self,
        id: &'a ThreadId,
        input: Vec<UserInput>,
        mode: SendMode,
        root_turn: TurnId,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            submit(self, id, input, mode, root_turn)
                .await
                .map_err(|err| err.to_string())
        })
    }

    fn interrupt<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(handle) = self.get(id) {
                handle.interrupt_running().await;
            }
        })
    }

    fn deliver_mail<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(handle) = self.get(id) {
                handle.deliver_mail().await;
            }
        })
    }

    fn close<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, bool> {
        Box::pin(self.unload_child(id))
    }

    fn set_closed<'a>(
        &'a self,
        id: &'a ThreadId,
        closed: bool,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.set_agent_closed(id, closed)
                .await
                .map_err(|err| err.to_string())
        })
    }

    fn last_turn<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, Result<Option<Turn>, String>> {
        Box::pin(async move {
            let thread = self
                .read_thread(id, true)
                .await
                .map_err(|err| err.to_string())?;
            Ok(thread.turns.last().cloned())
        })
    }

    fn mailbox(&self, id: &ThreadId) -> Option<AgentMailbox> {
        self.threads.mailbox(id)
    }
}

/// Submit input to a loaded thread as a client would (`turn/start`), with `root_turn` as the
/// `rootTurnId` of a turn it starts.
async fn submit(
    manager: &ThreadManager,
    id: &ThreadId,
    input: Vec<UserInput>,
    mode: SendMode,
    root_turn: TurnId,
) -> Result<(), CoreError> {
    let handle = manager
        .get(id)
        .ok_or_else(|| CoreError::ThreadNotFound(id.to_string()))?;
    let mode = match mode {
        SendMode::StartIfIdle => InputMode::StartIfIdle,
        SendMode::StartOrSteer => InputMode::StartOrSteer,
    };
    let (reply, answer) = Reply::channel();
    handle
        .send(Op::Submit {
            input,
            mode,
            overrides: TurnOverrides {
                root_turn_id: Some(root_turn),
                ..TurnOverrides::default()
            },
            client_id: None,
            reply,
        })
        .await?;
    answer
        .await
        .map_err(|_| CoreError::ThreadNotFound(id.to_string()))?
        .map(|_| ())
}
