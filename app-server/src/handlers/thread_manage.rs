//! Thread management (docs/protocol.md §7.36): `thread/delete`, `thread/metadata/update` and
//! `thread/inject_items`. The sections are `sections.rs`.

use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{
    ThreadDeleteParams, ThreadDeleteResponse, ThreadDeletedNotification, ThreadInjectItemsParams,
    ThreadInjectItemsResponse, ThreadMetadataGitInfoUpdateParams, ThreadMetadataUpdateParams,
    ThreadMetadataUpdateResponse,
};

use crate::dispatch::{Answer, Context, HandlerResult};

/// `thread/delete`. A loaded thread is unloaded first (`thread/status/changed {notLoaded}` to
/// everyone, before the response, a running turn interrupted); its spawned sub-agents go with
/// it. After the response, one `thread/deleted` per deleted thread, the deepest sub-agents
/// first and the thread itself last.
pub async fn delete(
    cx: Context<'_>,
    params: ThreadDeleteParams,
) -> HandlerResult<Answer<ThreadDeleteResponse>> {
    let deleted = cx.state.threads.delete_thread(&params.thread_id).await?;
    Ok(deleted
        .into_iter()
        .fold(Answer::new(ThreadDeleteResponse {}), |answer, thread_id| {
            answer.then_broadcast(ThreadDeletedNotification { thread_id })
        }))
}

/// `thread/metadata/update`: the patched Git metadata, answered with the thread as
/// `thread/read` shows it.
pub async fn metadata_update(
    cx: Context<'_>,
    params: ThreadMetadataUpdateParams,
) -> HandlerResult<ThreadMetadataUpdateResponse> {
    let Some(git) = params.git_info else {
        return Err(JsonRpcError::invalid_request(
            "thread metadata update must include at least one field",
        ));
    };
    let patch = checked_git_patch(git)?;
    let thread = cx
        .state
        .threads
        .update_git_info(&params.thread_id, &patch)
        .await?;
    Ok(ThreadMetadataUpdateResponse { thread })
}

/// The Git patch with its strings trimmed, refused with the reference's texts: no field at
/// all, or an empty one.
fn checked_git_patch(
    git: ThreadMetadataGitInfoUpdateParams,
) -> Result<ThreadMetadataGitInfoUpdateParams, JsonRpcError> {
    if git.sha.is_none() && git.branch.is_none() && git.origin_url.is_none() {
        return Err(JsonRpcError::invalid_request(
            "gitInfo must include at least one field",
        ));
    }
    let field = |value: Option<Option<String>>, name: &str| match value {
        Some(Some(value)) => {
            let value = value.trim().to_string();
            if value.is_empty() {
                Err(JsonRpcError::invalid_request(format!(
                    "{name} must not be empty"
                )))
            } else {
                Ok(Some(Some(value)))
            }
        }
        other => Ok(other),
    };
    Ok(ThreadMetadataGitInfoUpdateParams {
        sha: field(git.sha, "gitInfo.sha")?,
        branch: field(git.branch, "gitInfo.branch")?,
        origin_url: field(git.origin_url, "gitInfo.originUrl")?,
    })
}

/// `thread/inject_items`: raw Responses API items into a loaded thread's model history, with
/// no turn and no notification.
pub async fn inject_items(
    cx: Context<'_>,
    params: ThreadInjectItemsParams,
) -> HandlerResult<ThreadInjectItemsResponse> {
    cx.state
        .threads
        .inject_items(&params.thread_id, params.items)
        .await?;
    Ok(ThreadInjectItemsResponse {})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_patch_is_trimmed_and_empty_strings_refused() {
        let patch = checked_git_patch(ThreadMetadataGitInfoUpdateParams {
            sha: Some(Some("  abc ".into())),
            branch: Some(None),
            origin_url: None,
        })
        .unwrap();
        assert_eq!(patch.sha, Some(Some("abc".into())));
        assert_eq!(patch.branch, Some(None));
        let err = checked_git_patch(ThreadMetadataGitInfoUpdateParams {
            branch: Some(Some(" ".into())),
            ..ThreadMetadataGitInfoUpdateParams::default()
        })
        .unwrap_err();
        assert_eq!(err.message, "gitInfo.branch must not be empty");
        let err = checked_git_patch(ThreadMetadataGitInfoUpdateParams::default()).unwrap_err();
        assert_eq!(err.message, "gitInfo must include at least one field");
    }
}
