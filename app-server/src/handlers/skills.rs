//! `skills/list`: the skills seen from each cwd, cached per cwd until `forceReload`
//! (docs/protocol.md §7.23; the search itself is `weft_core::skills`), within `[limits]
//! max_skill_file_bytes` and `skills_scan_timeout_secs`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use weft_core::skills::{ScanLimits, Skills};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::skills_api::{SkillsListEntry, SkillsListParams, SkillsListResponse};
use weft_protocol::{
    SkillsChangedNotification, SkillsExtraRootsSetParams, SkillsExtraRootsSetResponse,
};

use crate::dispatch::{Answer, Context, HandlerResult};
use crate::handlers::daemon_cwd;

/// After the scan's deadline, how long the answer waits for the scan to hand back what it found
/// before answering without it (a read blocked in the kernel never checks the deadline).
const HAND_BACK: Duration = Duration::from_secs(1);

/// `skills/list`: one entry per cwd, in request order; an empty list means the daemon's cwd.
/// A relative cwd is taken from the daemon's cwd and echoed as given. The whole request is one
/// scan with one deadline.
pub async fn list(cx: Context<'_>, params: SkillsListParams) -> HandlerResult<SkillsListResponse> {
    let base = daemon_cwd();
    let cwds = if params.cwds.is_empty() {
        vec![base.display().to_string()]
    } else {
        params.cwds
    };
    let skills = Arc::clone(&cx.state.skills);
    let force_reload = params.force_reload;
    let limits = ScanLimits::new(
        cx.state.config.limits.max_skill_file_bytes,
        Duration::from_secs(cx.state.config.limits.skills_scan_timeout_secs),
    );
    let requested = cwds.clone();
    let scan = tokio::task::spawn_blocking(move || {
        cwds.into_iter()
            .map(|cwd| {
                let path: PathBuf = base.join(&cwd);
                let outcome = skills.list(&path, force_reload, &limits);
                SkillsListEntry {
                    cwd,
                    skills: outcome.skills.clone(),
                    errors: outcome.errors.clone(),
                }
            })
            .collect()
    });
    let data = match tokio::time::timeout(limits.timeout + HAND_BACK, scan).await {
        Ok(done) => {
            done.map_err(|err| JsonRpcError::internal(format!("skills/list failed: {err}")))?
        }
        Err(_) => {
            tracing::warn!("skills/list: the scan did not come back in time; answering without it");
            let base = daemon_cwd();
            requested
                .into_iter()
                .map(|cwd| {
                    let outcome = Skills::timed_out(&base.join(&cwd), &limits);
                    SkillsListEntry {
                        cwd,
                        skills: outcome.skills,
                        errors: outcome.errors,
                    }
                })
                .collect()
        }
    };
    let mut data: Vec<SkillsListEntry> = data;
    // The skills switched off in config.toml (docs/protocol.md §7.34).
    crate::handlers::skills_write::apply_switches(cx.state, &mut data);
    Ok(SkillsListResponse { data })
}

/// `skills/extraRoots/set`: the extra roots replace the ones set before, for every cwd and the
/// daemon's life (they are not written to config). As the reference, everyone is told
/// `skills/changed` before the answer.
pub async fn extra_roots_set(
    cx: Context<'_>,
    params: SkillsExtraRootsSetParams,
) -> HandlerResult<Answer<SkillsExtraRootsSetResponse>> {
    let roots = params
        .extra_roots
        .into_iter()
        .map(|root| root.into_path_buf())
        .collect();
    cx.state.skills.set_extra_roots(roots);
    Ok(Answer::new(SkillsExtraRootsSetResponse {}).before_broadcast(SkillsChangedNotification {}))
}
