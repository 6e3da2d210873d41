//! The multi-agent tools (docs/agents.md §6): v1's `multi_agent_v1` namespace and v2's
//! `collaboration`, both served on the tree's control plane ([`crate::agents`]). v1 calls show
//! to clients as `collabAgentToolCall` items, v2's as `subAgentActivity` (its `wait_agent` as
//! a `collabAgentToolCall`); the models get the reference's JSON outputs and error texts.

mod specs;
mod v1;
mod v2;

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value;
use weft_protocol::{
    CollabAgentState, CollabAgentTool, CollabAgentToolCallItem, CollabAgentToolCallStatus, ItemId,
    ThreadId, ThreadItem, UserInput,
};

pub use specs::{NAMESPACE_DESCRIPTION, V1_NAMESPACE, V2_NAMESPACE, namespace, v1_tools, v2_tools};

use super::context::{ToolCall, ToolInput, ToolTurn};
use super::tool::{Concurrency, Effects, Tool};
use super::tool_search::Deferred;
use crate::agents::AgentCaller;
use crate::config::AgentSurface;
use crate::model::ToolOutput;

/// The multi-agent tools of one turn, as one family: claims every call naming a multi-agent
/// namespace (one the turn does not offer is answered `unsupported call: …`). Parallel: a wait
/// must not hold up the thread's commands. The agents act in threads of their own, so a call
/// does not change this thread's environment itself.
pub(crate) struct AgentTools {
    /// The calling agent, when the multi-agent tools are on.
    pub caller: Option<AgentCaller>,
}

#[async_trait]
impl Tool for AgentTools {
    fn name(&self) -> &str {
        "multi-agent tools"
    }

    fn specs(&self) -> Vec<Value> {
        inline_specs(self.caller.as_ref())
    }

    fn claims(&self, call: &ToolCall) -> bool {
        is_agent_call(call)
    }

    fn effects(&self) -> Effects {
        Effects {
            mutates: false,
            concurrency: Concurrency::Parallel,
        }
    }

    async fn call(&self, call: &ToolCall, turn: &ToolTurn) -> ToolOutput {
        let text = handle(call, turn, self.caller.as_ref()).await;
        ToolOutput::Text(text.unwrap_or_else(|| format!("unsupported call: {}", call.name)))
    }
}

/// Which of the caller's tools a call names: `(namespace, tool)`, from a namespaced call or
/// (Chat Completions) the flat `<namespace>__<tool>`.
fn named(call: &ToolCall) -> Option<(&str, &str)> {
    match call.namespace.as_deref() {
        Some(namespace) if [V1_NAMESPACE, V2_NAMESPACE].contains(&namespace) => {
            Some((namespace, call.name.as_str()))
        }
        Some(_) => None,
        None => call
            .name
            .split_once(super::dynamic_tool::FLAT_SEPARATOR)
            .filter(|(namespace, _)| [V1_NAMESPACE, V2_NAMESPACE].contains(namespace)),
    }
}

/// Whether a call names a multi-agent namespace (offered or not).
pub fn is_agent_call(call: &ToolCall) -> bool {
    matches!(call.input, ToolInput::Function(_)) && named(call).is_some()
}

/// The tools a turn offers inline: the caller's namespace, unless its tools are deferred
/// behind `tool_search` or it may not spawn (past the depth limit no tool is offered).
pub fn inline_specs(caller: Option<&AgentCaller>) -> Vec<Value> {
    match offered(caller) {
        Some((V1_NAMESPACE, caller)) if !caller.tool_search => {
            vec![namespace(V1_NAMESPACE, &v1_tools())]
        }
        // v2's tools are always inline, as in the reference.
        Some((V2_NAMESPACE, _)) => vec![namespace(V2_NAMESPACE, &v2_tools())],
        _ => Vec::new(),
    }
}

/// The namespace `tool_search` searches for this turn, when the tools are deferred.
pub fn deferred(caller: Option<&AgentCaller>) -> Option<Deferred> {
    match offered(caller) {
        Some((V1_NAMESPACE, caller)) if caller.tool_search => Some(Deferred {
            namespace: V1_NAMESPACE.to_string(),
            server: V1_NAMESPACE.to_string(),
            description: NAMESPACE_DESCRIPTION.to_string(),
            tools: v1_tools(),
        }),
        _ => None,
    }
}

/// The namespace the turn may use, and its caller.
fn offered(caller: Option<&AgentCaller>) -> Option<(&'static str, &AgentCaller)> {
    let caller = caller?;
    match caller.hub.surface {
        AgentSurface::V1 if caller.can_spawn() => Some((V1_NAMESPACE, caller)),
        // Only the root of a v2 tree has the tools (its members get none, as in the
        // reference, whatever `max_depth` says).
        AgentSurface::V2 if caller.place.parent.is_none() => Some((V2_NAMESPACE, caller)),
        _ => None,
    }
}

/// Serve a call of a multi-agent tool; `None` when the call names none. A call of a
/// namespace the turn does not offer is answered as the reference does
/// (`unsupported call: <namespace><tool>`).
pub async fn handle(
    call: &ToolCall,
    turn: &ToolTurn,
    caller: Option<&AgentCaller>,
) -> Option<String> {
    let (namespace, tool) = named(call)?;
    let ToolInput::Function(arguments) = &call.input else {
        return None;
    };
    let Some((offered_namespace, caller)) = offered(caller) else {
        return Some(format!("unsupported call: {namespace}{tool}"));
    };
    if offered_namespace != namespace {
        return Some(format!("unsupported call: {namespace}{tool}"));
    }
    let args: Value = match serde_json::from_str(arguments) {
        Ok(args @ Value::Object(_)) => args,
        Ok(_) => return Some("failed to parse function arguments: expected an object".into()),
        Err(err) => return Some(format!("failed to parse function arguments: {err}")),
    };
    let call = Call {
        turn,
        caller,
        call_id: &call.call_id,
        args: &args,
    };
    Some(match (namespace, tool) {
        (V1_NAMESPACE, "spawn_agent") => v1::spawn(&call).await,
        (V1_NAMESPACE, "send_input") => v1::send_input(&call).await,
        (V1_NAMESPACE, "wait_agent") => v1::wait(&call).await,
        (V1_NAMESPACE, "close_agent") => v1::close(&call).await,
        (V1_NAMESPACE, "resume_agent") => v1::resume(&call).await,
        (V2_NAMESPACE, "spawn_agent") => v2::spawn(&call).await,
        (V2_NAMESPACE, "send_message") => v2::message(&call, false).await,
        (V2_NAMESPACE, "followup_task") => v2::message(&call, true).await,
        (V2_NAMESPACE, "wait_agent") => v2::wait(&call).await,
        (V2_NAMESPACE, "list_agents") => v2::list(&call).await,
        (V2_NAMESPACE, "interrupt_agent") => v2::interrupt(&call).await,
        _ => format!("unsupported call: {namespace}{tool}"),
    })
}

/// One call: its turn, its caller and its arguments.
pub(crate) struct Call<'a> {
    pub turn: &'a ToolTurn,
    pub caller: &'a AgentCaller,
    pub call_id: &'a str,
    pub args: &'a Value,
}

impl Call<'_> {
    /// A string argument.
    pub fn text(&self, key: &str) -> Option<String> {
        self.args
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// A boolean argument (false when absent).
    pub fn flag(&self, key: &str) -> bool {
        self.args.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    /// The `collabAgentToolCall` item of this call.
    pub fn item(&self, tool: CollabAgentTool) -> CollabAgentToolCallItem {
        CollabAgentToolCallItem {
            id: ItemId::from(self.call_id.to_string()),
            tool,
            status: CollabAgentToolCallStatus::InProgress,
            sender_thread_id: self.caller.thread_id.clone(),
            receiver_thread_ids: Vec::new(),
            prompt: None,
            model: None,
            reasoning_effort: None,
            agents_states: BTreeMap::new(),
        }
    }

    /// `item/started`.
    pub async fn started(&self, item: &CollabAgentToolCallItem) {
        let mut wire = ThreadItem::new(item.clone());
        wire.started_at_ms = Some(crate::time::now_ms());
        self.turn.item_started(wire).await;
    }

    /// `item/started`, then: an argument the model got wrong completes the item `failed` and
    /// is the model's text; a good one is handed back with the item.
    pub async fn started_with<T>(
        &self,
        item: CollabAgentToolCallItem,
        arg: Result<T, String>,
    ) -> Result<(CollabAgentToolCallItem, T), String> {
        self.started(&item).await;
        match arg {
            Ok(arg) => Ok((item, arg)),
            Err(err) => {
                self.completed(item, CollabAgentToolCallStatus::Failed)
                    .await;
                Err(err)
            }
        }
    }

    /// `item/completed`, with `status`.
    pub async fn completed(
        &self,
        mut item: CollabAgentToolCallItem,
        status: CollabAgentToolCallStatus,
    ) {
        item.status = status;
        let mut wire = ThreadItem::new(item);
        wire.completed_at_ms = Some(crate::time::now_ms());
        self.turn.item_completed(wire).await;
    }
}

/// The input of `message` or `items` (text, image, local_image parts); `Err` is the text for
/// the model.
pub(crate) fn input_of(call: &Call<'_>) -> Result<Vec<UserInput>, String> {
    let mut input = Vec::new();
    if let Some(message) = call.text("message")
        && !message.trim().is_empty()
    {
        input.push(UserInput::text(message));
    }
    if let Some(items) = call.args.get("items").and_then(Value::as_array) {
        for part in items {
            let field = |key: &str| part.get(key).and_then(Value::as_str).map(str::to_string);
            match field("type").as_deref() {
                Some("text") => input.push(UserInput::text(field("text").unwrap_or_default())),
                Some("image") => input.push(UserInput::Image {
                    url: Some(field("image_url").ok_or("an image item needs image_url")?),
                    file_id: None,
                    detail: None,
                }),
                Some("local_image") => input.push(UserInput::LocalImage {
                    path: field("path").ok_or("a local_image item needs path")?,
                    detail: None,
                }),
                Some(other) => return Err(format!("unsupported input item type: {other}")),
                None => return Err("an input item needs a type".into()),
            }
        }
    }
    if input.is_empty() {
        return Err("message must not be empty".into());
    }
    Ok(input)
}

/// The text of an input, for the item's `prompt`.
pub(crate) fn prompt_of(input: &[UserInput]) -> Option<String> {
    let text: Vec<&str> = input
        .iter()
        .filter_map(|part| match part {
            UserInput::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// A target id, or the model's error text.
pub(crate) fn agent_id(text: Option<String>, key: &str) -> Result<ThreadId, String> {
    let text = text.ok_or_else(|| format!("missing field `{key}`"))?;
    let id = text.trim();
    uuid::Uuid::parse_str(id)
        .map(|_| ThreadId::from(id))
        .map_err(|_| format!("invalid agent id: {text}"))
}

/// One agent's state for an item.
pub(crate) fn state_of(status: &crate::agents::AgentStatus) -> CollabAgentState {
    status.to_wire()
}
