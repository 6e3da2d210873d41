//! Issue 27, the task kinds beside the regular turn and the compaction (docs/architecture.md
//! §5.5), end to end against the scripted mock model.

mod guardian;
mod revert;
mod review;
mod shell;
mod snapshots;
