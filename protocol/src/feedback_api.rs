//! Params and result of `feedback/save` (docs/protocol.md §7.37): a local feedback bundle, a
//! ZIP the caller names. (`feedback/upload`, which sends the report to OpenAI, is not served.)

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `feedback/save`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackSaveParams {
    /// `bug`, `bad_result`, `good_result`, `safety_check` or any other word.
    pub classification: String,
    /// Files the caller wants in the bundle (added whether or not `includeLogs` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_log_files: Option<Vec<String>>,
    /// Also add the thread's rollout and the bundle's thread index.
    #[serde(default)]
    pub include_logs: bool,
    /// The user's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Absolute, previously unused ZIP path on the app-server host. The caller owns this
    /// file, including after a disconnected RPC.
    pub save_path: String,
    /// Tags for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
    /// The thread the feedback is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

/// Result of `feedback/save`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackSaveResponse {
    /// Same prompt hash as feedback/upload; null when prompt metadata is absent.
    pub prompt_hash: Option<String>,
    /// Where the bundle is.
    pub saved_path: String,
    /// The thread the report names (`no-active-thread-<uuid>` when the params named none).
    pub thread_id: String,
}
