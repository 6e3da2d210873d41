//! Params and result of `thread/list` (docs/protocol.md §7.5).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::experimental::{Experimental, ExperimentalParams};
use crate::serde_util::null_as_default;
use crate::thread::{SortDirection, Thread, ThreadSortKey, ThreadSourceKind};

/// `cwd` filter of `thread/list`: one path or several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ThreadListCwdFilter {
    /// One path.
    One(String),
    /// Any of these paths.
    Many(Vec<String>),
}

impl ThreadListCwdFilter {
    /// The paths as a slice-like vector.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            ThreadListCwdFilter::One(p) => vec![p.as_str()],
            ThreadListCwdFilter::Many(ps) => ps.iter().map(String::as_str).collect(),
        }
    }
}

/// Params of `thread/list` (all optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListParams {
    /// Opaque pagination cursor.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Sort key (default `created_at`).
    #[serde(default)]
    pub sort_key: Option<ThreadSortKey>,
    /// Sort direction (default `desc`).
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// `true` = archived threads only; default non-archived only.
    #[serde(default)]
    pub archived: Option<bool>,
    /// Exact-match cwd filter.
    #[serde(default)]
    pub cwd: Option<ThreadListCwdFilter>,
    /// Case-sensitive substring of the title.
    #[serde(default)]
    pub search_term: Option<String>,
    /// Model providers to include (empty/absent = all).
    #[serde(default)]
    pub model_providers: Option<Vec<String>>,
    /// Source kinds to include (empty/absent = interactive only).
    #[serde(default)]
    pub source_kinds: Option<Vec<ThreadSourceKind>>,
    /// Threads to exclude.
    #[serde(default)]
    pub excluded_thread_ids: Option<Vec<String>>,
    /// Only these threads.
    #[serde(default)]
    pub included_thread_ids: Option<Vec<String>>,
    /// Originators to include.
    #[serde(default)]
    pub originators: Option<Vec<String>>,
    /// Section filter: omitted = every section, `null` = unsectioned threads, an id = that
    /// section's threads.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::present_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub section_id: Option<Option<String>>,
    /// Only threads of the current account.
    #[serde(default, deserialize_with = "null_as_default")]
    pub current_account_only: bool,
    /// Read only from the state database.
    #[serde(default, deserialize_with = "null_as_default")]
    pub use_state_db_only: bool,
    /// Direct parent filter (experimental; exclusive with `ancestorThreadId`).
    #[serde(default)]
    pub parent_thread_id: Option<String>,
    /// Descendants at any depth of this thread (experimental).
    #[serde(default)]
    pub ancestor_thread_id: Option<String>,
    /// Threads attached to this thread (experimental).
    #[serde(default)]
    pub attached_to_thread_id: Option<String>,
}

impl Experimental for ThreadListParams {
    const PARAMS: ExperimentalParams = ExperimentalParams {
        served: &["parentThreadId", "ancestorThreadId", "attachedToThreadId"],
        ..ExperimentalParams::NONE
    };
}

/// Result of `thread/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListResponse {
    /// Threads of this page (`turns: []`).
    pub data: Vec<Thread>,
    /// Cursor of the next page; `null` on the last page.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Cursor of the previous page.
    #[serde(default)]
    pub backwards_cursor: Option<String>,
    /// Read states of this page's durable threads, by thread id.
    #[serde(default)]
    pub read_states: Option<std::collections::BTreeMap<String, crate::ThreadReadState>>,
}
