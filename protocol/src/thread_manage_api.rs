//! Thread management (docs/protocol.md §7.36): `thread/delete` and `thread/deleted`,
//! `thread/metadata/update`, `thread/inject_items`, and the thread sections
//! (`threadSection/list`, `/create`, `/update`, `/delete`, `thread/section/move` and
//! `thread/section/changed`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::ThreadId;
use crate::thread::{Thread, ThreadSection, ThreadSectionAppearance};
use crate::thread_api::empty_response;

/// Params of `thread/delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadDeleteParams {
    /// The thread (with its spawned sub-agents).
    pub thread_id: ThreadId,
}

/// `thread/deleted`: a stored thread is gone (one per deleted thread, after the response).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadDeletedNotification {
    /// The deleted thread.
    pub thread_id: ThreadId,
}

/// Params of `thread/metadata/update`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMetadataUpdateParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// Patch the stored Git metadata for this thread. Omit a field to leave it unchanged, set
    /// it to `null` to clear it, or provide a string to replace the stored value.
    #[serde(default)]
    pub git_info: Option<ThreadMetadataGitInfoUpdateParams>,
}

/// The Git fields of `thread/metadata/update`: each omitted (unchanged), `null` (cleared) or a
/// non-empty string (replaced).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMetadataGitInfoUpdateParams {
    /// Omit to leave the stored commit unchanged, set to `null` to clear it, or provide a
    /// non-empty string to replace it.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::present_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "crate::schema_base::nullable_string")]
    pub sha: Option<Option<String>>,
    /// Omit to leave the stored branch unchanged, set to `null` to clear it, or provide a
    /// non-empty string to replace it.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::present_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "crate::schema_base::nullable_string")]
    pub branch: Option<Option<String>>,
    /// Omit to leave the stored origin URL unchanged, set to `null` to clear it, or provide a
    /// non-empty string to replace it.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::present_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "crate::schema_base::nullable_string")]
    pub origin_url: Option<Option<String>>,
}

/// Result of `thread/metadata/update`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMetadataUpdateResponse {
    /// The thread as it is now (`turns: []`).
    pub thread: Thread,
}

/// Params of `thread/inject_items`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadInjectItemsParams {
    /// The loaded thread.
    pub thread_id: ThreadId,
    /// Raw Responses API items to append to the thread's model-visible history.
    pub items: Vec<serde_json::Value>,
}

/// Params of `threadSection/list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSectionListParams {
    /// Opaque pagination cursor returned by a previous call.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Maximum number of sections to return.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Result of `threadSection/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSectionListResponse {
    /// The sections of this page, in their order (the built-in `Pinned` first).
    pub data: Vec<ThreadSection>,
    /// Opaque cursor for the next page, or `null` when no sections remain.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `threadSection/create`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSectionCreateParams {
    /// The user-visible name of the section.
    pub name: String,
    /// How clients show it.
    #[serde(default)]
    pub appearance: Option<ThreadSectionAppearance>,
}

/// Result of `threadSection/create`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSectionCreateResponse {
    /// The section.
    pub section: ThreadSection,
}

/// Params of `threadSection/update`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSectionUpdateParams {
    /// The stable, server-generated identity of the section to update.
    pub section_id: String,
    /// The updated user-visible name of the section.
    pub name: String,
    /// Omit to preserve appearance, use `null` to clear it, or provide a replacement.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::present_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub appearance: Option<Option<ThreadSectionAppearance>>,
}

/// Result of `threadSection/update`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSectionUpdateResponse {
    /// The section after its update.
    pub section: ThreadSection,
}

/// Params of `threadSection/delete`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSectionDeleteParams {
    /// The stable, server-generated identity of the section to delete.
    pub section_id: String,
}

/// Params of `thread/section/move`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSectionMoveParams {
    /// Thread to move into, within, or out of a section.
    pub thread_id: ThreadId,
    /// Destination section, or `null` to remove the thread from its section.
    #[schemars(required, schema_with = "crate::schema_base::nullable_string")]
    #[serde(default)]
    pub section_id: Option<String>,
    /// Existing thread to insert before; omission or null appends to the section.
    #[serde(default)]
    pub before_thread_id: Option<ThreadId>,
}

/// `thread/section/changed`: broadcast after a successful move into, within, or out of a
/// section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSectionChangedNotification {
    /// The moved thread.
    pub thread_id: ThreadId,
    /// Destination section, or `null` when the thread was removed from its section.
    #[schemars(required, schema_with = "crate::schema_base::nullable_string")]
    pub section_id: Option<String>,
}

empty_response! {
    /// Result of `thread/delete` (`{}`).
    ThreadDeleteResponse;
    /// Result of `thread/inject_items` (`{}`).
    ThreadInjectItemsResponse;
    /// Result of `threadSection/delete` (`{}`).
    ThreadSectionDeleteResponse;
    /// Result of `thread/section/move` (`{}`).
    ThreadSectionMoveResponse;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn git_fields_tell_omitted_from_null() {
        let params: ThreadMetadataUpdateParams = serde_json::from_value(json!({
            "threadId": "t",
            "gitInfo": {"sha": null, "branch": "main"}
        }))
        .unwrap();
        let git = params.git_info.unwrap();
        assert_eq!(git.sha, Some(None));
        assert_eq!(git.branch, Some(Some("main".into())));
        assert_eq!(git.origin_url, None);
        assert_eq!(
            serde_json::to_value(&git).unwrap(),
            json!({"sha": null, "branch": "main"})
        );
    }

    #[test]
    fn a_move_out_of_a_section_and_an_appearance_cleared() {
        let moved: ThreadSectionMoveParams =
            serde_json::from_value(json!({"threadId": "t", "sectionId": null})).unwrap();
        assert_eq!((moved.section_id, moved.before_thread_id), (None, None));
        let update: ThreadSectionUpdateParams =
            serde_json::from_value(json!({"sectionId": "s", "name": "n", "appearance": null}))
                .unwrap();
        assert_eq!(update.appearance, Some(None));
        let keep: ThreadSectionUpdateParams =
            serde_json::from_value(json!({"sectionId": "s", "name": "n"})).unwrap();
        assert_eq!(keep.appearance, None);
        assert_eq!(
            serde_json::to_value(ThreadSectionChangedNotification {
                thread_id: "t".into(),
                section_id: None
            })
            .unwrap(),
            json!({"threadId": "t", "sectionId": null})
        );
    }
}
