//! `collaborationMode/list` (EXPERIMENTAL upstream; docs/protocol.md §7.25): Weft's two
//! collaboration modes. A turn enters one with `turn/start.collaborationMode`.

use weft_protocol::collaboration::{
    CollaborationModeListParams, CollaborationModeListResponse, CollaborationModeMask,
};
use weft_protocol::{ModeKind, ReasoningEffort};

use crate::dispatch::{Context, HandlerResult};

/// `collaborationMode/list`: Plan (medium reasoning effort), then Default (the thread's
/// effort); neither selects a model.
pub async fn list(
    _cx: Context<'_>,
    _params: CollaborationModeListParams,
) -> HandlerResult<CollaborationModeListResponse> {
    Ok(CollaborationModeListResponse {
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
    })
}
