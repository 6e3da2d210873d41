//! Forgetting a deleted thread's ghost snapshots (`thread/delete`, docs/protocol.md §7.36):
//! every ref under `refs/weft/snapshots/<thread id>/` goes; git collects the objects nobody
//! else refers to in its own time.

use weft_protocol::ThreadId;

use super::{REF_PREFIX, SnapshotError, Snapshotter, delete_refs};

impl Snapshotter {
    /// Delete the snapshot refs of `thread`; how many there were.
    pub async fn forget_thread(&self, thread: &ThreadId) -> Result<usize, SnapshotError> {
        let git = self.git();
        let prefix = format!("{REF_PREFIX}{thread}/");
        let out = git
            .run(&["for-each-ref", "--format=%(refname)", &prefix], None)
            .await?;
        // Ref names hold no newline (git refuses them).
        let doomed: Vec<String> = String::from_utf8_lossy(&out)
            .lines()
            .map(str::trim)
            .filter(|name| name.starts_with(&prefix))
            .map(str::to_string)
            .collect();
        delete_refs(&git, &doomed).await
    }
}
