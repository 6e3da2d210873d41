//! A partial [`RolloutIndex`]: the last turns of a rollout and their items, with everything
//! else a resume needs (the landmarks, the counters), read back from the sidecar's small
//! [`super::tail`] instead of replaying the whole sidecar (docs/architecture.md §10.3).
//!
//! A partial index holds a suffix of the turns and a suffix of the items. Its positions
//! ([`RolloutIndex::turns`], [`RolloutIndex::items`], [`RolloutIndex::turn_position`]) count
//! from the first one held; the events it records for the sidecar count from the file's first
//! turn, as a whole index's do. What it cannot answer it says so: a page that reaches before
//! the turns held, or a turn it does not hold, is [`RolloutError::NotHeld`], and the cache
//! reads the whole index and asks again ([`super::IndexCache::with_recent`]). A line appended
//! later that names a turn it does not hold stops its update (`unsure`): the whole index is
//! read instead.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use weft_protocol::TurnId;

use super::event::{error_text, status_code, status_of};
use super::{
    IndexedItem, IndexedTurn, ItemKind, Landmarks, RolloutError, RolloutIndex, TurnOutcome,
};

/// How many of the last turns a tail keeps: a page of the default size, and so a resume's
/// first page of that size or less, is served from it.
pub(super) const TAIL_TURNS: usize = super::super::pages::DEFAULT_PAGE_LIMIT as usize;

/// The last turns of an index and their items, as the tail stores them (positions counted
/// from the first turn and item kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Held {
    /// Turns and items of the file before the ones kept.
    pub base_turns: u32,
    pub base_items: u32,
    pub latest_start: Option<i64>,
    pub landmarks: Landmarks,
    pub turns: Vec<HeldTurn>,
    pub items: Vec<HeldItem>,
}

/// An [`IndexedTurn`] as the tail stores it (its status as one byte, its error as JSON text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct HeldTurn {
    id: String,
    ordinal: u64,
    started_at: i64,
    started_ms: i64,
    end: Option<(u8, Option<String>, i64, Option<i64>)>,
    items: Vec<u32>,
}

/// An [`IndexedItem`] as the tail stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct HeldItem {
    ordinal: u64,
    offset: u64,
    len: u32,
    turn: u32,
    kind: ItemKind,
}

impl RolloutIndex {
    /// Whether this index holds only the last turns of its file (read back from a tail).
    pub fn is_partial(&self) -> bool {
        self.base_turns > 0 || self.base_items > 0
    }

    /// The latest `started_at` of the file's turns.
    pub fn latest_start(&self) -> Option<i64> {
        self.latest_start
    }

    /// How many of the file's turns come before the first one held (0 for a whole index).
    pub fn turns_before(&self) -> usize {
        self.base_turns as usize
    }

    /// How many of the file's items come before the first one held (0 for a whole index).
    pub fn items_before(&self) -> usize {
        self.base_items as usize
    }

    /// Where a turn is in [`RolloutIndex::turns`]: `Ok(None)` when the file has no such turn,
    /// [`RolloutError::NotHeld`] when this partial index cannot tell.
    pub fn find_turn(&self, id: &TurnId) -> Result<Option<usize>, RolloutError> {
        match self.turn_position(id) {
            Some(at) => Ok(Some(at)),
            None if self.is_partial() => Err(RolloutError::NotHeld),
            None => Ok(None),
        }
    }

    /// The last [`TAIL_TURNS`] turns held and their items, for the tail; `None` when an item
    /// among theirs belongs to an earlier turn (a suffix of the items would not be one of the
    /// turns: that file keeps no tail).
    pub(super) fn held_tail(&self) -> Option<Held> {
        let first = self.turns.len().saturating_sub(TAIL_TURNS);
        let kept = &self.turns[first..];
        let from = kept
            .iter()
            .filter_map(|turn| turn.items.first())
            .min()
            .map_or(self.items.len(), |&i| i as usize);
        let items = &self.items[from..];
        if items.iter().any(|item| (item.turn as usize) < first) {
            return None;
        }
        Some(Held {
            base_turns: self.base_turns + first as u32,
            base_items: self.base_items + from as u32,
            latest_start: self.latest_start,
            landmarks: self.landmarks.clone(),
            turns: kept
                .iter()
                .map(|turn| HeldTurn {
                    id: turn.id.to_string(),
                    ordinal: turn.ordinal,
                    started_at: turn.started_at,
                    started_ms: turn.started_ms,
                    end: turn.end.as_ref().map(|end| {
                        let error = error_text(&end.error);
                        let status = status_code(end.status);
                        (status, error, end.completed_at, end.duration_ms)
                    }),
                    items: turn.items.iter().map(|&i| i - from as u32).collect(),
                })
                .collect(),
            items: items
                .iter()
                .map(|item| HeldItem {
                    ordinal: item.ordinal,
                    offset: item.offset,
                    len: item.len,
                    turn: item.turn - first as u32,
                    kind: item.kind,
                })
                .collect(),
        })
    }

    /// Take `held` as what this (empty) index holds; `false` (nothing taken) when its
    /// positions do not point inside it.
    pub(super) fn hold(&mut self, held: Held) -> bool {
        let (turns, items) = (held.turns.len() as u32, held.items.len() as u32);
        let fits = held.items.iter().all(|item| item.turn < turns)
            && held
                .turns
                .iter()
                .all(|turn| turn.items.iter().all(|&i| i < items));
        if !fits {
            return false;
        }
        self.base_turns = held.base_turns;
        self.base_items = held.base_items;
        self.latest_start = held.latest_start;
        self.landmarks = held.landmarks;
        self.items = held
            .items
            .into_iter()
            .map(|item| IndexedItem {
                ordinal: item.ordinal,
                offset: item.offset,
                len: item.len,
                turn: item.turn,
                kind: item.kind,
            })
            .collect();
        self.turns = held
            .turns
            .into_iter()
            .map(|turn| IndexedTurn {
                id: TurnId::from(turn.id),
                ordinal: turn.ordinal,
                started_at: turn.started_at,
                started_ms: turn.started_ms,
                end: turn
                    .end
                    .map(|(status, error, completed_at, duration_ms)| TurnOutcome {
                        status: status_of(status),
                        error: error.as_deref().and_then(|t| serde_json::from_str(t).ok()),
                        completed_at,
                        duration_ms,
                    }),
                items: turn.items,
            })
            .collect();
        self.turn_ids = self
            .turns
            .iter()
            .enumerate()
            .map(|(at, turn)| (turn.id.clone(), at as u32))
            .collect::<HashMap<_, _>>();
        true
    }

    /// Whether a line named a turn this partial index does not hold since it was read back.
    pub(super) fn unsure(&self) -> bool {
        self.unsure
    }
}
