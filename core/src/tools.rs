//! Tools offered to the model. [`context`] holds what every tool takes (the call, the turn it
//! runs in). [`runtime::ToolRuntime`] is the per-thread dispatcher the turn
//! loop hands every completed tool call to; `exec_tool`, `patch_tool` and `plan_tool` are the
//! tools (with `user_input_tool`, `request_user_input`), [`approval`] decides when to ask the
//! user, [`command_actions`] reads shell scripts for display and for the `untrusted` policy;
//! [`dynamic_tool`] serves the client-defined tools of `thread/start.dynamicTools`;
//! [`goal_tool`] is `get_goal`, `create_goal` and `update_goal` (docs/protocol.md §7.26);
//! [`agent_tool`] the multi-agent tools (docs/agents.md).

pub mod agent_tool;
pub mod apply_patch;
pub mod approval;
pub mod command_actions;
pub mod context;
pub mod dynamic_tool;
mod exec_tool;
pub mod goal_tool;
pub mod mcp_tool;
mod patch_tool;
mod plan_tool;
pub mod runtime;
mod terminals;
pub mod tool_search;
mod user_input_tool;

pub use exec_tool::COMMAND_REJECTED;
pub use patch_tool::PATCH_REJECTED;
pub use terminals::BackgroundTerminal;
pub use user_input_tool::REQUEST_USER_INPUT_TOOL;

#[cfg(test)]
mod tests;
