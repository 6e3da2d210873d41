//! Searching (docs/protocol.md §7.33): `fuzzyFileSearch` (stable), its sessions
//! (`fuzzyFileSearch/session*`, experimental) with their notifications, and `thread/search`
//! (experimental).
//!
//! The file search results keep the reference's snake_case keys (`file_name`, `match_type`):
//! they are not camelCased on the wire.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::thread::{SortDirection, Thread, ThreadSourceKind};
use crate::thread_api::empty_response;

/// Params of `fuzzyFileSearch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchParams {
    /// The fuzzy query.
    pub query: String,
    /// Absolute directories to search.
    pub roots: Vec<String>,
    /// A later search with the same token cancels this one (it then answers what it had).
    #[serde(default)]
    pub cancellation_token: Option<String>,
}

/// Whether a result is a file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FuzzyFileSearchMatchType {
    /// A file.
    File,
    /// A directory.
    Directory,
}

/// One match of a fuzzy file search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FuzzyFileSearchResult {
    /// The root the path is relative to.
    pub root: String,
    /// Path relative to `root`.
    pub path: String,
    /// File or directory.
    pub match_type: FuzzyFileSearchMatchType,
    /// The last component of `path`.
    pub file_name: String,
    /// The score (higher is better).
    pub score: u32,
    /// Char indices of `path` that matched.
    #[serde(default)]
    pub indices: Option<Vec<u32>>,
}

/// Result of `fuzzyFileSearch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FuzzyFileSearchResponse {
    /// The matches, best first.
    pub files: Vec<FuzzyFileSearchResult>,
}

/// Params of `fuzzyFileSearch/sessionStart`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStartParams {
    /// The client's name for the session (a new start with the same name replaces it).
    pub session_id: String,
    /// Absolute directories to search.
    pub roots: Vec<String>,
}

/// Params of `fuzzyFileSearch/sessionUpdate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdateParams {
    /// The session.
    pub session_id: String,
    /// The new query (it cancels the previous one's matching).
    pub query: String,
}

/// Params of `fuzzyFileSearch/sessionStop`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStopParams {
    /// The session.
    pub session_id: String,
}

empty_response! {
    /// Result of `fuzzyFileSearch/sessionStart` (`{}`).
    FuzzyFileSearchSessionStartResponse;
    /// Result of `fuzzyFileSearch/sessionUpdate` (`{}`).
    FuzzyFileSearchSessionUpdateResponse;
    /// Result of `fuzzyFileSearch/sessionStop` (`{}`).
    FuzzyFileSearchSessionStopResponse;
}

/// `fuzzyFileSearch/sessionUpdated`: the best matches of the session's latest query changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdatedNotification {
    /// The session.
    pub session_id: String,
    /// The query these are the matches of.
    pub query: String,
    /// The matches, best first (none for an empty query).
    pub files: Vec<FuzzyFileSearchResult>,
}

/// `fuzzyFileSearch/sessionCompleted`: the walk is done and the latest query fully ranked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionCompletedNotification {
    /// The session.
    pub session_id: String,
}

/// Sort key of `thread/search`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThreadSearchSortKey {
    /// Creation time (default).
    #[default]
    CreatedAt,
    /// Last update time.
    UpdatedAt,
    /// Recency.
    RecencyAt,
}

/// Params of `thread/search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSearchParams {
    /// Required substring/full-text query. `thread/search/stream` limits this to 65,536 UTF-8
    /// bytes after trimming surrounding whitespace.
    pub search_term: String,
    /// Opaque pagination cursor returned by a previous call.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Optional page size; defaults to a reasonable server-side value.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Optional sort key; defaults to created_at.
    #[serde(default)]
    pub sort_key: Option<ThreadSearchSortKey>,
    /// Optional sort direction; defaults to descending (newest first).
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// Optional source filter; when set, only sessions from these source kinds are returned.
    /// When omitted or empty, defaults to interactive sources.
    #[serde(default)]
    pub source_kinds: Option<Vec<ThreadSourceKind>>,
    /// Optional archived filter; when set to true, only archived threads are returned. If
    /// false or null, only non-archived threads are returned.
    #[serde(default)]
    pub archived: Option<bool>,
    /// Show local history visible to the current ChatGPT account. Defaults to false.
    #[serde(default)]
    pub current_account_only: bool,
    /// Include persistent threads attached to a parent in search results.
    #[serde(default)]
    pub include_attached_threads: bool,
}

/// One thread found by `thread/search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadSearchResult {
    /// The thread (without turns).
    pub thread: Thread,
    /// The text around the first match.
    pub snippet: String,
}

/// Result of `thread/search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSearchResponse {
    /// The threads found, in the requested order.
    pub data: Vec<ThreadSearchResult>,
    /// Opaque cursor to pass to the next call to continue after the last item. if None, there
    /// are no more items to return.
    pub next_cursor: Option<String>,
    /// Opaque cursor to pass as `cursor` when reversing `sortDirection` (Weft answers none).
    pub backwards_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn results_keep_snake_case_keys_in_the_references_order() {
        let result = FuzzyFileSearchResult {
            root: "/w".into(),
            path: "src/main.rs".into(),
            match_type: FuzzyFileSearchMatchType::File,
            file_name: "main.rs".into(),
            score: 65645,
            indices: Some(vec![4, 5, 6, 7]),
        };
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            r#"{"root":"/w","path":"src/main.rs","match_type":"file","file_name":"main.rs","score":65645,"indices":[4,5,6,7]}"#
        );
        let params: FuzzyFileSearchParams =
            serde_json::from_value(json!({"query": "m", "roots": ["/w"]})).unwrap();
        assert_eq!(params.cancellation_token, None);
        let params: ThreadSearchParams =
            serde_json::from_value(json!({"searchTerm": "x", "sortKey": "recency_at"})).unwrap();
        assert_eq!(params.sort_key, Some(ThreadSearchSortKey::RecencyAt));
    }
}
