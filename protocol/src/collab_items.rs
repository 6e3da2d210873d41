//! The two thread items of the multi-agent tools: `collabAgentToolCall` (a call of one of the
//! collab tools — spawn, send input, wait, close … — by the agent that owns the thread) and
//! `subAgentActivity` (a sub-agent of the thread started, was talked to, was interrupted or
//! finished). In the reference transcripts, multi-agent v1 reports every tool call as a
//! `collabAgentToolCall`; v2 reports only `wait_agent` so, and the rest as `subAgentActivity`.
//!
//! Both write every key, `null` when absent (docs/protocol.md §1.2), as the reference does.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{ItemId, ThreadId};
use crate::policy::ReasoningEffort;

/// The collab tool a `collabAgentToolCall` item is a call of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CollabAgentTool {
    /// `spawn_agent`: start a new agent.
    SpawnAgent,
    /// `send_input`: send input to an agent (multi-agent v1).
    SendInput,
    /// `resume_agent`: reopen a closed agent.
    ResumeAgent,
    /// `wait_agent`: wait for agents.
    Wait,
    /// `close_agent`: close an agent.
    CloseAgent,
    /// `send_message`: message an agent without starting a turn (multi-agent v2).
    SendMessage,
    /// `followup_task`: give an agent a follow-up task (multi-agent v2).
    FollowupTask,
    /// `interrupt_agent`: interrupt an agent's turn (multi-agent v2).
    InterruptAgent,
    /// `list_agents`: list the live agents (multi-agent v2).
    ListAgents,
}

/// Status of a `collabAgentToolCall` item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CollabAgentToolCallStatus {
    /// The call is running.
    InProgress,
    /// The call succeeded.
    Completed,
    /// The call failed.
    Failed,
    /// The call was interrupted.
    Interrupted,
}

/// Status of a target agent, as a `collabAgentToolCall` item last saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CollabAgentStatus {
    /// Spawned, not yet running.
    PendingInit,
    /// Running a turn.
    Running,
    /// Its turn was interrupted.
    Interrupted,
    /// Its turn completed.
    Completed,
    /// Its turn failed.
    Errored,
    /// Closed.
    Shutdown,
    /// No such agent.
    NotFound,
}

/// Last known state of one target agent of a `collabAgentToolCall` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollabAgentState {
    /// The agent's status.
    pub status: CollabAgentStatus,
    /// The agent's last message (e.g. its final answer); `null` when it has none.
    #[serde(default)]
    pub message: Option<String>,
}

/// `collabAgentToolCall` item: the agent called one of the multi-agent tools. The id is the
/// model's call id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollabAgentToolCallItem {
    /// Item id (the model's call id).
    pub id: ItemId,
    /// The tool called.
    pub tool: CollabAgentTool,
    /// Status.
    pub status: CollabAgentToolCallStatus,
    /// The thread of the agent making the call.
    pub sender_thread_id: ThreadId,
    /// The threads of the target agents; for a spawn, the new agent's (empty until it exists).
    pub receiver_thread_ids: Vec<String>,
    /// The prompt the call sends; `null` for tools that send none.
    #[serde(default)]
    pub prompt: Option<String>,
    /// The model requested for a spawned agent (the reference writes `""` in a spawn's
    /// `item/started` and the resolved model at completion); `null` for other tools.
    #[serde(default)]
    pub model: Option<String>,
    /// The reasoning effort requested for a spawned agent; `null` for other tools.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Last known state of each target agent, by thread id (empty in `item/started`).
    pub agents_states: BTreeMap<String, CollabAgentState>,
}

impl CollabAgentToolCallItem {
    /// An in-progress call with no prompt, model, effort, receivers or agent states.
    pub fn started(
        id: impl Into<ItemId>,
        tool: CollabAgentTool,
        sender_thread_id: impl Into<ThreadId>,
    ) -> Self {
        Self {
            id: id.into(),
            tool,
            status: CollabAgentToolCallStatus::InProgress,
            sender_thread_id: sender_thread_id.into(),
            receiver_thread_ids: Vec::new(),
            prompt: None,
            model: None,
            reasoning_effort: None,
            agents_states: BTreeMap::new(),
        }
    }
}

/// What happened to the sub-agent of a `subAgentActivity` item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SubAgentActivityKind {
    /// It was spawned.
    Started,
    /// It was sent a message or a task.
    Interacted,
    /// Its turn was interrupted.
    Interrupted,
    /// It finished its task.
    Completed,
}

/// `subAgentActivity` item: something happened to a sub-agent of the thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubAgentActivityItem {
    /// Item id (the model's call id, or one the server makes up for an activity no call caused,
    /// e.g. `subagent-completed-<id>`).
    pub id: ItemId,
    /// What happened.
    pub kind: SubAgentActivityKind,
    /// The sub-agent's thread.
    pub agent_thread_id: ThreadId,
    /// The sub-agent's path, e.g. `/root/worker_a`.
    pub agent_path: String,
    /// The sub-agent's resolved model, with `started`; `null` otherwise (and absent from older
    /// records).
    #[serde(default)]
    pub model: Option<String>,
    /// The sub-agent's resolved reasoning effort, with `started`; `null` otherwise.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_started_call_writes_every_key() {
        let item = CollabAgentToolCallItem::started("call_1", CollabAgentTool::Wait, "t1");
        assert_eq!(
            serde_json::to_value(&item).unwrap(),
            json!({"id": "call_1", "tool": "wait", "status": "inProgress",
                "senderThreadId": "t1", "receiverThreadIds": [], "prompt": null, "model": null,
                "reasoningEffort": null, "agentsStates": {}})
        );
    }

    #[test]
    fn an_activity_writes_null_model_and_effort() {
        let item = SubAgentActivityItem {
            id: "a".into(),
            kind: SubAgentActivityKind::Completed,
            agent_thread_id: "t2".into(),
            agent_path: "/root/w".into(),
            model: None,
            reasoning_effort: None,
        };
        let value = serde_json::to_value(&item).unwrap();
        assert_eq!(
            value,
            json!({"id": "a", "kind": "completed", "agentThreadId": "t2",
                "agentPath": "/root/w", "model": null, "reasoningEffort": null})
        );
        // Older records leave the two out.
        let old: SubAgentActivityItem = serde_json::from_value(
            json!({"id": "a", "kind": "completed", "agentThreadId": "t2", "agentPath": "/root/w"}),
        )
        .unwrap();
        assert_eq!(old, item);
    }

    #[test]
    fn an_agent_state_writes_a_null_message() {
        let state = CollabAgentState {
            status: CollabAgentStatus::PendingInit,
            message: None,
        };
        assert_eq!(
            serde_json::to_value(&state).unwrap(),
            json!({"status": "pendingInit", "message": null})
        );
    }
}
