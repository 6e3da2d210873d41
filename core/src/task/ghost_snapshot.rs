//! The ghost snapshot task (docs/architecture.md §5.5): the snapshot of the workspace that a
//! turn takes before its first environment-mutating tool call, and again when it ends, so
//! `thread/revert {restoreWorkspace: true}` can put the files back and can tell whether
//! anyone else changed them since.
//!
//! It runs inside the turn that owns it, not as a turn of its own (clients see only the
//! regular turn: it is `TaskKind::Regular`). Its **gate** is what mutating calls pass
//! (`ToolSet::handle`): the first one starts the snapshot, every mutating call waits until it
//! is taken, read-only calls never wait. A snapshot that fails or runs out of time is logged
//! and warned about (`warning`), and the turn goes on without one (a revert of that turn then
//! cannot restore the files).
//! None is made for an ephemeral thread (nothing to revert), a read-only turn (nothing can
//! change) or with `[snapshots] enabled = false`.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::OnceCell;
use tracing::Instrument;
use weft_protocol::{SandboxPolicy, ThreadId, TurnId};

use super::TaskKind;
use crate::config::{Config, SnapshotsConfig};
use crate::events::{SharedSink, ThreadEvent};
use crate::rollout::{RolloutRecord, RolloutWriter};
use crate::snapshots::{REF_PREFIX, SnapshotPhase, SnapshotRecord, Snapshotter};

/// The ghost snapshot of one turn, and its gate.
pub struct GhostSnapshotTask {
    thread_id: ThreadId,
    turn_id: TurnId,
    cwd: PathBuf,
    home: PathBuf,
    limits: SnapshotsConfig,
    rollout: RolloutWriter,
    /// Where a skipped snapshot is reported (`warning`).
    sink: SharedSink,
    /// Passed once the snapshot before the first change is taken (or given up): the
    /// workspace's snapshotter when it was taken.
    before: OnceCell<Option<Arc<Snapshotter>>>,
    /// Passed once the snapshot at the turn's end is taken (or given up).
    after: OnceCell<()>,
}

impl GhostSnapshotTask {
    /// The ghost snapshot of a turn that runs in `cwd` under `sandbox`, recorded in
    /// `rollout`, reporting to `sink`; `None` where none is taken (see the module docs).
    pub fn for_turn(
        config: &Config,
        sink: &SharedSink,
        thread_id: &ThreadId,
        turn_id: &TurnId,
        cwd: &std::path::Path,
        sandbox: &SandboxPolicy,
        rollout: Option<&RolloutWriter>,
    ) -> Option<Arc<GhostSnapshotTask>> {
        let rollout = rollout?.clone();
        if !config.snapshots.enabled || matches!(sandbox, SandboxPolicy::ReadOnly { .. }) {
            return None;
        }
        Some(Arc::new(GhostSnapshotTask {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            cwd: cwd.to_path_buf(),
            home: config.home.clone(),
            limits: config.snapshots,
            rollout,
            sink: sink.clone(),
            before: OnceCell::new(),
            after: OnceCell::new(),
        }))
    }

    /// As the clients see it: part of the regular turn.
    pub fn kind(&self) -> TaskKind {
        TaskKind::Regular
    }

    /// The name of its span.
    pub fn span_name(&self) -> &'static str {
        "ghost_snapshot"
    }

    /// The gate: the first mutating call takes the snapshot, the others wait until it is
    /// taken (or given up).
    pub async fn gate(&self) {
        self.before
            .get_or_init(|| {
                let span = tracing::info_span!("task", task = self.span_name());
                async {
                    let snapshotter =
                        match Snapshotter::locate(&self.cwd, &self.home, self.limits).await {
                            Ok(snapshotter) => Arc::new(snapshotter),
                            Err(err) => {
                                self.skipped(&err).await;
                                return None;
                            }
                        };
                    self.take(&snapshotter, SnapshotPhase::Before)
                        .await
                        .then_some(snapshotter)
                }
                .instrument(span)
            })
            .await;
    }

    /// Whether the turn took its snapshot before a change (so one is owed at its end).
    pub fn taken(&self) -> bool {
        self.before.get().is_some_and(Option::is_some)
    }

    /// At the turn's end (completed, failed or stopped): the snapshot of the workspace as the
    /// agent left it, if the turn took one before its first change. Once per turn.
    pub async fn finish(&self) {
        let Some(Some(snapshotter)) = self.before.get() else {
            return;
        };
        self.after
            .get_or_init(|| async {
                self.take(snapshotter, SnapshotPhase::After).await;
            })
            .await;
    }

    /// The turn goes on without a snapshot: logged, and the clients are warned that a revert
    /// of this turn cannot restore its files.
    async fn skipped(&self, err: &crate::snapshots::SnapshotError) {
        tracing::warn!(%err, "no ghost snapshot for this turn");
        let message = format!(
            "No snapshot of the workspace was taken before this turn's changes ({err}); \
             thread/revert cannot restore its files."
        );
        self.sink
            .emit(
                &self.thread_id,
                ThreadEvent::Warning {
                    turn_id: Some(self.turn_id.clone()),
                    message,
                },
            )
            .await;
    }

    /// Take one snapshot, record it and prune the old ones; whether it was taken.
    async fn take(&self, snapshotter: &Snapshotter, phase: SnapshotPhase) -> bool {
        let name = match phase {
            SnapshotPhase::Before => "before",
            SnapshotPhase::After => "after",
        };
        let refname = format!("{REF_PREFIX}{}/{}/{name}", self.thread_id, self.turn_id);
        let message = format!(
            "weft ghost snapshot: thread {} turn {} ({name})",
            self.thread_id, self.turn_id
        );
        let snapshot = match snapshotter.take(&refname, &message).await {
            Ok(snapshot) => snapshot,
            Err(err) => {
                if phase == SnapshotPhase::Before {
                    self.skipped(&err).await;
                } else {
                    tracing::warn!(%err, phase = name, "ghost snapshot not taken");
                }
                return false;
            }
        };
        let workspace = snapshotter.workspace();
        self.rollout
            .append(RolloutRecord::GhostSnapshot(SnapshotRecord {
                turn_id: self.turn_id.clone(),
                phase,
                commit: snapshot.commit,
                tree: snapshot.tree,
                git_dir: workspace.git_dir.display().to_string(),
                work_tree: workspace.work_tree.display().to_string(),
            }));
        if let Err(err) = snapshotter.prune(crate::time::now_secs()).await {
            tracing::warn!(%err, "old ghost snapshots not pruned");
        }
        true
    }
}
