//! Tools offered to the model. [`runtime::ToolRuntime`] is the per-thread dispatcher the turn
//! loop hands every completed tool call to.

pub mod apply_patch;
pub mod runtime;
