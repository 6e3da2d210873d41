//! Params and results of the paginated history methods (experimental in the reference):
//! `thread/turns/list`, `thread/items/list`, and the `initialTurnsPage` of `thread/resume`
//! (docs/protocol.md §7.24).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{ThreadId, TurnId};
use crate::items::ThreadItem;
use crate::thread::SortDirection;
use crate::turn::{Turn, TurnItemsView};

/// Params of `thread/turns/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTurnsListParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// Opaque cursor to pass to the next call to continue after the last turn.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Optional turn page size.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Optional turn pagination direction; defaults to descending.
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// How much item detail to include for each returned turn; defaults to summary.
    #[serde(default)]
    pub items_view: Option<TurnItemsView>,
}

/// A page of turns: the result of `thread/turns/list`, and the `initialTurnsPage` of
/// `thread/resume`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnsPage {
    /// The turns, in the requested order.
    pub data: Vec<Turn>,
    /// Opaque cursor to pass to the next call to continue after the last turn; `null` when
    /// there are no more turns to return.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Opaque cursor to pass as `cursor` when reversing `sortDirection` (includes the page's
    /// first turn again); `null` for an empty page.
    #[serde(default)]
    pub backwards_cursor: Option<String>,
}

/// Result of `thread/turns/list` (the same fields as [`TurnsPage`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTurnsListResponse {
    /// The turns, in the requested order.
    pub data: Vec<Turn>,
    /// Opaque cursor to continue after the last turn; `null` when there are no more.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Opaque cursor to pass as `cursor` when reversing `sortDirection` (includes the page's
    /// first turn again); `null` for an empty page.
    #[serde(default)]
    pub backwards_cursor: Option<String>,
}

impl From<TurnsPage> for ThreadTurnsListResponse {
    fn from(page: TurnsPage) -> Self {
        Self {
            data: page.data,
            next_cursor: page.next_cursor,
            backwards_cursor: page.backwards_cursor,
        }
    }
}

/// The `initialTurnsPage` param of `thread/resume`: a `thread/turns/list` page to include in
/// the response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeInitialTurnsPageParams {
    /// Optional turn page size.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Optional turn pagination direction; defaults to descending.
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// How much item detail to include for each returned turn; defaults to summary.
    #[serde(default)]
    pub items_view: Option<TurnItemsView>,
}

/// An exclusive item position within the requested turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadItemsListAnchor {
    /// The item with this id.
    #[serde(rename_all = "camelCase")]
    Item {
        /// The item id.
        item_id: String,
    },
}

/// Starting position for an item-history page: an opaque cursor a page returned, or an
/// exclusive item anchor (which requires `turnId`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ThreadItemsListCursor {
    /// A cursor from `nextCursor` / `backwardsCursor`.
    Opaque(String),
    /// An item anchor.
    Anchor(ThreadItemsListAnchor),
}

/// Which saved outputs of a single turn to omit (fetched separately by item id).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemOutputDeferral {
    /// Defer nonempty output from successful commands.
    #[serde(default)]
    pub command_execution: bool,
    /// Defer nonempty plain-text results from successful MCP tool calls.
    #[serde(default)]
    pub mcp_tool_call: bool,
}

/// Params of `thread/items/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemsListParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// Optional turn id to filter by; when omitted, items across the thread.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// Opaque continuation cursor or an exclusive item anchor in the requested turn.
    #[serde(default)]
    pub cursor: Option<ThreadItemsListCursor>,
    /// Optional item page size.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Optional item pagination direction; defaults to ascending.
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// Accepted; Weft never defers outputs (every entry has the whole item).
    #[serde(default)]
    pub defer_output: Option<ThreadItemOutputDeferral>,
}

/// One item of `thread/items/list` with its turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemEntry {
    /// Turn containing this item.
    pub turn_id: TurnId,
    /// The item in its final state.
    pub item: ThreadItem,
    /// Unix ms when the item started, if recorded.
    #[serde(default)]
    pub started_at_ms: Option<i64>,
    /// Unix ms when the item completed, if recorded.
    #[serde(default)]
    pub completed_at_ms: Option<i64>,
}

/// Result of `thread/items/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemsListResponse {
    /// The items, in the requested order.
    pub data: Vec<ThreadItemEntry>,
    /// Opaque cursor to continue after the last item; `null` when there are no more.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Opaque cursor to pass as `cursor` when reversing `sortDirection`; `null` for an empty
    /// page.
    #[serde(default)]
    pub backwards_cursor: Option<String>,
}
