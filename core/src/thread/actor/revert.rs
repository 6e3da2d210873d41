//! `thread/revert` on a loaded thread (docs/protocol.md §7.27, docs/architecture.md §5.5): the
//! undo. Not a turn of its own (the reference's revert starts none): the actor does it between
//! tasks. The rollout is cut at the start of the turn reverted to, durably, and the thread's
//! history, turns and token totals are rebuilt from what is left, as a resume would; with
//! Weft's `restoreWorkspace`, the workspace's files are first put back from the ghost snapshot
//! taken before that turn — refused, with nothing changed, when they changed outside the agent
//! since.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use weft_protocol::{TurnId, TurnStatus};

use super::ThreadActor;
use super::context::last_environment_in;
use crate::history::History;
use crate::rollout::{RolloutError, RolloutLine, RolloutRecord};
use crate::snapshots::{Change, ChangeKind, SnapshotPhase, SnapshotRecord, Snapshotter};
use crate::thread::error::CoreError;
use crate::thread::handle::ThreadSnapshot;
use crate::turn::TurnEnd;

/// How many changed paths a refusal names.
const NAMED_PATHS: usize = 10;

/// What a scan of the rollout found for a revert.
#[derive(Debug, Default)]
pub(crate) struct RevertPoint {
    /// The byte offset of the reverted turn's start line.
    pub offset: Option<u64>,
    /// The ghost snapshots of the turns from it on, in rollout order.
    pub snapshots: Vec<SnapshotRecord>,
}

/// One streaming pass over `path` (one line in memory at a time): where turn `turn` starts,
/// and the snapshots recorded from there on.
pub(crate) fn scan(path: &Path, turn: &TurnId) -> Result<RevertPoint, RolloutError> {
    let file = std::fs::File::open(path).map_err(|e| RolloutError::io(path, e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut point = RevertPoint::default();
    let mut at = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| RolloutError::io(path, e))?;
        if read == 0 {
            break;
        }
        // A torn last line (no newline yet) is nobody's record.
        if line.last() == Some(&b'\n') {
            match serde_json::from_slice::<RolloutLine>(&line).map(|l| l.record) {
                Ok(RolloutRecord::TurnStarted { turn_id, .. })
                    if point.offset.is_none() && turn_id == *turn =>
                {
                    point.offset = Some(at);
                }
                Ok(RolloutRecord::GhostSnapshot(record)) if point.offset.is_some() => {
                    point.snapshots.push(record);
                }
                _ => {}
            }
        }
        at += read as u64;
    }
    Ok(point)
}

/// The ghost snapshots of one mutating turn.
struct TurnSnapshots {
    turn: TurnId,
    before: SnapshotRecord,
    after: Option<SnapshotRecord>,
}

/// Group `records` by turn, in order, keeping turns that took a snapshot before a change.
fn by_turn(records: Vec<SnapshotRecord>) -> Vec<TurnSnapshots> {
    let mut turns: Vec<TurnSnapshots> = Vec::new();
    for record in records {
        match record.phase {
            SnapshotPhase::Before => turns.push(TurnSnapshots {
                turn: record.turn_id.clone(),
                before: record,
                after: None,
            }),
            SnapshotPhase::After => {
                if let Some(turn) = turns.iter_mut().rev().find(|t| t.turn == record.turn_id) {
                    turn.after = Some(record);
                }
            }
        }
    }
    turns
}

/// A refusal of `restoreWorkspace`; nothing was changed.
fn refused(why: impl std::fmt::Display) -> CoreError {
    CoreError::RestoreWorkspace(format!(
        "cannot restore the workspace: {why}; nothing was reverted"
    ))
}

/// `paths` as a refusal names them: the first few, and how many more.
fn named(changes: &[Change]) -> String {
    let mut names: Vec<String> = changes
        .iter()
        .take(NAMED_PATHS)
        .map(|change| {
            let how = match change.kind {
                ChangeKind::Added => "added",
                ChangeKind::Deleted => "deleted",
                ChangeKind::Modified => "modified",
            };
            format!("{} ({how})", change.path)
        })
        .collect();
    if changes.len() > NAMED_PATHS {
        names.push(format!("and {} more", changes.len() - NAMED_PATHS));
    }
    names.join(", ")
}

/// Check that only the agent changed the workspace since the first of `turns` began, and put
/// it back as it was then. Every check runs before the first file is written.
async fn restore_workspace(
    turns: &[TurnSnapshots],
    home: &Path,
    limits: crate::config::SnapshotsConfig,
) -> Result<(), CoreError> {
    let Some(first) = turns.first() else {
        // No turn from there on changed anything through a tool.
        return Ok(());
    };
    let work_tree = PathBuf::from(&first.before.work_tree);
    if turns
        .iter()
        .any(|t| t.before.work_tree != first.before.work_tree)
    {
        return Err(refused("the turns since ran in more than one workspace"));
    }
    let snapshotter = Snapshotter::locate(&work_tree, home, limits)
        .await
        .map_err(refused)?;
    if snapshotter.workspace().git_dir != Path::new(&first.before.git_dir) {
        return Err(refused(
            "the workspace's repository is not the one snapshotted",
        ));
    }
    // Between two mutating turns, and since the last one, nothing but the agent changed it.
    let mut left: Option<&SnapshotRecord> = None;
    for turn in turns {
        if let Some(previous) = left
            && previous.tree != turn.before.tree
        {
            let changes = snapshotter
                .changes(&previous.tree, &turn.before.tree)
                .await
                .map_err(refused)?;
            return Err(refused(format!(
                "files changed outside the agent before turn {}: {}",
                turn.turn,
                named(&changes)
            )));
        }
        left = Some(turn.after.as_ref().ok_or_else(|| {
            refused(format!(
                "turn {} has no snapshot of how it left the workspace",
                turn.turn
            ))
        })?);
    }
    let current = snapshotter.current_tree().await.map_err(refused)?;
    if let Some(last) = left
        && last.tree != current
    {
        let changes = snapshotter
            .changes(&last.tree, &current)
            .await
            .map_err(refused)?;
        return Err(refused(format!(
            "files changed outside the agent since turn {}: {}",
            turns.last().map(|t| t.turn.as_str()).unwrap_or_default(),
            named(&changes)
        )));
    }
    if !snapshotter.has_tree(&first.before.tree).await {
        return Err(refused(format!(
            "the snapshot taken before turn {} is gone (pruned)",
            first.turn
        )));
    }
    snapshotter
        .restore(&current, &first.before.tree)
        .await
        .map_err(|err| {
            CoreError::RestoreWorkspace(format!(
                "restoring the workspace failed part way: {err}; the history was not reverted"
            ))
        })?;
    Ok(())
}

impl ThreadActor {
    /// `thread/revert`: the thread as it is after its history was cut before `turn` (and its
    /// workspace restored, when asked).
    pub(super) async fn revert(
        &mut self,
        turn: TurnId,
        restore: bool,
    ) -> Result<ThreadSnapshot, CoreError> {
        let Some(writer) = self.persistence.writer().cloned() else {
            return Err(CoreError::NoRollout(self.thread.id.to_string()));
        };
        let running = self.active.as_ref().is_some_and(|a| *a.turn_id() == turn);
        if !running && !self.turns.iter().any(|t| t.id == turn) {
            // Only the last turn is held: an earlier one must be in the file before anything
            // is stopped or cut. Its index says so (cached, or read back from its sidecar);
            // the scan below reads the file once, for the cut.
            self.flush_rollout(true).await?;
            let cache = self.services.history_index.clone();
            let (path, wanted) = (writer.path().to_path_buf(), turn.clone());
            let known = tokio::task::spawn_blocking(move || {
                cache.with_index(&path, |index| Ok(index.turn_position(&wanted).is_some()))
            })
            .await??;
            if !known {
                return Err(CoreError::ForkTurnNotFound(turn.to_string()));
            }
        }
        if let Some(active) = &self.active {
            if restore {
                // The files are still changing: the user interrupts first.
                return Err(CoreError::RestoreWorkspace(format!(
                    "cannot restore the workspace while turn {} is in progress; interrupt it first",
                    active.turn_id()
                )));
            }
            // As the reference's revert, which shuts the thread down first: the running turn
            // ends interrupted.
            self.abort_active(TurnEnd::Interrupted).await;
        }
        if restore && !self.services.config.snapshots.enabled {
            return Err(refused(
                "ghost snapshots are off (`[snapshots] enabled = false`)",
            ));
        }
        self.flush_rollout(true).await?;
        let path = writer.path().to_path_buf();
        let scan_path = path.clone();
        let scan_turn = turn.clone();
        let point = tokio::task::spawn_blocking(move || scan(&scan_path, &scan_turn)).await??;
        let Some(offset) = point.offset else {
            return Err(CoreError::ForkTurnNotFound(turn.to_string()));
        };
        if restore {
            let config = &self.services.config;
            restore_workspace(&by_turn(point.snapshots), &config.home, config.snapshots).await?;
        }
        writer.truncate(offset).await?;
        self.reload_from(&path).await?;
        let mut snapshot = self.snapshot();
        snapshot.thread.turns = Vec::new();
        Ok(snapshot)
    }

    /// Rebuild the history, turns and totals from the (cut) rollout, as a resume does.
    async fn reload_from(&mut self, path: &Path) -> Result<(), CoreError> {
        let owned = path.to_path_buf();
        let replay =
            tokio::task::spawn_blocking(move || crate::rollout::lean::read_rollout_lean(&owned))
                .await??;
        let mut turns = replay.turns;
        // Nothing runs now: a turn left open in the file was cut short.
        for turn in &mut turns {
            if turn.status == TurnStatus::InProgress {
                turn.status = TurnStatus::Interrupted;
            }
        }
        self.instructions_recorded = !replay.history.is_empty();
        self.last_environment = last_environment_in(&replay.history, &self.settings);
        *self.history.lock() =
            History::restored(replay.history, self.persistence.writer().cloned());
        *self.token_usage.lock() = replay.token_usage.unwrap_or_default();
        self.turns = turns;
        self.thread.preview = replay.preview;
        self.persistence
            .index(self.services.state.as_ref(), &self.thread)
            .await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(turn: &str, phase: SnapshotPhase, tree: &str) -> SnapshotRecord {
        SnapshotRecord {
            turn_id: TurnId::from(turn),
            phase,
            commit: format!("c{tree}"),
            tree: tree.into(),
            git_dir: "/g".into(),
            work_tree: "/w".into(),
        }
    }

    #[test]
    fn snapshots_group_by_turn_in_order() {
        let turns = by_turn(vec![
            record("a", SnapshotPhase::Before, "1"),
            record("a", SnapshotPhase::After, "2"),
            record("b", SnapshotPhase::Before, "2"),
        ]);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].after.as_ref().map(|r| r.tree.as_str()), Some("2"));
        assert!(turns[1].after.is_none());
    }

    #[test]
    fn a_scan_finds_the_turn_start_and_the_snapshots_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let lines = [
            RolloutLine::now(RolloutRecord::GhostSnapshot(record(
                "z",
                SnapshotPhase::Before,
                "0",
            ))),
            RolloutLine::now(RolloutRecord::ThreadNameSet { name: "n".into() }),
        ];
        let mut text = String::new();
        for line in &lines {
            text.push_str(&serde_json::to_string(line).unwrap());
            text.push('\n');
        }
        std::fs::write(&path, &text).unwrap();
        let point = scan(&path, &TurnId::from("a")).unwrap();
        assert_eq!(point.offset, None);
        // A snapshot before the turn's start is not the turn's.
        assert!(point.snapshots.is_empty());
    }

    #[test]
    fn a_refusal_names_a_few_paths() {
        let changes: Vec<Change> = (0..12)
            .map(|i| Change {
                kind: ChangeKind::Modified,
                path: format!("f{i}"),
            })
            .collect();
        let text = named(&changes);
        assert!(text.starts_with("f0 (modified), f1 (modified)"));
        assert!(text.ends_with("and 2 more"));
    }
}
