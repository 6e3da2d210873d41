//! What one indexed line adds to a [`RolloutIndex`], as a value: the streaming pass turns a
//! line into an [`Event`] and applies it, and the on-disk copy of the index
//! ([`super::sidecar`]) stores the same events, so an index read back from disk is the one
//! the pass built by construction (one [`RolloutIndex::apply`] for both).
//!
//! Events carry positions and the few fields a page needs, never a payload: a few bytes per
//! line, whatever the line holds. Counters that every line moves (the byte and line counts,
//! the newest time, the skipped lines) are not events; a sidecar segment ends with them.

use serde::{Deserialize, Serialize};
use weft_protocol::{TurnError, TurnId, TurnStatus};

use super::{HistoryEntry, IndexedItem, IndexedTurn, ItemKind, LineAt, RolloutIndex, TurnOutcome};

/// One indexed line's effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Event {
    /// The `session_meta` header (line 0) and its time.
    Header { at: LineAt, ts: i64 },
    /// A `response_item`: the model history grows.
    ResponseItem(LineAt),
    /// A `compacted` line: the model history starts again from it.
    Compacted(LineAt),
    /// The latest `token_usage`.
    TokenUsage(LineAt),
    /// The latest `thread_name_set`.
    NameSet(LineAt),
    /// The latest `agent_closed`.
    AgentClosed(LineAt),
    /// A `turn_started`; `before_ms` is the time of the line before it, which ends a turn the
    /// daemon never finished.
    TurnStarted {
        at: LineAt,
        ordinal: u64,
        id: String,
        started_at: i64,
        ts: i64,
        before_ms: i64,
    },
    /// An `item_completed`: in turn `turn` (its position among the file's turns) when its turn
    /// is known;
    /// `preview` when it is the thread's first user message with text.
    Item {
        at: LineAt,
        ordinal: u64,
        turn: Option<u32>,
        kind: ItemKind,
        preview: bool,
    },
    /// A `turn_ended` of turn `turn`; the error as its JSON text.
    TurnEnded {
        turn: u32,
        status: u8,
        error: Option<String>,
        completed_at: i64,
        duration_ms: Option<i64>,
    },
}

/// A status as one byte (stable on disk whatever the enum's order).
pub(super) fn status_code(status: TurnStatus) -> u8 {
    match status {
        TurnStatus::Completed => 0,
        TurnStatus::Interrupted => 1,
        TurnStatus::Failed => 2,
        TurnStatus::InProgress => 3,
    }
}

pub(super) fn status_of(code: u8) -> TurnStatus {
    match code {
        0 => TurnStatus::Completed,
        1 => TurnStatus::Interrupted,
        2 => TurnStatus::Failed,
        _ => TurnStatus::InProgress,
    }
}

/// A turn error as the text an event keeps.
pub(super) fn error_text(error: &Option<TurnError>) -> Option<String> {
    error
        .as_ref()
        .and_then(|error| serde_json::to_string(error).ok())
}

impl RolloutIndex {
    /// Apply one line's event (the streaming pass and a sidecar's replay alike).
    pub(super) fn apply(&mut self, event: &Event) {
        let marks = &mut self.landmarks;
        match event {
            Event::Header { at, ts } => {
                marks.header = Some(*at);
                marks.max_ms = *ts;
            }
            Event::ResponseItem(at) => marks.history.push(HistoryEntry::Line(*at)),
            Event::Compacted(at) => marks.history = vec![HistoryEntry::Line(*at)],
            Event::TokenUsage(at) => marks.last_token_usage = Some(*at),
            Event::NameSet(at) => marks.last_name_set = Some(*at),
            Event::AgentClosed(at) => marks.last_agent_closed = Some(*at),
            Event::TurnStarted {
                at,
                ordinal,
                id,
                started_at,
                ts,
                before_ms,
            } => {
                marks.last_turn_started = Some(*at);
                self.latest_start = Some(
                    self.latest_start
                        .map_or(*started_at, |l| l.max(*started_at)),
                );
                self.close_open(*before_ms);
                let index = self.turns.len() as u32;
                let id = TurnId::from(id.clone());
                self.turn_ids.insert(id.clone(), index);
                self.turns.push(IndexedTurn {
                    id,
                    ordinal: *ordinal,
                    started_at: *started_at,
                    started_ms: *ts,
                    end: None,
                    items: Vec::new(),
                });
            }
            Event::Item {
                at,
                ordinal,
                turn,
                kind,
                preview,
            } => {
                if *preview && marks.preview.is_none() {
                    marks.preview = Some(*at);
                }
                if let Some(turn) = turn.and_then(|t| self.held(t))
                    && let Some(indexed) = self.turns.get_mut(turn as usize)
                {
                    let position = self.items.len() as u32;
                    self.items.push(IndexedItem {
                        ordinal: *ordinal,
                        offset: at.offset,
                        len: at.len,
                        turn,
                        kind: *kind,
                    });
                    indexed.items.push(position);
                }
            }
            Event::TurnEnded {
                turn,
                status,
                error,
                completed_at,
                duration_ms,
            } => {
                if let Some(turn) = self.held(*turn)
                    && let Some(indexed) = self.turns.get_mut(turn as usize)
                {
                    indexed.end = Some(TurnOutcome {
                        status: status_of(*status),
                        error: error
                            .as_deref()
                            .and_then(|text| serde_json::from_str(text).ok()),
                        completed_at: *completed_at,
                        duration_ms: *duration_ms,
                    });
                }
            }
        }
    }

    /// Where the file's turn `turn` is among the turns held, when it is held (a partial index
    /// that meets a turn it does not hold gives up: [`RolloutIndex::update`]).
    fn held(&mut self, turn: u32) -> Option<u32> {
        let held = turn.checked_sub(self.base_turns);
        self.unsure |= held.is_none();
        held
    }

    /// A turn still open when the next one starts was cut by a crash: `interrupted` as of the
    /// last line before (`before_ms`), as [`super::super::read_rollout`] reports it.
    fn close_open(&mut self, before_ms: i64) {
        if let Some(turn) = self.turns.last_mut()
            && turn.end.is_none()
        {
            self.landmarks.history.push(HistoryEntry::AbortedMarker);
            turn.end = Some(TurnOutcome {
                status: TurnStatus::Interrupted,
                error: None,
                completed_at: before_ms.div_euclid(1000),
                duration_ms: Some((before_ms - turn.started_ms).max(0)),
            });
        }
    }
}
