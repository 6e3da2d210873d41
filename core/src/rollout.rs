//! Rollouts: one append-only JSONL file per non-ephemeral thread, enough to rebuild both the
//! model history and the wire `Thread.turns[].items[]` (docs/architecture.md §10).
//!
//! # Where the files live
//!
//! `$WEFT_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<thread-id>.jsonl`, the date and
//! time being the thread's creation time in **UTC**. An archived thread's file moves to
//! `$WEFT_HOME/archived_sessions/` under the *same* relative path (`YYYY/MM/DD/…`), so archiving
//! and unarchiving are plain renames that invert each other ([`archive`], [`unarchive`]).
//! [`find_rollout`] looks a thread up by the `-<thread-id>.jsonl` suffix in both trees.
//!
//! # Format
//!
//! One JSON object per line: `{"ts": <unix ms>, "type": "<record>", "payload": {…}}` (see
//! [`RolloutLine`], [`RolloutRecord`]). The first line is always a `session_meta` header.
//! Model-facing items are stored as `response_item`s in history order; client-visible items as
//! `item_completed`s (deltas are never stored); `turn_started` carries the frozen turn context,
//! `turn_ended` the terminal state. An interrupt is recorded as the marker user message
//! ([`TURN_ABORTED_MARKER`], a `response_item`) followed by `turn_ended` with status
//! `interrupted`.
//!
//! # Writing
//!
//! [`RolloutWriter`] is created when the thread starts (the header is written at once, so a
//! fresh thread can be resumed, read or forked). `append` only queues; a background task
//! batches the lines and writes them off the hot path; `flush(fsync)` waits until everything
//! appended so far is written (and fsynced). A failed write or fsync is answered to every
//! flush it concerns and retried with the next one: the lines that did not reach the file
//! stay queued, so a flush succeeds exactly when everything appended before it is on disk. One writer per file: the writer holds an exclusive
//! advisory lock (`flock`) on the file for its whole life, so a second daemon pointed at the
//! same home gets [`RolloutError::Locked`] instead of interleaving lines.
//!
//! # Reading
//!
//! [`read_rollout`] is tolerant and linear in the file size: a torn last line (crash mid-write)
//! is skipped with a warning, other unparsable lines too (counted in
//! [`Replay::skipped_lines`]); only a missing or unparsable header is an error. A turn that was
//! started but never ended (the daemon died mid-turn) is reported as `interrupted`, and the
//! model history gets the same marker an interrupt leaves.

mod fork;
pub mod index;
pub mod lean;
pub mod pages;
mod paths;
mod reader;
mod record;
mod writer;

#[cfg(test)]
pub(crate) mod tests;

use std::path::PathBuf;
use std::sync::Arc;

pub use fork::{copy_fork, fork_lines};
pub use paths::{
    ARCHIVED_SESSIONS_DIR, FoundRollout, SESSIONS_DIR, archive, changed_day_dirs, find_rollout,
    list_rollouts, rollout_path, rollouts_in, unarchive,
};
pub use reader::{Replay, load_rollout, read_lines, read_rollout};
pub use record::{RolloutLine, RolloutRecord, SessionMeta, TurnContextRecord};
pub use writer::{BeforeFirstChange, RolloutWriter};

/// The model-visible history marker of an interrupted turn: recorded by the runtime when the
/// user interrupts (and when a busy thread is forked), and added by [`read_rollout`] for a turn
/// the daemon never finished. The runtime should use this constant.
pub const TURN_ABORTED_MARKER: &str = "<turn_aborted>\nThe user interrupted the previous turn on purpose. Commands or edits it started may have partly run, and background processes may still be running: check the current state before you repeat anything.\n</turn_aborted>";

/// Why a rollout could not be written, read or moved. `Display` is fit for logs and for the
/// `message` of an error sent to a client.
#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    /// An I/O error on this path.
    #[error("rollout {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Another writer (most likely another Weft daemon using the same home) holds the file.
    #[error(
        "rollout {} is locked by another writer (is another Weft daemon using the same home?)",
        path.display()
    )]
    Locked {
        /// The file.
        path: PathBuf,
    },
    /// The file has no parsable `session_meta` header.
    #[error("rollout {} has no valid session header: {problem}", path.display())]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: HeaderProblem,
    },
    /// A write or fsync failed. The lines not in the file yet stay queued and are retried
    /// with the next flush, which fails too until they are all written.
    #[error("rollout {} could not be written: {source}", path.display())]
    WriteFailed {
        /// The file.
        path: PathBuf,
        /// The error of the last attempt (shared by the flushes it answers).
        source: Arc<std::io::Error>,
    },
    /// The writer was closed (or its task is gone).
    #[error("rollout writer for {} is closed", path.display())]
    Closed {
        /// The file.
        path: PathBuf,
    },
    /// Ephemeral threads are never written.
    #[error("ephemeral thread {0} has no rollout")]
    Ephemeral(String),
    /// `archive`/`unarchive` of a file that is not in the expected tree.
    #[error("rollout {} is not under {}", path.display(), dir.display())]
    NotUnder {
        /// The file.
        path: PathBuf,
        /// The tree it should be in.
        dir: PathBuf,
    },
    /// The destination of a move already exists.
    #[error("rollout {} already exists", path.display())]
    AlreadyExists {
        /// The destination.
        path: PathBuf,
    },
    /// `fork_lines` through a turn that is not in the rollout.
    #[error("turn not found: {0}")]
    TurnNotFound(String),
    /// `fork_lines` through a turn that has not ended.
    #[error("turn {0} is still in progress")]
    TurnInProgress(String),
    /// A question a partial rollout index (the last turns only) cannot answer; the index cache
    /// reads the whole index and asks again, so this never reaches a client.
    #[error("the rollout index read holds only the last turns")]
    NotHeld,
}

/// What is wrong with a rollout's first line.
#[derive(Debug, thiserror::Error)]
pub enum HeaderProblem {
    /// The file has no lines.
    #[error("the file is empty")]
    Empty,
    /// The first line is a record, but not `session_meta`.
    #[error("the first record is not session_meta")]
    NotSessionMeta,
    /// The first line does not parse.
    #[error(transparent)]
    Parse(serde_json::Error),
}

impl RolloutError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> RolloutError {
        RolloutError::Io {
            path: path.into(),
            source,
        }
    }
}
