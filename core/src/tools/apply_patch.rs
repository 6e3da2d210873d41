//! The `apply_patch` engine (docs/architecture.md §8.3), pure of processes, approvals and events:
//!
//! * [`parse_patch`] — the patch format, shared by the function variant (`{"input": …}`,
//!   see [`patch_from_function_arguments`]) and the freeform variant (raw text);
//! * [`plan_patch`] — verify every chunk against the files (fuzzy line matching, see
//!   [`seek_sequence`]), check every written path with the caller's `can_write`, and compute
//!   every new file content and diff — writing nothing;
//! * [`apply_plan`] — write a verified plan;
//! * [`PatchFiles`] — how both read and write: [`AmbientFiles`] by path, [`SandboxFiles`]
//!   beneath the sandbox's writable roots through a directory handle, following no symlink
//!   (`plan_patch_with` / `apply_plan_with`);
//! * [`TurnDiffTracker`] — the turn's aggregate git-style diff for `turn/diff/updated`;
//! * [`function_tool_spec`] / [`freeform_tool_spec`] — the tool definitions.
//!
//! Texts for the model: [`PatchPlan::success_text`] / [`ApplyOutcome::success_text`] on
//! success, [`PatchError::model_text`] on failure.
//!
//! Diffs come from a small Myers implementation in `diff.rs` (no extra dependency). `plan.rs`
//! plans and applies; `contents.rs` computes one file's new text, `paths.rs` resolves and
//! checks paths, `files.rs` reads and writes them, `error.rs` says what went wrong.

mod contents;
mod diff;
mod error;
mod files;
mod parser;
mod paths;
mod plan;
mod seek;
mod spec;
mod tracker;

#[cfg(test)]
mod tests;

pub use diff::{git_blob_oid, git_file_diff, unified_hunks};
pub use error::PatchError;
pub use files::{AmbientFiles, PatchFiles, SandboxFiles};
pub use parser::{Chunk, FileOp, ParseError, ParsedPatch, parse_patch};
pub use paths::path_is_writable;
pub use plan::{
    ApplyOutcome, ChangeKind, FileChange, PatchPlan, apply_plan, apply_plan_with, plan_patch,
    plan_patch_with,
};
pub use seek::seek_sequence;
pub use spec::{
    ApplyPatchArgs, FREEFORM_DESCRIPTION, FUNCTION_DESCRIPTION, LARK_GRAMMAR, TOOL_NAME,
    freeform_tool_spec, function_tool_spec, patch_from_function_arguments,
};
pub use tracker::TurnDiffTracker;
