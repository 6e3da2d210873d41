//! Tools offered to the model. [`context`] holds what every tool takes (the call, the turn it
//! runs in). [`runtime::ToolRuntime`] is the per-thread dispatcher the turn
//! loop hands every completed tool call to; `exec_tool`, `patch_tool` and `plan_tool` are the
//! tools, [`approval`] decides when to ask the user, [`command_actions`] reads shell scripts
//! for display and for the `untrusted` policy.

pub mod apply_patch;
pub mod approval;
pub mod command_actions;
pub mod context;
mod exec_tool;
mod patch_tool;
mod plan_tool;
pub mod runtime;
mod terminals;

pub use exec_tool::COMMAND_REJECTED;
pub use patch_tool::PATCH_REJECTED;
pub use terminals::BackgroundTerminal;

#[cfg(test)]
mod tests;
