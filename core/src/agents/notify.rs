//! What a parent's model is told when a sub-agent's turn ends (docs/agents.md §5): v1 a user
//! message `<subagent_notification>`; v2 an `agent_message` from the child, `FINAL_ANSWER`.

use serde_json::json;

use super::status::AgentStatus;
use crate::model::ResponseItem;

/// v1: `<subagent_notification>\n{"agent_path":…,"status":…}\n</subagent_notification>`.
pub fn subagent_notification(agent: &str, status: &AgentStatus) -> ResponseItem {
    let body = json!({ "agent_path": agent, "status": status.to_model() });
    ResponseItem::user_text(format!(
        "<subagent_notification>\n{body}\n</subagent_notification>"
    ))
}

/// v2: the child's final answer as mail from it to its parent.
pub fn final_answer(agent: &str, parent: &str, status: &AgentStatus) -> ResponseItem {
    let payload = match status {
        AgentStatus::Completed(message) => message.clone().unwrap_or_default(),
        AgentStatus::Errored(error) => error.clone(),
        other => other.to_model().to_string(),
    };
    agent_message(agent, parent, "FINAL_ANSWER", &payload)
}

/// v2: the `subAgentActivity` item a finished child turn adds to its parent's turn.
pub fn completed_activity(
    agent: &weft_protocol::ThreadId,
    path: &str,
    turn: &weft_protocol::TurnId,
) -> weft_protocol::SubAgentActivityItem {
    activity(
        format!("subagent-completed-{turn}"),
        weft_protocol::SubAgentActivityKind::Completed,
        agent,
        path,
    )
}

/// A `subAgentActivity` item (no model or effort: those are only for `started`).
pub fn activity(
    id: String,
    kind: weft_protocol::SubAgentActivityKind,
    agent: &weft_protocol::ThreadId,
    path: &str,
) -> weft_protocol::SubAgentActivityItem {
    weft_protocol::SubAgentActivityItem {
        id: weft_protocol::ItemId::from(id),
        kind,
        agent_thread_id: agent.clone(),
        agent_path: path.to_string(),
        model: None,
        reasoning_effort: None,
    }
}

/// An `agent_message` item: `Message Type`, recipient, sender and payload, as the model
/// reads them.
pub fn agent_message(author: &str, recipient: &str, kind: &str, payload: &str) -> ResponseItem {
    ResponseItem::agent_message(
        author,
        recipient,
        format!(
            "Message Type: {kind}\nTask name: {recipient}\nSender: {author}\nPayload:\n{payload}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_notification_text() {
        let item = subagent_notification("id-1", &AgentStatus::Completed(Some("PONG".into())));
        let ResponseItem::Message { content, .. } = item else {
            panic!("a message");
        };
        let crate::model::ContentItem::InputText { text } = &content[0] else {
            panic!("text");
        };
        assert_eq!(
            text,
            "<subagent_notification>\n{\"agent_path\":\"id-1\",\"status\":{\"completed\":\"PONG\"}}\n</subagent_notification>"
        );
    }
}
