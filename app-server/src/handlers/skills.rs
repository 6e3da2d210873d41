//! `skills/list`: the skills seen from each cwd, cached per cwd until `forceReload`
//! (docs/protocol.md §7.23; the search itself is `weft_core::skills`).

use std::path::PathBuf;
use std::sync::Arc;

use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::skills_api::{SkillsListEntry, SkillsListParams, SkillsListResponse};

use crate::handlers::daemon_cwd;
use crate::state::AppState;

/// `skills/list`: one entry per cwd, in request order; an empty list means the daemon's cwd.
/// A relative cwd is taken from the daemon's cwd and echoed as given.
pub async fn list(
    state: &AppState,
    params: SkillsListParams,
) -> Result<SkillsListResponse, JsonRpcError> {
    let base = daemon_cwd();
    let cwds = if params.cwds.is_empty() {
        vec![base.display().to_string()]
    } else {
        params.cwds
    };
    let skills = Arc::clone(&state.skills);
    let force_reload = params.force_reload;
    let data = tokio::task::spawn_blocking(move || {
        cwds.into_iter()
            .map(|cwd| {
                let path: PathBuf = base.join(&cwd);
                let outcome = skills.list(&path, force_reload);
                SkillsListEntry {
                    cwd,
                    skills: outcome.skills.clone(),
                    errors: outcome.errors.clone(),
                }
            })
            .collect()
    })
    .await
    .map_err(|err| JsonRpcError::internal(format!("skills/list failed: {err}")))?;
    Ok(SkillsListResponse { data })
}
