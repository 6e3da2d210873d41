//! A thread rebuilt from its rollout's index instead of from every line (docs/architecture.md
//! §10.3): the pass that indexes the file peeks at each line without parsing its payload, and
//! the replay then parses only the lines it needs — the header, the model history from the
//! last compaction on, the last settings records, the first user message and the last turn's
//! items. Only the last turn comes back, whole; the earlier ones stay in the file, and
//! [`complete_turns`] reads them back (their items too) when a client asks for every turn.
//!
//! Memory is the index (a few dozen bytes per line) plus the model history since the last
//! compaction, however big the file is; a thread loaded from it keeps one turn, not a summary
//! of every turn.

use std::fs::File;

use weft_protocol::{ThreadItem, ThreadTokenUsage, Turn, TurnItemsView};

use super::index::{HistoryEntry, IndexedTurn, LineAt, RolloutIndex, preview_of};
use super::reader::{Replay, aborted_marker};
use super::record::{RolloutLine, RolloutRecord};
use super::{HeaderProblem, RolloutError};

#[cfg(test)]
pub(crate) mod tests;

/// The thread of an indexed rollout, with its last turn (whole) as its only turn; a partial
/// index ([`RolloutIndex::is_partial`]) will do. Like
/// [`super::read_rollout`], a line that does not parse is skipped (and logged), and only a
/// missing or unparsable header is an error.
pub fn replay_from_index(index: &RolloutIndex) -> Result<Replay, RolloutError> {
    replay_parts(index, true)
}

/// [`replay_from_index`] for a reader of the thread (`thread/read`): no model history, and the
/// last turn as a summary ([`complete_turns`] reads its items back when they are asked for).
/// The lines parsed are the header, the last settings records and the preview, however much
/// history the thread has.
pub fn summary_from_index(index: &RolloutIndex) -> Result<Replay, RolloutError> {
    replay_parts(index, false)
}

/// The thread of an indexed rollout; with the model history and the last turn's items when
/// `whole`.
fn replay_parts(index: &RolloutIndex, whole: bool) -> Result<Replay, RolloutError> {
    let mut file = index.open()?;
    let marks = index.landmarks();
    let meta = match marks.header.map(|at| index.parse_line(&mut file, at)) {
        Some(Ok(Ok(RolloutLine {
            record: RolloutRecord::SessionMeta(meta),
            ..
        }))) => *meta,
        Some(Err(err)) => return Err(err),
        _ => {
            return Err(RolloutError::BadHeader {
                path: index.path().to_path_buf(),
                problem: HeaderProblem::NotSessionMeta,
            });
        }
    };
    // A torn last line is left out of the index until it is ended; a reader counts it.
    let torn = std::fs::metadata(index.path()).is_ok_and(|meta| meta.len() > index.indexed_bytes());
    if torn {
        tracing::warn!(path = %index.path().display(), "skipping a torn last line in a rollout");
    }
    let mut skipped = index.skipped_lines() + usize::from(torn);
    let mut record = |at: Option<LineAt>| -> Result<Option<RolloutRecord>, RolloutError> {
        let Some(at) = at else {
            return Ok(None);
        };
        match index.parse_line(&mut file, at)? {
            Ok(line) => Ok(Some(line.record)),
            Err(err) => {
                tracing::warn!(path = %index.path().display(), %err, "skipping an unparsable rollout line");
                skipped += 1;
                Ok(None)
            }
        }
    };

    let mut history = Vec::new();
    let entries = if whole { &marks.history[..] } else { &[] };
    for entry in entries {
        match entry {
            HistoryEntry::AbortedMarker => history.push(aborted_marker()),
            HistoryEntry::Line(at) => match record(Some(*at))? {
                Some(RolloutRecord::ResponseItem(item)) => history.push(item),
                Some(RolloutRecord::Compacted {
                    replacement_history,
                    ..
                }) => history = replacement_history,
                _ => {}
            },
        }
    }
    let turns = index.turns();
    if whole && turns.last().is_some_and(|turn| turn.end.is_none()) {
        // The daemon died mid-turn: the history gets the marker an interrupt leaves.
        history.push(aborted_marker());
    }
    let last_context = match record(marks.last_turn_started)? {
        Some(RolloutRecord::TurnStarted { context, .. }) => Some(context),
        _ => None,
    };
    let usage_at = marks.last_token_usage.filter(|_| whole);
    let token_usage: Option<ThreadTokenUsage> = match record(usage_at)? {
        Some(RolloutRecord::TokenUsage(usage)) => Some(usage),
        _ => None,
    };
    let name = match record(marks.last_name_set)? {
        Some(RolloutRecord::ThreadNameSet { name }) => Some(name),
        _ => None,
    };
    let agent_closed = matches!(
        record(marks.last_agent_closed)?,
        Some(RolloutRecord::AgentClosed { closed: true })
    );

    let mut out_turns: Vec<Turn> = turns
        .last()
        .map(|t| summary(index, t))
        .into_iter()
        .collect();
    if let Some(last) = out_turns.last_mut().filter(|_| whole) {
        fill(index, &mut file, last)?;
    }
    Ok(Replay {
        latest_turn_start: index.latest_start(),
        updated_at: marks.max_ms.div_euclid(1000).max(meta.created_at),
        meta,
        history,
        turns: out_turns,
        token_usage,
        name,
        agent_closed,
        preview: preview(index, &mut file)?,
        last_context,
        skipped_lines: skipped,
    })
}

/// [`replay_from_index`] of a file indexed for the purpose (blocking I/O): the lean
/// counterpart of [`super::read_rollout`].
pub fn read_rollout_lean(path: &std::path::Path) -> Result<Replay, RolloutError> {
    replay_from_index(&RolloutIndex::build(path)?)
}

/// Every finished turn of the thread, whole (`itemsView: full`): the file's turns before
/// `turns` (a thread loaded from its index keeps only its last finished turn), then `turns`,
/// each summary's items read back from the file. Nothing is put before a first turn the file
/// does not have, nor before none: a loaded thread holds no finished turn only while its first
/// one runs, and that one is not finished.
pub fn complete_turns(index: &RolloutIndex, turns: Vec<Turn>) -> Result<Vec<Turn>, RolloutError> {
    let indexed = index.turns();
    let before = turns
        .first()
        .and_then(|first| index.turn_position(&first.id))
        .unwrap_or(0);
    let mut out: Vec<Turn> = indexed[..before]
        .iter()
        .map(|turn| summary(index, turn))
        .collect();
    out.extend(turns);
    if !needs_items(&out) {
        return Ok(out);
    }
    let mut file = index.open()?;
    for turn in out
        .iter_mut()
        .filter(|t| t.items_view == TurnItemsView::NotLoaded)
    {
        fill(index, &mut file, turn)?;
    }
    Ok(out)
}

/// Whether any of `turns` is a summary whose items are still in the file.
pub fn needs_items(turns: &[Turn]) -> bool {
    turns
        .iter()
        .any(|t| t.items_view == TurnItemsView::NotLoaded)
}

fn summary(index: &RolloutIndex, turn: &IndexedTurn) -> Turn {
    let mut out = Turn::in_progress(turn.id.clone(), Some(turn.started_at));
    out.items_view = TurnItemsView::NotLoaded;
    if let Some(end) = index.effective_end(turn, false) {
        out.status = end.status;
        out.error = end.error;
        out.completed_at = Some(end.completed_at);
        out.duration_ms = end.duration_ms;
    }
    out
}

/// Read a turn's items back into it.
fn fill(index: &RolloutIndex, file: &mut File, turn: &mut Turn) -> Result<(), RolloutError> {
    let Some(position) = index.turn_position(&turn.id) else {
        return Ok(());
    };
    let items = &index.turns()[position].items;
    let mut out = Vec::with_capacity(items.len());
    for &i in items {
        if let Some(item) = item_at(index, file, i)? {
            out.push(item);
        }
    }
    turn.items = out;
    turn.items_view = TurnItemsView::Full;
    Ok(())
}

/// Item `i` of the index, `None` (logged) when its line does not parse as an item.
fn item_at(
    index: &RolloutIndex,
    file: &mut File,
    i: u32,
) -> Result<Option<ThreadItem>, RolloutError> {
    match index.parse_line(file, index.items()[i as usize].line())? {
        Ok(RolloutLine {
            record: RolloutRecord::ItemCompleted { item, .. },
            ..
        }) => Ok(Some(item)),
        Ok(_) => Ok(None),
        Err(err) => {
            tracing::warn!(path = %index.path().display(), %err, "skipping an unparsable rollout line");
            Ok(None)
        }
    }
}

/// The thread's preview: the text of the first user message that has text (`""` when none).
fn preview(index: &RolloutIndex, file: &mut File) -> Result<String, RolloutError> {
    let Some(at) = index.landmarks().preview else {
        return Ok(String::new());
    };
    let mut buf = vec![0; at.bytes()];
    index.read_bytes(file, at, &mut buf)?;
    Ok(preview_of(&buf).unwrap_or_default())
}
