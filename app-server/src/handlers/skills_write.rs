//! `skills/config/write` (docs/protocol.md §7.34): a skill switched off or on again in the
//! user's `config.toml` (`[[skills.config]]`, `weft_core::config::skill_switches`), written as
//! every config write is (checked, atomic, one at a time); and the switches applied to what
//! `skills/list` reports.

use std::path::Path;
use std::sync::Arc;

use weft_core::config::skill_switches::{
    SkillSelector, disabled_skills, is_disabled, set_skill_enabled,
};
use weft_core::config::write::write_document;
use weft_protocol::jsonrpc::{INVALID_PARAMS, JsonRpcError};
use weft_protocol::skills_api::SkillsListEntry;
use weft_protocol::{SkillsConfigWriteParams, SkillsConfigWriteResponse};

use crate::dispatch::{Context, HandlerResult};
use crate::state::AppState;

/// `skills/config/write`: `{effectiveEnabled}` once the file says so.
pub async fn config_write(
    cx: Context<'_>,
    params: SkillsConfigWriteParams,
) -> HandlerResult<SkillsConfigWriteResponse> {
    let selector = match (params.path, params.name) {
        (Some(path), None) => {
            let path = Path::new(&path);
            if !path.is_absolute() {
                return Err(JsonRpcError::new(
                    INVALID_PARAMS,
                    "skills/config/write path must be absolute",
                ));
            }
            SkillSelector::path(path)
        }
        (None, Some(name)) if !name.trim().is_empty() => SkillSelector::Name(name),
        _ => {
            return Err(JsonRpcError::new(
                INVALID_PARAMS,
                "skills/config/write requires exactly one of path or name",
            ));
        }
    };
    let enabled = params.enabled;
    let live = Arc::clone(&cx.state.threads.services().live);
    let _one_at_a_time = live.lock_writes().await;
    let current = live.current();
    let config = tokio::task::spawn_blocking(move || {
        write_document(&current, |doc| set_skill_enabled(doc, &selector, enabled))
    })
    .await
    .map_err(|err| JsonRpcError::internal(format!("failed to update skill settings: {err}")))?
    .map_err(|err| JsonRpcError::internal(format!("failed to update skill settings: {err}")))?;
    live.replace(config);
    Ok(SkillsConfigWriteResponse {
        effective_enabled: enabled,
    })
}

/// Mark the skills the current config switches off as `enabled: false`.
pub fn apply_switches(state: &AppState, entries: &mut [SkillsListEntry]) {
    let config = state.threads.services().live.current();
    let disabled = disabled_skills(&config.layers.merged);
    if disabled.is_empty() {
        return;
    }
    for skill in entries.iter_mut().flat_map(|entry| entry.skills.iter_mut()) {
        skill.enabled = !is_disabled(&disabled, Path::new(&skill.path), &skill.name);
    }
}
