//! What a v2 team's models are told about the team (docs/agents.md §6.2): the root's and a
//! member's developer messages, and the note that starts a forked member's own part.

use crate::model::{ContentItem, ResponseItem, Role};

const ROOT: &str = include_str!("../prompts/agents_root.md");
const MEMBER: &str = include_str!("../prompts/agents_member.md");
const MODE: &str = include_str!("../prompts/agents_mode.md");
const FORKED: &str = include_str!("../prompts/agents_forked.md");

fn developer(text: &str) -> ResponseItem {
    ResponseItem::message(
        Role::Developer,
        vec![ContentItem::InputText {
            text: text.trim_end().to_string(),
        }],
    )
}

/// The root's messages: its part in the team (with its concurrency slots, when capped) and
/// when to delegate.
pub fn root_messages(slots: Option<usize>) -> Vec<ResponseItem> {
    let slots = match slots {
        Some(n) => format!(
            "There are {n} concurrency slots: up to {n} agents, you included, can be active at once."
        ),
        None => String::new(),
    };
    vec![
        developer(ROOT.replace("{slots}", &slots).trim_end()),
        developer(MODE),
    ]
}

/// A member's messages: its part in the team and when to delegate.
pub fn member_messages() -> Vec<ResponseItem> {
    vec![developer(MEMBER), developer(MODE)]
}

/// The note after a forked member's inherited history.
pub fn forked_message() -> ResponseItem {
    developer(FORKED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_told_its_slots() {
        let messages = root_messages(Some(4));
        let text = messages[0].message_text().unwrap_or_default();
        assert!(text.contains("There are 4 concurrency slots"), "{text}");
        assert!(!text.contains("{slots}"));
        let uncapped = root_messages(None);
        assert!(
            !uncapped[0]
                .message_text()
                .unwrap_or_default()
                .contains("slots")
        );
        assert!(
            member_messages()[1]
                .message_text()
                .unwrap_or_default()
                .starts_with("<multi_agent_mode>")
        );
    }
}
