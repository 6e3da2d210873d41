//! `collaborationMode/list` (EXPERIMENTAL upstream; docs/protocol.md §7.25): Weft's two
//! collaboration modes. A turn enters one with `turn/start.collaborationMode`.

use weft_protocol::collaboration::{CollaborationModeListResponse, CollaborationModeMask};
use weft_protocol::{ModeKind, ReasoningEffort};

/// `collaborationMode/list`: Plan (medium reasoning effort), then Default (the thread's
/// effort); neither selects a model. The same to every request (the route's mode is `fixed`).
pub fn list() -> CollaborationModeListResponse {
    CollaborationModeListResponse {
        data: vec![
            CollaborationModeMask {
                name: "Plan".to_string(),
                mode: Some(ModeKind::Plan),
                model: None,
                reasoning_effort: Some(ReasoningEffort("medium".to_string())),
            },
            CollaborationModeMask {
                name: "Default".to_string(),
                mode: Some(ModeKind::Default),
                model: None,
                reasoning_effort: None,
            },
        ],
    }
}
