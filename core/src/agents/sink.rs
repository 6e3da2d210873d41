//! [`AgentSink`]: a sub-agent's event sink. It passes every event on to the child's
//! subscribers unchanged and watches the child's turns: a turn that starts makes the agent
//! `running`; one that ends sets its final status and tells the parent (docs/agents.md §5).

use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use weft_protocol::{ThreadId, ThreadItemDetails};

use super::control::AgentControl;
use super::hub::Agents;
use super::mailbox::AgentMail;
use super::notify;
use super::status::AgentStatus;
use crate::config::AgentSurface;
use crate::events::{
    EventSink, ServerRequestOutcome, ServerRequestParams, SharedSink, ThreadEvent,
};

/// The sink of one sub-agent.
pub struct AgentSink {
    inner: SharedSink,
    control: Arc<AgentControl>,
    hub: std::sync::Weak<Agents>,
    parent: ThreadId,
    /// The agent's name as its parent knows it (its path, else its id).
    name: String,
    /// The parent's name.
    parent_name: String,
    last_message: Mutex<Option<String>>,
}

impl AgentSink {
    /// Wrap a child's sink.
    pub fn wrap(
        inner: SharedSink,
        control: Arc<AgentControl>,
        hub: &Arc<Agents>,
        parent: ThreadId,
        name: String,
        parent_name: String,
    ) -> SharedSink {
        Arc::new(AgentSink {
            inner,
            control,
            hub: Arc::downgrade(hub),
            parent,
            name,
            parent_name,
            last_message: Mutex::new(None),
        })
    }

    async fn observe(&self, thread: &ThreadId, event: &ThreadEvent) {
        match event {
            ThreadEvent::TurnStarted(_) => {
                *self.last_message.lock() = None;
                self.control.set_status(thread, AgentStatus::Running);
            }
            ThreadEvent::ItemCompleted { item, .. } => {
                if let ThreadItemDetails::AgentMessage(message) = &item.details {
                    *self.last_message.lock() = Some(message.text.clone());
                }
            }
            ThreadEvent::TurnCompleted(turn) => {
                let last = self.last_message.lock().take();
                let status = AgentStatus::after_turn(turn, last);
                // The parent's mail goes first, so whoever the status wakes finds it.
                self.notify_parent(thread, &turn.id, &status);
                self.control.set_status(thread, status);
            }
            _ => {}
        }
    }

    /// Tell the parent how the turn ended (dropped when the parent is not loaded: it reads
    /// the child's status when it next asks).
    fn notify_parent(&self, thread: &ThreadId, turn: &weft_protocol::TurnId, status: &AgentStatus) {
        let Some(hub) = self.hub.upgrade() else {
            return;
        };
        let Some(mailbox) = hub.mailbox(&self.parent) else {
            tracing::debug!(agent = %thread, parent = %self.parent, "the parent is not loaded: its notification is dropped");
            return;
        };
        let mail = match hub.surface {
            AgentSurface::V2 => AgentMail {
                item: notify::final_answer(&self.name, &self.parent_name, status),
                activity: Some(notify::completed_activity(thread, &self.name, turn)),
                root_turn: None,
            },
            _ => AgentMail::model(notify::subagent_notification(&self.name, status)),
        };
        mailbox.send(mail, false);
    }
}

impl EventSink for AgentSink {
    fn emit<'a>(&'a self, thread: &'a ThreadId, event: ThreadEvent) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let observed = matches!(
                event,
                ThreadEvent::TurnStarted(_)
                    | ThreadEvent::TurnCompleted(_)
                    | ThreadEvent::ItemCompleted { .. }
            );
            // The clients see the event before anyone waiting on the agent wakes up.
            let copy = observed.then(|| event.clone());
            self.inner.emit(thread, event).await;
            if let Some(event) = copy {
                self.observe(thread, &event).await;
            }
        })
    }

    fn request<'a>(
        &'a self,
        thread: &'a ThreadId,
        params: ServerRequestParams,
    ) -> BoxFuture<'a, ServerRequestOutcome> {
        self.inner.request(thread, params)
    }
}
