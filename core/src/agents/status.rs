//! An agent's status as the multi-agent tools report it: to the model (the reference's
//! snake_case JSON) and to clients (`CollabAgentState`).

use serde_json::{Value, json};
use weft_protocol::{CollabAgentState, CollabAgentStatus, Turn, TurnStatus};

/// Where an agent stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentStatus {
    /// Spawned (or resumed); no turn has started yet.
    PendingInit,
    /// A turn is running.
    Running,
    /// Its last turn was interrupted.
    Interrupted,
    /// Its last turn completed, with its last agent message.
    Completed(Option<String>),
    /// Its last turn failed, with the error.
    Errored(String),
    /// Closed (`close_agent`), or its tree was closed.
    Shutdown,
    /// No such agent in this tree.
    NotFound,
}

impl AgentStatus {
    /// A status a waiter stops at: anything but pending and running.
    pub fn is_final(&self) -> bool {
        !matches!(self, AgentStatus::PendingInit | AgentStatus::Running)
    }

    /// The status a finished turn leaves, given the turn's last agent message.
    pub fn after_turn(turn: &Turn, last_message: Option<String>) -> AgentStatus {
        match turn.status {
            TurnStatus::Completed => AgentStatus::Completed(last_message),
            TurnStatus::Interrupted => AgentStatus::Interrupted,
            TurnStatus::Failed => AgentStatus::Errored(
                turn.error
                    .as_ref()
                    .map(|error| error.message.clone())
                    .unwrap_or_else(|| "turn failed".to_string()),
            ),
            TurnStatus::InProgress => AgentStatus::Running,
        }
    }

    /// The model's spelling: `"running"`, `{"completed":"PONG"}`, `{"errored":"…"}`.
    pub fn to_model(&self) -> Value {
        match self {
            AgentStatus::PendingInit => json!("pending_init"),
            AgentStatus::Running => json!("running"),
            AgentStatus::Interrupted => json!("interrupted"),
            AgentStatus::Completed(message) => json!({ "completed": message }),
            AgentStatus::Errored(message) => json!({ "errored": message }),
            AgentStatus::Shutdown => json!("shutdown"),
            AgentStatus::NotFound => json!("not_found"),
        }
    }

    /// The clients' spelling, in `collabAgentToolCall.agentsStates`.
    pub fn to_wire(&self) -> CollabAgentState {
        let (status, message) = match self {
            AgentStatus::PendingInit => (CollabAgentStatus::PendingInit, None),
            AgentStatus::Running => (CollabAgentStatus::Running, None),
            AgentStatus::Interrupted => (CollabAgentStatus::Interrupted, None),
            AgentStatus::Completed(message) => (CollabAgentStatus::Completed, message.clone()),
            AgentStatus::Errored(message) => (CollabAgentStatus::Errored, Some(message.clone())),
            AgentStatus::Shutdown => (CollabAgentStatus::Shutdown, None),
            AgentStatus::NotFound => (CollabAgentStatus::NotFound, None),
        };
        CollabAgentState { status, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_and_the_clients_spellings() {
        assert_eq!(AgentStatus::PendingInit.to_model(), json!("pending_init"));
        assert_eq!(
            AgentStatus::Completed(Some("PONG".into())).to_model(),
            json!({"completed": "PONG"})
        );
        assert_eq!(
            AgentStatus::Errored("x".into()).to_model(),
            json!({"errored": "x"})
        );
        let wire = AgentStatus::Completed(Some("PONG".into())).to_wire();
        assert_eq!(wire.status, CollabAgentStatus::Completed);
        assert_eq!(wire.message.as_deref(), Some("PONG"));
        assert!(!AgentStatus::Running.is_final());
        assert!(AgentStatus::Shutdown.is_final());
    }
}
