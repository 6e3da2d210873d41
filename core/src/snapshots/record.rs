//! How a ghost snapshot is recorded in the rollout: which turn it belongs to, whether it was
//! taken before the turn's first change or at its end, and where it lives.

use serde::{Deserialize, Serialize};
use weft_protocol::TurnId;

/// When, in its turn, a snapshot was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotPhase {
    /// Before the turn's first mutating tool call: what `restoreWorkspace` goes back to.
    Before,
    /// When the turn ended: the workspace as the agent left it.
    After,
}

/// The rollout's record of one ghost snapshot (`"type": "ghost_snapshot"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotRecord {
    /// The turn.
    pub turn_id: TurnId,
    /// Before its first change, or at its end.
    pub phase: SnapshotPhase,
    /// The snapshot commit.
    pub commit: String,
    /// Its tree.
    pub tree: String,
    /// The repository it is in.
    pub git_dir: String,
    /// The work tree it is of.
    pub work_tree: String,
}
