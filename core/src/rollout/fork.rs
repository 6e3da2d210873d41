//! What a fork copies of its source's rollout (`thread/fork`, docs/protocol.md): every record
//! but the source's header, timestamps kept, through turn `last_turn_id` inclusive when given
//! (up to the next turn's start). A turn left open at the cut (the source is busy, or died
//! mid-turn) is closed the way an interrupt closes it: the [`TURN_ABORTED_MARKER`] history
//! item, then `turn_ended` with status `interrupted`.
//!
//! [`ForkCut`] decides line by line, so the copy of a stored thread streams: [`copy_fork`]
//! reads the source one line at a time and writes the lines kept as they are, and the memory
//! it takes is one line's, whatever the source's size. [`fork_lines`] is the same cut over
//! lines already in memory (an ephemeral fork).
//!
//! [`TURN_ABORTED_MARKER`]: super::TURN_ABORTED_MARKER

use std::io::{BufRead, Write};
use std::path::Path;

use weft_protocol::{TurnId, TurnStatus};

use super::RolloutError;
use super::reader::{aborted_marker, parse_header};
use super::record::{RolloutLine, RolloutRecord};
use crate::time::now_ms;

/// The cut of a fork, fed the source's lines in order.
pub struct ForkCut<'a> {
    wanted: Option<&'a TurnId>,
    state: State,
    /// The last turn started among the lines kept, while it has not ended: (id, its start).
    open: Option<(TurnId, i64)>,
    /// The newest timestamp kept.
    last_ts: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the wanted turn started (or no turn is wanted: everything is kept).
    Before,
    /// Inside the wanted turn.
    InWanted,
    /// After the wanted turn ended, up to the next turn's start.
    After,
    /// Past the cut.
    Done,
}

impl<'a> ForkCut<'a> {
    /// A cut through `wanted` (every line when `None`).
    pub fn new(wanted: Option<&'a TurnId>) -> ForkCut<'a> {
        ForkCut {
            wanted,
            state: State::Before,
            open: None,
            last_ts: 0,
        }
    }

    /// Whether `line` is copied; `None` once the cut is passed (no later line is copied).
    pub fn keep(&mut self, line: &RolloutLine) -> Option<bool> {
        let record = &line.record;
        match (self.state, record) {
            (State::Done, _) => return None,
            (State::After, RolloutRecord::TurnStarted { .. }) => {
                self.state = State::Done;
                return None;
            }
            (State::Before, RolloutRecord::TurnStarted { turn_id, .. })
                if self.wanted == Some(turn_id) =>
            {
                self.state = State::InWanted;
            }
            (State::InWanted, RolloutRecord::TurnEnded { turn_id, .. })
                if self.wanted == Some(turn_id) =>
            {
                self.state = State::After;
            }
            _ => {}
        }
        if matches!(record, RolloutRecord::SessionMeta(_)) {
            return Some(false);
        }
        match record {
            RolloutRecord::TurnStarted { turn_id, .. } => {
                self.open = Some((turn_id.clone(), line.ts));
            }
            RolloutRecord::TurnEnded { turn_id, .. }
                if self.open.as_ref().is_some_and(|(id, _)| id == turn_id) =>
            {
                self.open = None;
            }
            _ => {}
        }
        self.last_ts = self.last_ts.max(line.ts);
        Some(true)
    }

    /// The source is over: the lines that close a turn left open, or why the cut cannot be
    /// made (the wanted turn is not there, or has not ended).
    pub fn finish(self) -> Result<Vec<RolloutLine>, RolloutError> {
        if let Some(wanted) = self.wanted {
            match self.state {
                State::Before => return Err(RolloutError::TurnNotFound(wanted.to_string())),
                State::InWanted => return Err(RolloutError::TurnInProgress(wanted.to_string())),
                State::After | State::Done => {}
            }
        }
        let Some((turn_id, started_ms)) = self.open else {
            return Ok(Vec::new());
        };
        let now = now_ms().max(self.last_ts);
        Ok(vec![
            RolloutLine {
                ts: now,
                record: RolloutRecord::ResponseItem(aborted_marker()),
            },
            RolloutLine {
                ts: now,
                record: RolloutRecord::TurnEnded {
                    turn_id,
                    status: TurnStatus::Interrupted,
                    error: None,
                    completed_at: now.div_euclid(1000),
                    duration_ms: Some((now - started_ms).max(0)),
                },
            },
        ])
    }
}

/// The lines a fork copies after its own header, from lines in memory (see the module docs).
pub fn fork_lines(
    lines: &[RolloutLine],
    last_turn_id: Option<&TurnId>,
) -> Result<Vec<RolloutLine>, RolloutError> {
    let mut cut = ForkCut::new(last_turn_id);
    let mut out = Vec::new();
    for line in lines {
        match cut.keep(line) {
            Some(true) => out.push(line.clone()),
            Some(false) => {}
            None => break,
        }
    }
    out.extend(cut.finish()?);
    Ok(out)
}

/// Stream the lines a fork copies from the rollout at `source` into `out` (see the module
/// docs): each line kept is written as it was read. The source's header must parse (else
/// [`RolloutError::BadHeader`]); other lines that do not parse are skipped, as a replay skips
/// them. Returns the lines written.
pub fn copy_fork(
    source: &Path,
    out: &mut dyn Write,
    last_turn_id: Option<&TurnId>,
) -> Result<usize, RolloutError> {
    let file = std::fs::File::open(source).map_err(|e| RolloutError::io(source, e))?;
    let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
    let mut cut = ForkCut::new(last_turn_id);
    let mut raw = Vec::new();
    let mut header_seen = false;
    let mut written = 0;
    let write = |out: &mut dyn Write, bytes: &[u8]| -> Result<(), RolloutError> {
        out.write_all(bytes)
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|e| RolloutError::io(source, e))
    };
    loop {
        raw.clear();
        let read = reader
            .read_until(b'\n', &mut raw)
            .map_err(|e| RolloutError::io(source, e))?;
        if read == 0 {
            break;
        }
        let text = raw.trim_ascii();
        if text.is_empty() {
            continue;
        }
        if !header_seen {
            parse_header(source, text)?;
            header_seen = true;
            continue;
        }
        let Ok(line) = serde_json::from_slice::<RolloutLine>(text) else {
            continue;
        };
        match cut.keep(&line) {
            Some(true) => {
                write(out, text)?;
                written += 1;
            }
            Some(false) => {}
            None => break,
        }
    }
    if !header_seen {
        parse_header(source, b"")?;
    }
    for line in cut.finish()? {
        let bytes = serde_json::to_vec(&line).map_err(|e| RolloutError::WriteFailed {
            path: source.to_path_buf(),
            source: std::sync::Arc::new(std::io::Error::from(e)),
        })?;
        write(out, &bytes)?;
        written += 1;
    }
    Ok(written)
}
