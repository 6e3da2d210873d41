//! Params and results of the thread attachment methods (`thread/attachment/add`, `/list`,
//! `/remove`, `thread/attachmentOwner/list`) and their notification,
//! `thread/attachment/updated` (docs/protocol.md §7.37).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::ThreadId;

/// An independently persisted attachment associated with a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachment {
    /// The attachment's id (a UUIDv7), made when it was created.
    pub id: String,
    /// The client's kind of attachment; with `identityKey`, its identity on its thread.
    pub attachment_type: String,
    /// The attachment's stable key within its type.
    pub identity_key: String,
    /// The client's JSON, as stored when the attachment was created.
    pub payload: Value,
    /// Unix seconds of its creation.
    pub created_at: i64,
}

/// Result of attempting to associate an attachment with a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadAttachmentAddOutcome {
    /// A new attachment was stored.
    Created,
    /// The thread already had one with this identity; it is returned unchanged.
    Existing,
}

/// Params of `thread/attachment/add`: create or locate an attachment on its thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachmentAddParams {
    /// The owning thread.
    pub thread_id: ThreadId,
    /// The attachment's type.
    pub attachment_type: String,
    /// The attachment's key within its type.
    pub identity_key: String,
    /// Any JSON (bounded by `[limits] thread_attachment_payload_bytes`).
    pub payload: Value,
}

/// Result of `thread/attachment/add`: the created or existing attachment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachmentAddResponse {
    /// Whether it was created now.
    pub outcome: ThreadAttachmentAddOutcome,
    /// The attachment as stored.
    pub attachment: ThreadAttachment,
}

/// Params of `thread/attachment/list`: one page of a thread's attachments, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachmentListParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// A `nextCursor` from an earlier page of this thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Page size (clamped to 1..=100; 25 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// Result of `thread/attachment/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachmentListResponse {
    /// The page.
    pub data: Vec<ThreadAttachment>,
    /// The cursor of the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// Params of `thread/attachmentOwner/list`: the threads holding an attachment of this
/// identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachmentOwnerListParams {
    /// The attachment's type.
    pub attachment_type: String,
    /// The attachment's key within its type.
    pub identity_key: String,
    /// Omitted or null returns all matches; false returns non-archived threads only (true,
    /// archived ones only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
    /// A `nextCursor` from an earlier page of the same query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Page size (clamped to 1..=100; 25 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// A thread that currently owns an attachment with the requested identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachmentOwner {
    /// The thread.
    pub thread_id: ThreadId,
    /// Whether the owning thread is archived (not whether it is running a turn).
    pub archived: bool,
}

/// Result of `thread/attachmentOwner/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachmentOwnerListResponse {
    /// The page, by thread id.
    pub data: Vec<ThreadAttachmentOwner>,
    /// The cursor of the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// Params of `thread/attachment/remove`: delete an attachment by its identity on its thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachmentRemoveParams {
    /// The owning thread.
    pub thread_id: ThreadId,
    /// The attachment's type.
    pub attachment_type: String,
    /// The attachment's key within its type.
    pub identity_key: String,
}

/// Result of `thread/attachment/remove` (empty, whether there was one to remove or not).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadAttachmentRemoveResponse {}

/// The persisted attachment change a notification reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadAttachmentOperation {
    /// `thread/attachment/add` stored a new attachment.
    Created,
    /// `thread/attachment/remove` deleted one.
    Deleted,
}

/// `thread/attachment/updated`: an attachment was created or deleted (to every client,
/// after the response).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadAttachmentUpdatedNotification {
    /// The owning thread.
    pub thread_id: ThreadId,
    /// The attachment's type.
    pub attachment_type: String,
    /// The attachment's key within its type.
    pub identity_key: String,
    /// The attachment's id.
    pub attachment_id: String,
    /// What happened.
    pub operation: ThreadAttachmentOperation,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn optional_params_are_left_out_and_the_outcomes_are_camel_case() {
        let params: ThreadAttachmentListParams =
            serde_json::from_value(json!({"threadId": "t"})).unwrap();
        assert_eq!((params.cursor, params.limit), (None, None));
        assert_eq!(
            serde_json::to_value(ThreadAttachmentAddOutcome::Existing).unwrap(),
            json!("existing")
        );
        assert_eq!(
            serde_json::to_value(ThreadAttachmentRemoveResponse {}).unwrap(),
            json!({})
        );
    }
}
