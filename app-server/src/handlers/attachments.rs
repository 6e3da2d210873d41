//! `thread/attachment/add`, `thread/attachment/list`, `thread/attachmentOwner/list` and
//! `thread/attachment/remove` (docs/protocol.md §7.37): a stored thread's attachments, kept in
//! the state DB (`weft_core::state::attachments`). An add that creates one, and a remove that
//! deletes one, are followed by `thread/attachment/updated`, to everyone; an add of an
//! identity the thread already holds answers `existing` and tells no one. Errors are the
//! reference's: `-32602` with its texts (bad params, an unknown thread, a bad cursor).

use weft_core::state::StateDb;
use weft_core::state::attachments::{Added, AttachmentError, AttachmentLimits, Page, page_size};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{
    ThreadAttachmentAddOutcome, ThreadAttachmentAddParams, ThreadAttachmentAddResponse,
    ThreadAttachmentListParams, ThreadAttachmentListResponse, ThreadAttachmentOperation,
    ThreadAttachmentOwnerListParams, ThreadAttachmentOwnerListResponse,
    ThreadAttachmentRemoveParams, ThreadAttachmentRemoveResponse,
    ThreadAttachmentUpdatedNotification, ThreadId,
};

use crate::dispatch::{Answer, Context, HandlerResult};

/// JSON-RPC's invalid params, the reference's code for every refusal here.
const INVALID_PARAMS: i64 = -32602;

fn rpc_error(err: AttachmentError) -> JsonRpcError {
    match err {
        AttachmentError::State(err) => JsonRpcError::internal(err.to_string()),
        other => JsonRpcError::new(INVALID_PARAMS, other.to_string()),
    }
}

/// The thread id must be a UUID (the reference's text, with its code for these methods).
fn check_thread_id(id: &ThreadId) -> Result<(), JsonRpcError> {
    uuid::Uuid::parse_str(id.as_str())
        .map(|_| ())
        .map_err(|err| JsonRpcError::new(INVALID_PARAMS, format!("invalid thread id: {err}")))
}

/// The state DB; without one (unit tests of the runtime) no thread is stored.
fn db<'a>(cx: &Context<'a>, thread_id: Option<&ThreadId>) -> Result<&'a StateDb, JsonRpcError> {
    cx.state.threads.services().state.as_ref().ok_or_else(|| {
        let text = match thread_id {
            Some(id) => format!("thread not found: {id}"),
            None => "the thread index (state DB) is not available".to_string(),
        };
        JsonRpcError::new(INVALID_PARAMS, text)
    })
}

/// `thread/attachment/add`.
pub async fn add(
    cx: Context<'_>,
    params: ThreadAttachmentAddParams,
) -> HandlerResult<Answer<ThreadAttachmentAddResponse>> {
    weft_core::state::attachments::check_identity(&params.attachment_type, &params.identity_key)
        .map_err(rpc_error)?;
    let limits = &cx.state.threads.services().config.limits;
    let limits = AttachmentLimits {
        payload_bytes: limits.thread_attachment_payload_bytes,
        per_thread: limits.thread_attachments_per_thread,
    };
    // The reference's order: the identity, the payload, then the thread.
    weft_core::state::attachments::check_payload(&params.payload, limits.payload_bytes)
        .map_err(rpc_error)?;
    check_thread_id(&params.thread_id)?;
    let added = db(&cx, Some(&params.thread_id))?
        .add_attachment(
            &params.thread_id,
            &params.attachment_type,
            &params.identity_key,
            &params.payload,
            limits,
            weft_core::time::now_secs(),
        )
        .await
        .map_err(rpc_error)?;
    Ok(match added {
        Added::Created(attachment) => {
            let notification = ThreadAttachmentUpdatedNotification {
                thread_id: params.thread_id,
                attachment_type: attachment.attachment_type.clone(),
                identity_key: attachment.identity_key.clone(),
                attachment_id: attachment.id.clone(),
                operation: ThreadAttachmentOperation::Created,
            };
            Answer::new(ThreadAttachmentAddResponse {
                outcome: ThreadAttachmentAddOutcome::Created,
                attachment,
            })
            .then_broadcast(notification)
        }
        Added::Existing(attachment) => Answer::new(ThreadAttachmentAddResponse {
            outcome: ThreadAttachmentAddOutcome::Existing,
            attachment,
        }),
    })
}

/// `thread/attachment/list`.
pub async fn list(
    cx: Context<'_>,
    params: ThreadAttachmentListParams,
) -> HandlerResult<ThreadAttachmentListResponse> {
    check_thread_id(&params.thread_id)?;
    let Page { data, next_cursor } = db(&cx, Some(&params.thread_id))?
        .list_attachments(
            &params.thread_id,
            params.cursor.as_deref(),
            page_size(params.limit),
        )
        .await
        .map_err(rpc_error)?;
    Ok(ThreadAttachmentListResponse { data, next_cursor })
}

/// `thread/attachmentOwner/list`.
pub async fn owner_list(
    cx: Context<'_>,
    params: ThreadAttachmentOwnerListParams,
) -> HandlerResult<ThreadAttachmentOwnerListResponse> {
    let Page { data, next_cursor } = db(&cx, None)?
        .attachment_owners(
            &params.attachment_type,
            &params.identity_key,
            params.archived,
            params.cursor.as_deref(),
            page_size(params.limit),
        )
        .await
        .map_err(rpc_error)?;
    Ok(ThreadAttachmentOwnerListResponse { data, next_cursor })
}

/// `thread/attachment/remove`.
pub async fn remove(
    cx: Context<'_>,
    params: ThreadAttachmentRemoveParams,
) -> HandlerResult<Answer<ThreadAttachmentRemoveResponse>> {
    weft_core::state::attachments::check_identity(&params.attachment_type, &params.identity_key)
        .map_err(rpc_error)?;
    check_thread_id(&params.thread_id)?;
    let removed = db(&cx, Some(&params.thread_id))?
        .remove_attachment(
            &params.thread_id,
            &params.attachment_type,
            &params.identity_key,
        )
        .await
        .map_err(rpc_error)?;
    let answer = Answer::new(ThreadAttachmentRemoveResponse {});
    Ok(match removed {
        Some(attachment) => answer.then_broadcast(ThreadAttachmentUpdatedNotification {
            thread_id: params.thread_id,
            attachment_type: attachment.attachment_type,
            identity_key: attachment.identity_key,
            attachment_id: attachment.id,
            operation: ThreadAttachmentOperation::Deleted,
        }),
        None => answer,
    })
}

/// After a `thread/fork`: the fork gets copies of its source's attachments (new ids, no
/// notification), as in the reference. A failure is logged; the fork stands.
pub async fn copy_to_fork(state: &crate::state::AppState, source: &ThreadId, fork: &ThreadId) {
    let Some(db) = &state.threads.services().state else {
        return;
    };
    let now = weft_core::time::now_secs();
    if let Err(err) = weft_core::state::attachments::copy_to_fork(db, source, fork, now).await {
        tracing::warn!(%source, %fork, %err, "cannot copy the thread's attachments to its fork");
    }
}
