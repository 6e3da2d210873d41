//! An index of where a rollout's turns and client-visible items are, so history pages are
//! served by seeking to the lines they need instead of reading the whole file
//! (docs/protocol.md §7.24).
//!
//! # An index built by streaming, kept on disk
//!
//! One pass over the file, one line in memory at a time, records per turn its line ordinal,
//! start, end and item list, and per item its line ordinal, byte offset, length and kind
//! (user message, agent message, other): a few dozen bytes per item, however big the items
//! are. A page then parses only its own lines. The file is append-only, so the index is
//! extended from where it stopped ([`RolloutIndex::update`]) rather than rebuilt; a file that
//! shrank or was replaced is indexed again. [`IndexCache`] keeps the indexes of the most
//! recently paged rollouts, and the index of a long rollout on disk ([`sidecar`]): the pass
//! turns each line into an [`Event`] and applies it, the sidecar keeps the events, and a
//! later daemon replays them and streams only the lines appended since
//! (docs/architecture.md §10.3). The state DB is not the place: it would have to follow every
//! append of every thread, and a crash could leave it ahead of the file; the sidecar is a cache
//! checked against the file, and rebuilt from it when it does not match.
//!
//! # Ordinals
//!
//! A line's ordinal is its 0-based position among the file's newline-terminated lines (the
//! header is 0). A torn last line (no newline yet) is left for a later update; once the
//! writer completes it with a newline (docs/architecture.md §10) it is an unparsable line that
//! keeps its ordinal and is skipped.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use weft_protocol::{ThreadItem, ThreadItemDetails, TurnError, TurnId, TurnStatus, UserInput};

use super::RolloutError;

mod cache;
mod event;
mod feed;
mod held;
mod sidecar;
mod tail;
#[cfg(test)]
mod tests;

pub use cache::{IndexCache, SIDECAR_MIN_BYTES};
pub use feed::{IndexFeed, Tee};

/// The directory of `$WEFT_HOME` that holds the rollouts' on-disk indexes.
pub const ROLLOUT_INDEX_DIR: &str = "rollout-index";
use super::reader::parse_header;
use super::record::{RolloutLine, RolloutRecord};
use event::Event;

/// What an indexed item is, as far as a turn summary cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ItemKind {
    /// A `userMessage`.
    UserMessage,
    /// An `agentMessage`.
    AgentMessage,
    /// Anything else.
    Other,
}

/// Where one completed item is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedItem {
    /// The line ordinal of its `item_completed` record.
    pub ordinal: u64,
    offset: u64,
    len: u32,
    /// Index of its turn in [`RolloutIndex::turns`].
    pub turn: u32,
    /// Its kind.
    pub kind: ItemKind,
}

/// How a turn ended, as the index records it (the running turn's own ending is `turn::TurnEnd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// `completed`, `interrupted` or `failed`.
    pub status: TurnStatus,
    /// Set when failed.
    pub error: Option<TurnError>,
    /// Unix seconds.
    pub completed_at: i64,
    /// Wall-clock duration.
    pub duration_ms: Option<i64>,
}

/// One turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedTurn {
    /// Turn id.
    pub id: TurnId,
    /// The line ordinal of its `turn_started` record.
    pub ordinal: u64,
    /// Unix seconds.
    pub started_at: i64,
    /// Time of the `turn_started` line (ms).
    pub started_ms: i64,
    /// How it ended, when it did (a turn cut by a later turn's start is `interrupted`).
    pub end: Option<TurnOutcome>,
    /// Its items, indexes into [`RolloutIndex::items`], in completion order.
    pub items: Vec<u32>,
}

/// The positions of a rollout's turns and items.
#[derive(Debug)]
pub struct RolloutIndex {
    path: PathBuf,
    /// `(dev, ino)` of the file indexed.
    identity: (u64, u64),
    /// Bytes indexed (through the last newline).
    indexed_bytes: u64,
    next_ordinal: u64,
    /// Time of the latest line (ms).
    last_ms: i64,
    turns: Vec<IndexedTurn>,
    items: Vec<IndexedItem>,
    turn_ids: HashMap<TurnId, u32>,
    /// Lines that did not parse (a completed torn line included).
    skipped_lines: usize,
    /// Where a resume finds what it needs besides the turns ([`Landmarks`]).
    landmarks: Landmarks,
    /// The events applied since the sidecar was last written, while one is kept
    /// ([`sidecar`]).
    journal: Option<Vec<Event>>,
    /// The file shrank or was replaced since the sidecar was written: it is written anew.
    restarted: bool,
    /// Bytes of the rollout this index has read line by line (not counting pages' reads).
    streamed: u64,
    /// Turns and items before the ones held: an index read back from its [`tail`] holds the
    /// last turns only (see [`held`]); 0 and 0 for an index of the whole file.
    base_turns: u32,
    base_items: u32,
    /// The latest `started_at` of any turn (turns held or not).
    latest_start: Option<i64>,
    /// A line named a turn this partial index does not hold: it cannot go on, the whole index
    /// is read instead.
    unsure: bool,
}

/// Why a line adds no event.
enum NoEvent {
    /// Its payload does not parse as its type says: skipped and counted.
    Skip,
    /// It names a turn a partial index does not hold.
    NotHeld,
}

/// A line, by position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineAt {
    offset: u64,
    len: u32,
}

impl LineAt {
    /// The line's length in bytes (its newline included).
    pub fn bytes(self) -> usize {
        self.len as usize
    }
}

/// One entry of the model history from the last compaction on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HistoryEntry {
    /// A `compacted` line (its replacement history) or a `response_item` line.
    Line(LineAt),
    /// The interrupted-turn marker of a turn the daemon never finished.
    AbortedMarker,
}

/// The lines a resume reads besides the turns, so it never parses the rest: the header, the
/// model history since the last compaction, and the last of each setting record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Landmarks {
    /// The header.
    pub header: Option<LineAt>,
    /// The model history from the last `compacted` line on, in order.
    pub history: Vec<HistoryEntry>,
    /// The last `turn_started` (its context is the thread's last settings).
    pub last_turn_started: Option<LineAt>,
    /// The last `token_usage`, `thread_name_set` and `agent_closed`.
    pub last_token_usage: Option<LineAt>,
    /// See [`Landmarks::last_token_usage`].
    pub last_name_set: Option<LineAt>,
    /// See [`Landmarks::last_token_usage`].
    pub last_agent_closed: Option<LineAt>,
    /// The first user message with text (the thread's preview), whatever turn it is in.
    pub preview: Option<LineAt>,
    /// Newest line time (ms).
    pub max_ms: i64,
}

/// The fields of a line the index needs; the payload stays unparsed.
#[derive(Deserialize)]
struct Peek<'a> {
    ts: i64,
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow)]
    payload: &'a RawValue,
}

#[derive(Deserialize)]
struct StartedPeek {
    turn_id: TurnId,
    started_at: i64,
}

#[derive(Deserialize)]
struct ItemPeek {
    turn_id: TurnId,
    item: ItemTypePeek,
}

#[derive(Deserialize)]
struct ItemTypePeek {
    #[serde(rename = "type")]
    kind: String,
}

/// The text of a user message's first text part, when the line is one.
pub(super) fn preview_of(line: &[u8]) -> Option<String> {
    match serde_json::from_slice::<RolloutLine>(line).ok()?.record {
        RolloutRecord::ItemCompleted { item, .. } => match item.details {
            ThreadItemDetails::UserMessage(message) => {
                message.content.into_iter().find_map(|part| match part {
                    UserInput::Text { text, .. } => Some(text),
                    _ => None,
                })
            }
            _ => None,
        },
        _ => None,
    }
}

fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

impl RolloutIndex {
    /// Index a rollout (blocking I/O). The first line must be a `session_meta` header.
    pub fn build(path: &Path) -> Result<RolloutIndex, RolloutError> {
        let mut index = RolloutIndex::empty(path.to_path_buf(), (0, 0));
        index.update()?;
        Ok(index)
    }

    /// An index of nothing yet, of the file `identity` names at `path`.
    fn empty(path: PathBuf, identity: (u64, u64)) -> RolloutIndex {
        RolloutIndex {
            path,
            identity,
            indexed_bytes: 0,
            next_ordinal: 0,
            last_ms: 0,
            turns: Vec::new(),
            items: Vec::new(),
            turn_ids: HashMap::new(),
            skipped_lines: 0,
            landmarks: Landmarks::default(),
            journal: None,
            restarted: false,
            streamed: 0,
            base_turns: 0,
            base_items: 0,
            latest_start: None,
            unsure: false,
        }
    }

    /// Index what was appended since the last update; index the file again when it shrank or
    /// is another file now.
    pub fn update(&mut self) -> Result<(), RolloutError> {
        let mut file = File::open(&self.path).map_err(|e| RolloutError::io(&self.path, e))?;
        let meta = file
            .metadata()
            .map_err(|e| RolloutError::io(&self.path, e))?;
        if identity(&meta) != self.identity || meta.len() < self.indexed_bytes {
            let journal = self.journal.is_some().then(Vec::new);
            let restarted = self.restarted || self.indexed_bytes > 0;
            let streamed = self.streamed;
            *self = RolloutIndex::empty(std::mem::take(&mut self.path), identity(&meta));
            self.journal = journal;
            self.restarted = restarted;
            self.streamed = streamed;
        }
        if meta.len() == self.indexed_bytes {
            return Ok(());
        }
        file.seek(SeekFrom::Start(self.indexed_bytes))
            .map_err(|e| RolloutError::io(&self.path, e))?;
        let mut reader = BufReader::with_capacity(64 << 10, file);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| RolloutError::io(&self.path, e))?;
            if read == 0 || line.last() != Some(&b'\n') {
                // End of file, or a torn last line: left for a later update.
                break;
            }
            self.take_line(&line)?;
            self.streamed += read as u64;
            if self.unsure {
                // The cache reads the whole index instead (`IndexCache`).
                break;
            }
        }
        Ok(())
    }

    /// Index the next line of the file (newline included): the header when it is the first.
    fn take_line(&mut self, line: &[u8]) -> Result<(), RolloutError> {
        let offset = self.indexed_bytes;
        let ordinal = self.next_ordinal;
        if ordinal == 0 {
            let header = parse_header(&self.path, line)?;
            let at = LineAt {
                offset,
                len: line.len() as u32,
            };
            self.record(Event::Header { at, ts: header.ts });
        } else {
            self.push_line(ordinal, offset, line);
        }
        self.indexed_bytes += line.len() as u64;
        self.next_ordinal += 1;
        Ok(())
    }

    fn push_line(&mut self, ordinal: u64, offset: u64, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let Ok(peek) = serde_json::from_slice::<Peek>(line) else {
            self.skipped_lines += 1;
            return;
        };
        match self.event_of(ordinal, offset, line, &peek) {
            Ok(Some(event)) => self.record(event),
            Ok(None) => {}
            Err(NoEvent::Skip) => self.skipped_lines += 1,
            Err(NoEvent::NotHeld) => self.unsure = true,
        }
        self.last_ms = peek.ts;
        self.landmarks.max_ms = self.landmarks.max_ms.max(peek.ts);
    }

    /// Apply `event`, and keep it for the sidecar when one is being written.
    fn record(&mut self, event: Event) {
        self.apply(&event);
        if let Some(journal) = &mut self.journal {
            journal.push(event);
        }
    }

    /// What a parsed line adds to the index (`None`: nothing), or why nothing ([`NoEvent`]).
    /// An event names turns by their position among all the file's turns.
    fn event_of(
        &self,
        ordinal: u64,
        offset: u64,
        line: &[u8],
        peek: &Peek,
    ) -> Result<Option<Event>, NoEvent> {
        use NoEvent::Skip;
        // A turn's position in the file, when the index knows it; a turn it does not know
        // may be one a partial index does not hold.
        let position = |id: &TurnId| match self.turn_ids.get(id) {
            Some(&held) => Ok(Some(held + self.base_turns)),
            None if self.is_partial() => Err(NoEvent::NotHeld),
            None => Ok(None),
        };
        let payload = peek.payload.get();
        let at = LineAt {
            offset,
            len: line.len() as u32,
        };
        Ok(Some(match peek.kind.as_str() {
            "response_item" => Event::ResponseItem(at),
            "compacted" => Event::Compacted(at),
            "token_usage" => Event::TokenUsage(at),
            "thread_name_set" => Event::NameSet(at),
            "agent_closed" => Event::AgentClosed(at),
            "turn_started" => {
                let started = serde_json::from_str::<StartedPeek>(payload).map_err(|_| Skip)?;
                Event::TurnStarted {
                    at,
                    ordinal,
                    id: started.turn_id.to_string(),
                    started_at: started.started_at,
                    ts: peek.ts,
                    before_ms: self.last_ms,
                }
            }
            "item_completed" => {
                let item = serde_json::from_str::<ItemPeek>(payload).map_err(|_| Skip)?;
                let preview = self.landmarks.preview.is_none()
                    && item.item.kind == "userMessage"
                    && preview_of(line).is_some();
                let kind = match item.item.kind.as_str() {
                    "userMessage" => ItemKind::UserMessage,
                    "agentMessage" => ItemKind::AgentMessage,
                    _ => ItemKind::Other,
                };
                Event::Item {
                    at,
                    ordinal,
                    turn: position(&item.turn_id)?,
                    kind,
                    preview,
                }
            }
            // One line a turn: read as the record it is.
            "turn_ended" => match serde_json::from_slice::<RolloutLine>(line).map(|l| l.record) {
                Ok(RolloutRecord::TurnEnded {
                    turn_id,
                    status,
                    error,
                    completed_at,
                    duration_ms,
                }) => match position(&turn_id)? {
                    Some(turn) => Event::TurnEnded {
                        turn,
                        status: event::status_code(status),
                        error: event::error_text(&error),
                        completed_at,
                        duration_ms,
                    },
                    None => return Ok(None),
                },
                _ => return Err(Skip),
            },
            _ => return Ok(None),
        }))
    }

    /// The turns, in start order.
    pub fn turns(&self) -> &[IndexedTurn] {
        &self.turns
    }

    /// The items, in completion order.
    pub fn items(&self) -> &[IndexedItem] {
        &self.items
    }

    /// Where a turn is in [`RolloutIndex::turns`] (`None` also for a turn a partial index
    /// does not hold: [`RolloutIndex::find_turn`] tells the two apart).
    pub fn turn_position(&self, id: &TurnId) -> Option<usize> {
        self.turn_ids.get(id).map(|&i| i as usize)
    }

    /// Time of the latest line (ms).
    pub fn last_ms(&self) -> i64 {
        self.last_ms
    }

    /// Where a resume finds the header, the model history and the last settings.
    pub fn landmarks(&self) -> &Landmarks {
        &self.landmarks
    }

    /// The file indexed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read one whole line back and parse it: the outer error is the file's, the inner one
    /// the line's.
    pub fn parse_line(
        &self,
        file: &mut File,
        at: LineAt,
    ) -> Result<Result<RolloutLine, serde_json::Error>, RolloutError> {
        let mut buf = vec![0; at.bytes()];
        self.read_bytes(file, at, &mut buf)?;
        Ok(serde_json::from_slice::<RolloutLine>(&buf))
    }

    /// Read one line's bytes into `buf` (as long as the line).
    pub fn read_bytes(
        &self,
        file: &mut File,
        at: LineAt,
        buf: &mut [u8],
    ) -> Result<(), RolloutError> {
        file.seek(SeekFrom::Start(at.offset))
            .and_then(|_| file.read_exact(buf))
            .map_err(|e| RolloutError::io(&self.path, e))
    }

    /// Bytes indexed (through the last newline).
    pub fn indexed_bytes(&self) -> u64 {
        self.indexed_bytes
    }

    /// Bytes of the file read line by line to build this index: all of them for an index
    /// built from the file, only the tail for one read back from its sidecar.
    pub fn streamed_bytes(&self) -> u64 {
        self.streamed
    }

    /// Lines skipped because they did not parse.
    pub fn skipped_lines(&self) -> usize {
        self.skipped_lines
    }

    /// The end of a turn as a reader sees it: its recorded end; for the last turn still open,
    /// `None` when the thread is running it (`live`), else `interrupted` as of the last line
    /// (the daemon died mid-turn).
    pub fn effective_end(&self, turn: &IndexedTurn, live: bool) -> Option<TurnOutcome> {
        if let Some(end) = &turn.end {
            return Some(end.clone());
        }
        if live {
            return None;
        }
        Some(TurnOutcome {
            status: TurnStatus::Interrupted,
            error: None,
            completed_at: self.last_ms.div_euclid(1000),
            duration_ms: Some((self.last_ms - turn.started_ms).max(0)),
        })
    }

    /// Open the file for [`RolloutIndex::read_item`].
    pub fn open(&self) -> Result<File, RolloutError> {
        File::open(&self.path).map_err(|e| RolloutError::io(&self.path, e))
    }

    /// Read one item back from its line.
    pub fn read_item(
        &self,
        file: &mut File,
        item: &IndexedItem,
    ) -> Result<ThreadItem, RolloutError> {
        let bad = |why: String| {
            RolloutError::io(
                &self.path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, why),
            )
        };
        match self.parse_line(file, item.line())? {
            Ok(RolloutLine {
                record: RolloutRecord::ItemCompleted { item, .. },
                ..
            }) => Ok(item),
            Ok(_) => Err(bad(format!("line {} is not an item", item.ordinal))),
            Err(err) => Err(bad(format!("line {}: {err}", item.ordinal))),
        }
    }
}

impl IndexedItem {
    /// Where its line is.
    pub fn line(&self) -> LineAt {
        LineAt {
            offset: self.offset,
            len: self.len,
        }
    }
}
