//! Pages of a thread's history from a [`RolloutIndex`]: `thread/turns/list` and
//! `thread/items/list`, their cursors and limits (docs/protocol.md §7.24).
//!
//! A cursor is the JSON text `{"requestedThreadId", "rolloutOrdinal", "includeAnchor",
//! "scope": {"kind": "turns" | "itemsByCreatedAtOrdinal"}}`, the reference's shape. The
//! ordinal is the line of a turn's start or an item's completion (see [`super::index`]); a
//! page lists the positions after (ascending) or before (descending) it, the anchor itself
//! included when `includeAnchor`. `nextCursor` continues after a page's last entry (anchor
//! excluded), and is `null` when nothing is left that way; `backwardsCursor` is the page's
//! first entry, anchor included, for the opposite direction.

use serde::{Deserialize, Serialize};
use weft_protocol::history_api::{ThreadItemEntry, ThreadItemsListResponse, TurnsPage};
use weft_protocol::{SortDirection, ThreadId, ThreadItem, Turn, TurnId, TurnItemsView, TurnStatus};

use super::RolloutError;
use super::index::{IndexedTurn, ItemKind, RolloutIndex};

/// Page size when the request has none.
pub const DEFAULT_PAGE_LIMIT: u32 = 25;
/// The largest page served.
pub const MAX_PAGE_LIMIT: u32 = 100;

/// The page size of a request: the default when absent, at least 1, at most the maximum.
pub fn page_limit(limit: Option<u32>) -> usize {
    limit.unwrap_or(DEFAULT_PAGE_LIMIT).clamp(1, MAX_PAGE_LIMIT) as usize
}

/// What a cursor pages through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum CursorScope {
    /// Turns.
    Turns,
    /// Items in line order.
    ItemsByCreatedAtOrdinal,
}

/// A decoded cursor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cursor {
    requested_thread_id: String,
    rollout_ordinal: u64,
    include_anchor: bool,
    scope: CursorScope,
}

impl Cursor {
    /// A cursor at `ordinal`.
    pub fn new(
        thread: &ThreadId,
        ordinal: u64,
        include_anchor: bool,
        scope: CursorScope,
    ) -> Cursor {
        Cursor {
            requested_thread_id: thread.to_string(),
            rollout_ordinal: ordinal,
            include_anchor,
            scope,
        }
    }

    /// The cursor's text.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Decode a cursor of this thread and scope; `None` for anything else (another thread's
    /// cursor included).
    pub fn decode(text: &str, thread: &ThreadId, scope: CursorScope) -> Option<Cursor> {
        let cursor: Cursor = serde_json::from_str(text).ok()?;
        (cursor.requested_thread_id == thread.as_str() && cursor.scope == scope).then_some(cursor)
    }

    /// An exclusive position (an item anchor).
    pub fn exclusive(ordinal: u64) -> Position {
        Position {
            ordinal,
            include_anchor: false,
        }
    }

    /// Where the cursor points.
    pub fn position(&self) -> Position {
        Position {
            ordinal: self.rollout_ordinal,
            include_anchor: self.include_anchor,
        }
    }
}

/// A position to page from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// A line ordinal.
    pub ordinal: u64,
    /// Whether an entry at exactly this ordinal is included.
    pub include_anchor: bool,
}

/// Which entries of `ordinals` (ascending) a page holds, in page order, and whether more are
/// left beyond it. A partial index holds only the last entries: `before` more come before
/// `ordinals`, and a page that would reach before the first one held is
/// [`RolloutError::NotHeld`].
pub fn select(
    ordinals: &[u64],
    before: usize,
    from: Option<Position>,
    direction: SortDirection,
    limit: usize,
) -> Result<(Vec<usize>, bool), RolloutError> {
    match direction {
        SortDirection::Asc => {
            let start = match from {
                None => 0,
                Some(p) if p.include_anchor => ordinals.partition_point(|&o| o < p.ordinal),
                Some(p) => ordinals.partition_point(|&o| o <= p.ordinal),
            };
            // Entries not held may come after the position when none held comes before it.
            if start == 0 && before > 0 {
                return Err(RolloutError::NotHeld);
            }
            let end = (start + limit).min(ordinals.len());
            Ok(((start..end).collect(), end < ordinals.len()))
        }
        SortDirection::Desc => {
            let end = match from {
                None => ordinals.len(),
                Some(p) if p.include_anchor => ordinals.partition_point(|&o| o <= p.ordinal),
                Some(p) => ordinals.partition_point(|&o| o < p.ordinal),
            };
            if end < limit && before > 0 {
                return Err(RolloutError::NotHeld);
            }
            let start = end.saturating_sub(limit);
            Ok(((start..end).rev().collect(), start > 0 || before > 0))
        }
    }
}

/// The two cursors of a page whose entries are at `ordinals` (in page order).
fn cursors(
    thread: &ThreadId,
    scope: CursorScope,
    ordinals: &[u64],
    more: bool,
) -> (Option<String>, Option<String>) {
    let next = ordinals
        .last()
        .filter(|_| more)
        .map(|&o| Cursor::new(thread, o, false, scope).encode());
    let back = ordinals
        .first()
        .map(|&o| Cursor::new(thread, o, true, scope).encode());
    (next, back)
}

/// A page of turns. `live` says the thread is running its last open turn.
pub fn turns_page(
    index: &RolloutIndex,
    thread: &ThreadId,
    from: Option<Position>,
    direction: SortDirection,
    limit: usize,
    view: TurnItemsView,
    live: bool,
) -> Result<TurnsPage, RolloutError> {
    let turns = index.turns();
    let ordinals: Vec<u64> = turns.iter().map(|t| t.ordinal).collect();
    let (picked, more) = select(&ordinals, index.turns_before(), from, direction, limit)?;
    let mut file = match view {
        TurnItemsView::NotLoaded => None,
        _ => Some(index.open()?),
    };
    let mut data = Vec::with_capacity(picked.len());
    for &at in &picked {
        let turn = &turns[at];
        let is_last = at + 1 == turns.len();
        let items = match &mut file {
            None => Vec::new(),
            Some(file) => turn_items(index, file, turn, view)?,
        };
        data.push(wire_turn(index, turn, items, view, live && is_last));
    }
    let page_ordinals: Vec<u64> = picked.iter().map(|&at| ordinals[at]).collect();
    let (next_cursor, backwards_cursor) = cursors(thread, CursorScope::Turns, &page_ordinals, more);
    Ok(TurnsPage {
        data,
        next_cursor,
        backwards_cursor,
    })
}

/// The items a turn shows in `view`: all of them, or the summary (its first user message and
/// its last agent message so far).
fn turn_items(
    index: &RolloutIndex,
    file: &mut std::fs::File,
    turn: &IndexedTurn,
    view: TurnItemsView,
) -> Result<Vec<ThreadItem>, RolloutError> {
    let items = index.items();
    let chosen: Vec<u32> = match view {
        TurnItemsView::NotLoaded => Vec::new(),
        TurnItemsView::Full => turn.items.clone(),
        TurnItemsView::Summary => {
            let of_kind = |kind: ItemKind| move |i: &&u32| items[**i as usize].kind == kind;
            let user = turn.items.iter().find(of_kind(ItemKind::UserMessage));
            let agent = turn
                .items
                .iter()
                .rev()
                .find(of_kind(ItemKind::AgentMessage));
            user.into_iter().chain(agent).copied().collect()
        }
    };
    chosen
        .into_iter()
        .map(|i| index.read_item(file, &items[i as usize]))
        .collect()
}

fn wire_turn(
    index: &RolloutIndex,
    turn: &IndexedTurn,
    items: Vec<ThreadItem>,
    view: TurnItemsView,
    live: bool,
) -> Turn {
    let mut wire = Turn::in_progress(turn.id.clone(), Some(turn.started_at));
    wire.items = items;
    wire.items_view = view;
    if let Some(end) = index.effective_end(turn, live) {
        wire.status = end.status;
        wire.error = end.error;
        wire.completed_at = Some(end.completed_at);
        wire.duration_ms = end.duration_ms;
    } else {
        wire.status = TurnStatus::InProgress;
    }
    wire
}

/// The scope of an items page: every item, or one turn's.
#[derive(Debug, Clone, Copy)]
pub enum ItemScope {
    /// Items across the thread.
    Thread,
    /// The items of the turn at this position of [`RolloutIndex::turns`].
    Turn(usize),
}

/// The indexes (into [`RolloutIndex::items`]) of the items in `scope`, in line order, and how
/// many of the scope's items come before them (not held by a partial index).
pub fn scope_items(index: &RolloutIndex, scope: ItemScope) -> (Vec<u32>, usize) {
    match scope {
        ItemScope::Thread => (
            (0..index.items().len() as u32).collect(),
            index.items_before(),
        ),
        // A turn held has its items held.
        ItemScope::Turn(turn) => (index.turns()[turn].items.clone(), 0),
    }
}

/// The position of the item with this id in a turn (for an item anchor), reading the turn's
/// items back.
pub fn find_item(
    index: &RolloutIndex,
    turn: usize,
    item_id: &str,
) -> Result<Option<Position>, RolloutError> {
    let mut file = index.open()?;
    for &i in &index.turns()[turn].items {
        let entry = &index.items()[i as usize];
        if index.read_item(&mut file, entry)?.id().as_str() == item_id {
            return Ok(Some(Cursor::exclusive(entry.ordinal)));
        }
    }
    Ok(None)
}

/// A page of items.
pub fn items_page(
    index: &RolloutIndex,
    thread: &ThreadId,
    scope: ItemScope,
    from: Option<Position>,
    direction: SortDirection,
    limit: usize,
) -> Result<ThreadItemsListResponse, RolloutError> {
    let (in_scope, before) = scope_items(index, scope);
    let items = index.items();
    let ordinals: Vec<u64> = in_scope
        .iter()
        .map(|&i| items[i as usize].ordinal)
        .collect();
    let (picked, more) = select(&ordinals, before, from, direction, limit)?;
    let mut data = Vec::with_capacity(picked.len());
    if !picked.is_empty() {
        let mut file = index.open()?;
        for &at in &picked {
            let entry = &items[in_scope[at] as usize];
            let item = index.read_item(&mut file, entry)?;
            let turn_id: TurnId = index.turns()[entry.turn as usize].id.clone();
            data.push(ThreadItemEntry {
                turn_id,
                started_at_ms: item.started_at_ms,
                completed_at_ms: item.completed_at_ms,
                item,
            });
        }
    }
    let page_ordinals: Vec<u64> = picked.iter().map(|&at| ordinals[at]).collect();
    let (next_cursor, backwards_cursor) = cursors(
        thread,
        CursorScope::ItemsByCreatedAtOrdinal,
        &page_ordinals,
        more,
    );
    Ok(ThreadItemsListResponse {
        data,
        next_cursor,
        backwards_cursor,
    })
}

/// `thread/resume`'s `turnsBackwardsCursor` and `itemsBackwardsCursor`: the latest turn and
/// the latest item, anchors included.
pub fn resume_cursors(
    index: &RolloutIndex,
    thread: &ThreadId,
) -> Result<(Option<String>, Option<String>), RolloutError> {
    if index.items().is_empty() && index.items_before() > 0 {
        return Err(RolloutError::NotHeld);
    }
    let turns = index
        .turns()
        .last()
        .map(|t| Cursor::new(thread, t.ordinal, true, CursorScope::Turns).encode());
    let items = index.items().last().map(|i| {
        Cursor::new(
            thread,
            i.ordinal,
            true,
            CursorScope::ItemsByCreatedAtOrdinal,
        )
        .encode()
    });
    Ok((turns, items))
}
