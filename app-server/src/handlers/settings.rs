//! `thread/settings/update` (experimental upstream, docs/protocol.md §7.34): a loaded thread's
//! settings for its next turns, changed without a turn; the Codex TUI's `/model` sends it for
//! the running thread. The handler checks what only the params can tell (the reference's
//! texts) and hands the thread `turn/start`'s overrides; the thread answers `{}`, then sends
//! `thread/settings/updated` when something changed.

use std::path::PathBuf;

use weft_core::thread::{Op, TurnOverrides};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{ThreadSettingsUpdateParams, ThreadSettingsUpdateResponse};

use crate::dispatch::{HandlerResult, ThreadReply};

/// `thread/settings/update`.
pub fn update(
    params: ThreadSettingsUpdateParams,
    reply: ThreadReply<ThreadSettingsUpdateResponse>,
) -> HandlerResult<Op> {
    if params.permissions.is_some() && params.sandbox_policy.is_some() {
        return Err(JsonRpcError::invalid_request(
            "`permissions` cannot be combined with `sandboxPolicy`",
        ));
    }
    if params.environments.as_ref().is_some_and(|e| !e.is_empty()) {
        return Err(JsonRpcError::invalid_request(
            "thread/settings/update.environments is not supported by Weft",
        ));
    }
    if params
        .disabled_plugin_ids
        .as_ref()
        .is_some_and(|ids| !ids.is_empty())
    {
        return Err(JsonRpcError::invalid_request(
            "thread/settings/update.disabledPluginIds is not supported by Weft",
        ));
    }
    let overrides = TurnOverrides {
        model: params.model,
        cwd: params.cwd.map(PathBuf::from),
        approval_policy: params.approval_policy,
        approvals_reviewer: params.approvals_reviewer,
        sandbox: params.sandbox_policy,
        reasoning_effort: params.effort,
        reasoning_summary: params.summary,
        collaboration_mode: params.collaboration_mode,
        permission_profile: params.permissions,
        ..TurnOverrides::default()
    };
    Ok(Op::UpdateSettings {
        overrides,
        reply: reply.into_core(|()| ThreadSettingsUpdateResponse {}),
    })
}
