//! The multi-agent tools as the model is offered them (docs/agents.md §6): names and
//! parameters are the reference's; descriptions are Weft's own. Each tool is written in the
//! MCP tool shape (`name`, `description`, `inputSchema`) so one path serves them inline (a
//! namespace) and deferred behind `tool_search`.

use serde_json::{Value, json};

/// The v1 namespace.
pub const V1_NAMESPACE: &str = "multi_agent_v1";
/// The v2 namespace.
pub const V2_NAMESPACE: &str = "collaboration";
/// Both namespaces' description.
pub const NAMESPACE_DESCRIPTION: &str = "Tools for spawning and managing sub-agents.";

fn tool(name: &str, description: &str, schema: Value) -> Value {
    json!({ "name": name, "description": description, "inputSchema": schema })
}

fn input_items() -> Value {
    let field = |what: &str| json!({ "type": "string", "description": what });
    json!({
        "type": "array",
        "description": "Structured input parts, instead of `message`: text, images by URL or local path.",
        "items": {
            "type": "object",
            "properties": {
                "type": field("The part's kind: text, image or local_image."),
                "text": field("The text, for a text part."),
                "image_url": field("The image's URL, for an image part."),
                "path": field("The image file's path, for a local_image part."),
            },
            "additionalProperties": false,
        },
    })
}

/// v1: `spawn_agent`, `send_input`, `wait_agent`, `close_agent`, `resume_agent`.
pub fn v1_tools() -> Vec<Value> {
    let text = |what: &str| json!({ "type": "string", "description": what });
    vec![
        tool(
            "spawn_agent",
            "Start a sub-agent on a well-scoped task that can run while you keep working. It gets \
             your working directory, sandbox and approval policy, and by default your model. \
             Returns its id and a nickname. Delegate only when the user or the project's \
             instructions ask for sub-agents or parallel work; give each one a self-contained \
             task whose files do not overlap another's.",
            json!({
                "type": "object",
                "properties": {
                    "message": text("The task for the new agent, as plain text. Give either message or items."),
                    "items": input_items(),
                    "fork_context": {"type": "boolean", "description": "true: the new agent starts with a copy of this conversation; false or left out: with only its task."},
                    "model": text("A different model for the new agent. Leave it out to use yours."),
                    "reasoning_effort": text("A different reasoning effort for the new agent. Leave it out to use yours."),
                },
                "additionalProperties": false,
            }),
        ),
        tool(
            "send_input",
            "Send more input to one of your agents. A running agent gets it at its next step; an \
             idle one starts working on it. With interrupt=true its current work is stopped \
             first.",
            json!({
                "type": "object",
                "properties": {
                    "target": text("The agent's id (from spawn_agent)."),
                    "message": text("The input, as plain text. Give either message or items."),
                    "items": input_items(),
                    "interrupt": {"type": "boolean", "description": "true: stop what the agent is doing and handle this now; false or left out: queue it."},
                },
                "required": ["target"],
                "additionalProperties": false,
            }),
        ),
        tool(
            "wait_agent",
            "Wait until one of the given agents is done (completed, interrupted, failed or \
             closed) and return the status of those that are, with a completed agent's last \
             message. Returns an empty status when the timeout passes first. Each finished \
             agent is also reported to you in a notification message.",
            json!({
                "type": "object",
                "properties": {
                    "targets": {"type": "array", "items": {"type": "string"}, "description": "The ids of the agents to wait for; the first to finish ends the wait."},
                    "timeout_ms": {"type": "number", "description": "How long to wait, in milliseconds: 30000 when left out, at least 10000, at most 3600000. Long waits are better than polling."},
                },
                "required": ["targets"],
                "additionalProperties": false,
            }),
        ),
        tool(
            "close_agent",
            "Close an agent you no longer need, and every agent it started; returns its status \
             before. An agent counts toward the limit until it is closed, even when it is done.",
            json!({
                "type": "object",
                "properties": {"target": text("The agent's id (from spawn_agent).")},
                "required": ["target"],
                "additionalProperties": false,
            }),
        ),
        tool(
            "resume_agent",
            "Open a closed agent again, so it can take send_input and wait_agent calls.",
            json!({
                "type": "object",
                "properties": {"id": text("The agent's id.")},
                "required": ["id"],
                "additionalProperties": false,
            }),
        ),
    ]
}

/// v2: `spawn_agent`, `send_message`, `followup_task`, `wait_agent`, `list_agents`,
/// `interrupt_agent`.
pub fn v2_tools() -> Vec<Value> {
    let text = |what: &str| json!({ "type": "string", "description": what });
    let target = |what: &str| {
        text(&format!(
            "The agent {what}: its task name (`worker_a`), its full path (`/root/worker_a`) or its id."
        ))
    };
    let message = |properties: Value| json!({"type": "object", "properties": properties, "required": ["target", "message"], "additionalProperties": false});
    vec![
        tool(
            "spawn_agent",
            "Start a sub-agent on a task; it runs while you keep working and its final answer is              mailed to you when its turn ends. `task_name` names it under you: `worker_a` from              `/root` becomes `/root/worker_a`. By default it starts with this conversation and              your model (`fork_turns` \"all\"); with `fork_turns` \"none\" it starts with only              its task, and `model` or `reasoning_effort` may then be set. Delegate only when the              user or the project's instructions ask for sub-agents or parallel work.",
            json!({
                "type": "object",
                "properties": {
                    "task_name": text("The new agent's name: lowercase letters, digits and underscores."),
                    "message": text("The new agent's task, as plain text."),
                    "fork_turns": text("How much of this conversation the agent starts with: `all` (the default) or `none`."),
                    "model": text("A different model for the agent (only with fork_turns `none`)."),
                    "reasoning_effort": text("A different reasoning effort for the agent (only with fork_turns `none`)."),
                },
                "required": ["task_name", "message"],
                "additionalProperties": false,
            }),
        ),
        tool(
            "send_message",
            "Mail a message to an agent without starting a turn: a running agent reads it at              its next step, an idle one with its next task.",
            message(json!({"target": target("to message"), "message": text("The message.")})),
        ),
        tool(
            "followup_task",
            "Give an existing sub-agent a new task: an idle one starts a turn on it at once, a              running one reads it at its next step.",
            message(json!({"target": target("to give the task to"), "message": text("The task.")})),
        ),
        tool(
            "wait_agent",
            "Wait until mail arrives from any agent (a message or a final answer) that no              earlier wait returned on, or the timeout passes. It does not return the mail:              that reaches you as messages.",
            json!({
                "type": "object",
                "properties": {"timeout_ms": {"type": "number", "description": "How long to wait, in milliseconds: 30000 when left out, at least 10000, at most 3600000."}},
                "additionalProperties": false,
            }),
        ),
        tool(
            "list_agents",
            "List the live agents of the team and their status, optionally only those under a              path.",
            json!({
                "type": "object",
                "properties": {"path_prefix": text("Only agents at or under this path (no trailing slash), e.g. `/root/worker_a`.")},
                "additionalProperties": false,
            }),
        ),
        tool(
            "interrupt_agent",
            "Stop an agent's current turn and return its status before; it keeps its history              and can take messages and tasks again.",
            json!({
                "type": "object",
                "properties": {"target": target("to interrupt")},
                "required": ["target"],
                "additionalProperties": false,
            }),
        ),
    ]
}

/// A namespace of these tools, as a Responses API `namespace` tool.
pub fn namespace(name: &str, tools: &[Value]) -> Value {
    json!({
        "type": "namespace",
        "name": name,
        "description": NAMESPACE_DESCRIPTION,
        "tools": tools.iter().filter_map(crate::tools::mcp_tool::function_spec).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_names_and_required_parameters_are_the_references() {
        let tools = v1_tools();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "spawn_agent",
                "send_input",
                "wait_agent",
                "close_agent",
                "resume_agent"
            ]
        );
        assert_eq!(tools[1]["inputSchema"]["required"], json!(["target"]));
        assert_eq!(tools[2]["inputSchema"]["required"], json!(["targets"]));
        assert_eq!(tools[4]["inputSchema"]["required"], json!(["id"]));
        let v2: Vec<String> = v2_tools()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            v2,
            [
                "spawn_agent",
                "send_message",
                "followup_task",
                "wait_agent",
                "list_agents",
                "interrupt_agent"
            ]
        );
        let ns = namespace(V1_NAMESPACE, &tools);
        assert_eq!(ns["tools"][0]["strict"], json!(false));
        assert_eq!(ns["tools"][0]["type"], json!("function"));
    }
}
