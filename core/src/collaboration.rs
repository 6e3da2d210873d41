//! Collaboration modes (docs/protocol.md §7.25): Default and Plan. A `turn/start` with a
//! `collaborationMode` puts the thread in that mode (sticky). The model learns the mode from a
//! developer message `<collaboration_mode>…</collaboration_mode>` recorded whenever the mode's
//! text differs from the last one it saw. The text is Weft's own for the mode, unless the
//! client gave `settings.developer_instructions`, which replaces it.
//!
//! Plan mode is enforced, not only described: its turns run with a read-only sandbox,
//! `apply_patch` is neither offered nor served, and escalation requests are refused. The
//! `request_user_input` tool is offered in both modes once a client has chosen a mode (a client
//! that never sends `collaborationMode` may not answer `item/tool/requestUserInput`).

use weft_protocol::{CollaborationMode, ModeKind, SandboxPolicy};

use crate::model::{ContentItem, ResponseItem, Role};

/// Opening tag of the mode message.
pub const OPEN_TAG: &str = "<collaboration_mode>";
/// Closing tag of the mode message.
pub const CLOSE_TAG: &str = "</collaboration_mode>";

const DEFAULT_INSTRUCTIONS: &str = include_str!("prompts/collaboration_default.md");
const PLAN_INSTRUCTIONS: &str = include_str!("prompts/collaboration_plan.md");

/// Weft's own instructions for a mode.
pub fn builtin_instructions(mode: ModeKind) -> &'static str {
    match mode {
        ModeKind::Default => DEFAULT_INSTRUCTIONS,
        ModeKind::Plan => PLAN_INSTRUCTIONS,
    }
}

/// The mode a thread keeps: `developer_instructions` resolved (a client's `null` becomes the
/// built-in text), as the reference reports it back.
pub fn resolve(mut mode: CollaborationMode) -> CollaborationMode {
    if mode.settings.developer_instructions.is_none() {
        mode.settings.developer_instructions = Some(builtin_instructions(mode.mode).to_string());
    }
    mode
}

/// The text of the developer message that tells the model its mode.
pub fn render(mode: &CollaborationMode) -> Option<String> {
    let text = mode.settings.developer_instructions.as_deref()?;
    Some(format!("{OPEN_TAG}{text}{CLOSE_TAG}"))
}

/// The mode message, as a history item.
pub fn message(text: String) -> ResponseItem {
    ResponseItem::message(Role::Developer, vec![ContentItem::InputText { text }])
}

/// The last mode message a history gives the model (after a resume or fork).
pub fn last_in(history: &[ResponseItem]) -> Option<String> {
    history.iter().rev().find_map(|item| match item {
        ResponseItem::Message { role, content, .. } if *role == Role::Developer => {
            content.iter().find_map(|part| match part {
                ContentItem::InputText { text } if text.starts_with(OPEN_TAG) => Some(text.clone()),
                _ => None,
            })
        }
        _ => None,
    })
}

/// Whether a thread in this mode runs read-only.
pub fn is_plan(mode: Option<&CollaborationMode>) -> bool {
    mode.is_some_and(|m| m.mode == ModeKind::Plan)
}

/// The sandbox a turn's tools get: the thread's, or read-only (same network access) in Plan
/// mode.
pub fn turn_sandbox(mode: Option<&CollaborationMode>, sandbox: &SandboxPolicy) -> SandboxPolicy {
    if !is_plan(mode) {
        return sandbox.clone();
    }
    let network_access = match sandbox {
        SandboxPolicy::DangerFullAccess => true,
        SandboxPolicy::ReadOnly { network_access }
        | SandboxPolicy::WorkspaceWrite { network_access, .. } => *network_access,
        SandboxPolicy::ExternalSandbox { network_access } => {
            *network_access == weft_protocol::NetworkAccess::Enabled
        }
    };
    SandboxPolicy::ReadOnly { network_access }
}

#[cfg(test)]
mod tests {
    use weft_protocol::CollaborationModeSettings;

    use super::*;

    fn mode(kind: ModeKind, text: Option<&str>) -> CollaborationMode {
        CollaborationMode {
            mode: kind,
            settings: CollaborationModeSettings {
                model: "m".into(),
                reasoning_effort: None,
                developer_instructions: text.map(str::to_string),
            },
        }
    }

    #[test]
    fn null_instructions_become_the_builtin_text() {
        let plan = resolve(mode(ModeKind::Plan, None));
        assert_eq!(
            plan.settings.developer_instructions.as_deref(),
            Some(PLAN_INSTRUCTIONS)
        );
        let own = resolve(mode(ModeKind::Plan, Some("mine")));
        assert_eq!(own.settings.developer_instructions.as_deref(), Some("mine"));
        assert_eq!(
            render(&own).as_deref(),
            Some("<collaboration_mode>mine</collaboration_mode>")
        );
    }

    #[test]
    fn the_last_mode_message_is_found_in_history() {
        let history = vec![
            message(render(&resolve(mode(ModeKind::Plan, Some("a")))).unwrap()),
            ResponseItem::user_message(vec![ContentItem::InputText { text: "hi".into() }]),
            message(render(&resolve(mode(ModeKind::Default, Some("b")))).unwrap()),
        ];
        assert_eq!(
            last_in(&history).as_deref(),
            Some("<collaboration_mode>b</collaboration_mode>")
        );
        assert_eq!(last_in(&history[1..2]), None);
    }

    #[test]
    fn plan_mode_is_read_only() {
        let workspace = SandboxPolicy::from_mode(weft_protocol::SandboxMode::WorkspaceWrite);
        let plan = mode(ModeKind::Plan, None);
        assert_eq!(
            turn_sandbox(Some(&plan), &workspace),
            SandboxPolicy::ReadOnly {
                network_access: false
            }
        );
        let default = mode(ModeKind::Default, None);
        assert_eq!(turn_sandbox(Some(&default), &workspace), workspace);
        assert_eq!(turn_sandbox(None, &workspace), workspace);
        assert_eq!(
            turn_sandbox(Some(&plan), &SandboxPolicy::DangerFullAccess),
            SandboxPolicy::ReadOnly {
                network_access: true
            }
        );
    }
}
