//! Tools offered to the model (docs/architecture.md §8). [`tool`] is the [`tool::Tool`] trait
//! every tool implements and the per-turn [`tool::ToolSet`]; [`runtime::ToolRuntime`] is
//! what a thread's tools keep across turns and where a turn's set is put together from its
//! [`offer::ToolOffer`]; [`context`] holds what every call takes (the call, the turn it runs
//! in). The tools: `exec_tool` (`exec_command`, `write_stdin`), `patch_tool` (`apply_patch`),
//! `plan_tool` (`update_plan`), `user_input_tool` (`request_user_input`); [`dynamic_tool`]
//! serves the client-defined tools of `thread/start.dynamicTools`; [`mcp_tool`] the MCP
//! servers' tools; [`goal_tool`] is `get_goal`, `create_goal` and `update_goal`
//! (docs/protocol.md §7.26); [`agent_tool`] the multi-agent tools (docs/agents.md).
//! [`approval`] decides when to ask the user, [`command_actions`] reads shell scripts for
//! display and for the `untrusted` policy.

pub mod agent_tool;
pub mod apply_patch;
pub mod approval;
pub mod command_actions;
pub mod context;
pub mod dynamic_tool;
pub(crate) mod exec_tool;
pub mod goal_tool;
pub mod mcp_tool;
pub mod offer;
mod patch_tool;
mod plan_tool;
pub mod runtime;
pub mod shared_specs;
mod terminals;
pub mod tool;
pub mod tool_search;
mod user_input_tool;

pub use exec_tool::{COMMAND_REJECTED, PLAN_MODE_NO_ESCALATION};
pub use patch_tool::{PATCH_REJECTED, PLAN_MODE_NO_PATCH};
pub use plan_tool::UPDATE_PLAN_TOOL;
pub use terminals::BackgroundTerminal;
pub use user_input_tool::REQUEST_USER_INPUT_TOOL;

#[cfg(test)]
mod tests;
