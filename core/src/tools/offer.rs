//! What a turn offers the model, family by family: the input [`super::runtime::ToolRuntime::tool_set`]
//! builds the turn's [`super::tool::ToolSet`] from (docs/architecture.md §8.1). Each tool
//! keeps the part it needs; nothing here runs a call.

use std::sync::Arc;

use weft_protocol::DynamicToolSpec;

use super::goal_tool::GoalTools;
use crate::agents::AgentCaller;
use crate::mcp::McpPool;

/// The tool families of one turn (frozen with the turn context).
#[derive(Clone)]
pub struct ToolOffer {
    /// Plan mode (docs/protocol.md §7.25): no `apply_patch`, no escalation.
    pub plan_mode: bool,
    /// The thread is in Plan collaboration mode: `update_plan`, a checklist tool, is
    /// refused there as the reference refuses it. A read-only task (a review) offers what
    /// Plan mode offers without being in it.
    pub plan_collaboration: bool,
    /// Whether `request_user_input` is offered (a client chose a collaboration mode).
    pub user_input: bool,
    /// The thread's client-defined tools (`thread/start.dynamicTools`).
    pub dynamic_tools: Arc<Vec<DynamicToolSpec>>,
    /// The daemon's MCP servers (docs/mcp.md).
    pub mcp: Arc<McpPool>,
    /// What the goal tools may do (docs/protocol.md §7.26).
    pub goals: GoalTools,
    /// The calling agent, when the multi-agent tools are on (docs/agents.md).
    pub agents: Option<AgentCaller>,
}

impl Default for ToolOffer {
    /// The built-in tools only: no client-defined tools, no MCP server, no goals, no agents.
    fn default() -> Self {
        ToolOffer {
            plan_mode: false,
            plan_collaboration: false,
            user_input: false,
            dynamic_tools: Arc::default(),
            mcp: McpPool::empty(),
            goals: GoalTools::Off,
            agents: None,
        }
    }
}
