//! v1's tools (`multi_agent_v1`): agents are named by thread id; a spawned agent's task and
//! `send_input` reach it as user input (a `userMessage` item), and a finished agent is
//! reported to its parent as a `<subagent_notification>` message.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::watch;
use weft_protocol::{
    CollabAgentTool, CollabAgentToolCallItem, CollabAgentToolCallStatus, ReasoningEffort, ThreadId,
    UserInput,
};

use super::{Call, agent_id, input_of, prompt_of, state_of};
use crate::agents::{AgentCaller, AgentHost, AgentStatus, SendMode, SpawnRequest};
use crate::model::{ContentItem, ResponseItem, Role};
use crate::settings::ThreadSettings;
use crate::tools::tool::aborted_by_user;

/// `wait_agent`'s timeout when none is given, and its bounds (milliseconds).
const WAIT_DEFAULT_MS: u64 = 30_000;
const WAIT_MIN_MS: u64 = 10_000;
const WAIT_MAX_MS: u64 = 3_600_000;

/// What a forked child is told when its parent's tools were deferred (it has none of them).
const REMOVED_NAMESPACE: &str = "<tools>\nRemoved deferred tool namespaces:\n- multi_agent_v1: Tools for spawning and managing sub-agents.\nNo deferred tool namespaces remain.\n</tools>";

/// `spawn_agent` → `{"agent_id","nickname"}`.
pub async fn spawn(call: &Call<'_>) -> String {
    let caller = call.caller;
    let mut item = call.item(CollabAgentTool::SpawnAgent);
    let input = input_of(call);
    let settings = child_settings(call);
    item.prompt = input.as_ref().ok().and_then(|input| prompt_of(input));
    item.model = Some(String::new());
    item.reasoning_effort = settings.reasoning_effort.clone();
    let (mut item, input) = match call.started_with(item, input).await {
        Ok(started) => started,
        Err(err) => return err,
    };
    let history = if call.flag("fork_context") {
        fork_history(caller)
    } else {
        Vec::new()
    };
    let control = caller.hub.control(&caller.place.root).await;
    let request = SpawnRequest {
        path: None,
        settings,
        history,
        role: None,
    };
    let spawned = match caller.spawn(&control, request).await {
        Ok(spawned) => spawned,
        Err(err) => {
            call.completed(item, CollabAgentToolCallStatus::Failed)
                .await;
            return err;
        }
    };
    let id = spawned.id.clone();
    item.receiver_thread_ids = vec![id.to_string()];
    item.model = Some(spawned.settings.model.clone());
    item.reasoning_effort = spawned.settings.reasoning_effort.clone();
    item.agents_states = BTreeMap::from([(id.to_string(), state_of(&AgentStatus::PendingInit))]);
    call.completed(item, CollabAgentToolCallStatus::Completed)
        .await;
    let started = match caller.hub.host() {
        Some(host) => submit(&*host, &id, input, SendMode::StartIfIdle, caller).await,
        None => Err("the daemon is shutting down".to_string()),
    };
    if let Err(err) = started {
        tracing::warn!(agent = %id, %err, "the sub-agent's task could not start");
    }
    json!({ "agent_id": id.to_string(), "nickname": spawned.record.nickname }).to_string()
}

/// `send_input` → `{"submission_id"}`.
pub async fn send_input(call: &Call<'_>) -> String {
    let caller = call.caller;
    let input = input_of(call);
    let prompt = input.as_ref().ok().and_then(|input| prompt_of(input));
    let (mut item, target) =
        match started_on(call, CollabAgentTool::SendInput, "target", prompt).await {
            Ok(started) => started,
            Err(err) => return err,
        };
    let input = match input {
        Ok(input) => input,
        Err(err) => {
            call.completed(item, CollabAgentToolCallStatus::Failed)
                .await;
            return err;
        }
    };
    let control = caller.hub.control(&caller.place.root).await;
    let host = match control.open(&caller.hub, &target).await {
        Ok(host) => host,
        Err(status) => {
            call.completed(item, CollabAgentToolCallStatus::Failed)
                .await;
            return unavailable(&target, &status);
        }
    };
    let status = control.status(&target).await;
    if call.flag("interrupt") {
        host.interrupt(&target).await;
    }
    if let Err(err) = submit(&*host, &target, input, SendMode::StartOrSteer, caller).await {
        call.completed(item, CollabAgentToolCallStatus::Failed)
            .await;
        return format!("collab send_input failed: {err}");
    }
    item.agents_states = BTreeMap::from([(target.to_string(), state_of(&status))]);
    call.completed(item, CollabAgentToolCallStatus::Completed)
        .await;
    json!({ "submission_id": crate::time::new_item_id().to_string() }).to_string()
}

/// `wait_agent` → `{"status":{id: status…},"timed_out"}`: the final statuses among the
/// targets once one is final, or none at the timeout.
pub async fn wait(call: &Call<'_>) -> String {
    let caller = call.caller;
    let started = Instant::now();
    let mut item = call.item(CollabAgentTool::Wait);
    let targets: Result<Vec<ThreadId>, String> = match call.args.get("targets") {
        Some(serde_json::Value::Array(targets)) if !targets.is_empty() => targets
            .iter()
            .map(|target| agent_id(target.as_str().map(str::to_string), "targets"))
            .collect(),
        Some(serde_json::Value::Array(_)) => Err("targets must not be empty".to_string()),
        _ => Err("missing field `targets`".to_string()),
    };
    if let Ok(targets) = &targets {
        item.receiver_thread_ids = targets.iter().map(ToString::to_string).collect();
    }
    let (mut item, targets) = match call.started_with(item, targets).await {
        Ok(started) => started,
        Err(err) => return err,
    };
    let timeout = call
        .args
        .get("timeout_ms")
        .and_then(serde_json::Value::as_f64)
        .filter(|ms| ms.is_finite())
        .map_or(WAIT_DEFAULT_MS, |ms| ms.max(0.0) as u64)
        .clamp(WAIT_MIN_MS, WAIT_MAX_MS);
    let control = caller.hub.control(&caller.place.root).await;
    let mut watches = Vec::new();
    for target in &targets {
        watches.push((target.clone(), control.watch(target).await));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout);
    let finals = loop {
        let finals = final_statuses(&watches);
        if !finals.is_empty() {
            break finals;
        }
        let changed = futures::future::select_all(
            watches
                .iter_mut()
                .filter_map(|(_, watch)| watch.as_mut())
                .map(|watch| Box::pin(watch.changed())),
        );
        tokio::select! {
            biased;
            () = call.turn.cancel.cancelled() => {
                // As the reference: the wait's item stays open (the turn's end closes it).
                return aborted_by_user(started.elapsed());
            }
            () = tokio::time::sleep_until(deadline) => break BTreeMap::new(),
            _ = changed => {}
        }
    };
    let timed_out = finals.is_empty();
    // A finished agent's notification is read at the turn's next step with this output.
    if !timed_out && let Some(host) = caller.hub.host() {
        host.deliver_mail(&caller.thread_id).await;
    }
    item.agents_states = finals
        .iter()
        .map(|(id, status)| (id.clone(), state_of(status)))
        .collect();
    call.completed(item, CollabAgentToolCallStatus::Completed)
        .await;
    let status: serde_json::Map<String, serde_json::Value> = finals
        .iter()
        .map(|(id, status)| (id.clone(), status.to_model()))
        .collect();
    json!({ "status": status, "timed_out": timed_out }).to_string()
}

/// `close_agent` → `{"previous_status"}`.
pub async fn close(call: &Call<'_>) -> String {
    let caller = call.caller;
    let (mut item, target) =
        match started_on(call, CollabAgentTool::CloseAgent, "target", None).await {
            Ok(started) => started,
            Err(err) => return err,
        };
    let control = caller.hub.control(&caller.place.root).await;
    let previous = control.close(&caller.hub, &target).await;
    if previous == AgentStatus::NotFound {
        call.completed(item, CollabAgentToolCallStatus::Failed)
            .await;
        return unavailable(&target, &previous);
    }
    item.agents_states = BTreeMap::from([(target.to_string(), state_of(&previous))]);
    call.completed(item, CollabAgentToolCallStatus::Completed)
        .await;
    json!({ "previous_status": previous.to_model() }).to_string()
}

/// `resume_agent` → `{"status"}`.
pub async fn resume(call: &Call<'_>) -> String {
    let caller = call.caller;
    let (mut item, target) = match started_on(call, CollabAgentTool::ResumeAgent, "id", None).await
    {
        Ok(started) => started,
        Err(err) => return err,
    };
    let control = caller.hub.control(&caller.place.root).await;
    match control.resume(&caller.hub, &target).await {
        Ok(status) => {
            item.agents_states = BTreeMap::from([(target.to_string(), state_of(&status))]);
            call.completed(item, CollabAgentToolCallStatus::Completed)
                .await;
            json!({ "status": status.to_model() }).to_string()
        }
        Err(err) => {
            call.completed(item, CollabAgentToolCallStatus::Failed)
                .await;
            err
        }
    }
}

/// Start the item of a call on the one agent its `key` argument names (with `prompt`). A bad
/// id completes the item `failed` and is the model's text.
async fn started_on(
    call: &Call<'_>,
    tool: CollabAgentTool,
    key: &str,
    prompt: Option<String>,
) -> Result<(CollabAgentToolCallItem, ThreadId), String> {
    let mut item = call.item(tool);
    item.prompt = prompt;
    let target = agent_id(call.text(key), key);
    if let Ok(target) = &target {
        item.receiver_thread_ids = vec![target.to_string()];
    }
    call.started_with(item, target).await
}

/// The final statuses among the watched agents (an agent the tree does not know is
/// `not_found`, which is final).
fn final_statuses(
    watches: &[(ThreadId, Option<watch::Receiver<AgentStatus>>)],
) -> BTreeMap<String, AgentStatus> {
    watches
        .iter()
        .filter_map(|(id, watch)| {
            let status = match watch {
                Some(watch) => watch.borrow().clone(),
                None => AgentStatus::NotFound,
            };
            status.is_final().then(|| (id.to_string(), status))
        })
        .collect()
}

/// Why a target cannot take input.
fn unavailable(target: &ThreadId, status: &AgentStatus) -> String {
    match status {
        AgentStatus::Shutdown => format!("agent with id {target} is closed"),
        _ => format!("agent with id {target} not found"),
    }
}

/// The child's settings: the caller's, with the spawn's model and effort (else
/// `[agents] default_subagent_model`), and none of its client-defined tools or mode.
pub(super) fn child_settings(call: &Call<'_>) -> ThreadSettings {
    let mut settings = call.caller.settings.clone();
    if let Some(model) = call
        .text("model")
        .filter(|model| !model.trim().is_empty())
        .or_else(|| call.caller.hub.default_subagent_model.clone())
    {
        settings.model = model;
    }
    if let Some(effort) = call
        .text("reasoning_effort")
        .filter(|effort| !effort.trim().is_empty())
    {
        settings.reasoning_effort = Some(ReasoningEffort(effort));
    }
    settings.dynamic_tools = Vec::new();
    settings.collaboration_mode = None;
    settings
}

/// A v1 fork: the caller's messages without its tool calls and their outputs, and, when its
/// multi-agent tools were deferred, a note that the child has none.
fn fork_history(caller: &AgentCaller) -> Vec<ResponseItem> {
    let mut history: Vec<ResponseItem> = caller
        .history
        .lock()
        .items()
        .iter()
        .filter(|item| matches!(item, ResponseItem::Message { .. }))
        .cloned()
        .collect();
    if caller.tool_search {
        history.push(ResponseItem::message(
            Role::Developer,
            vec![ContentItem::InputText {
                text: REMOVED_NAMESPACE.to_string(),
            }],
        ));
    }
    history
}

/// Give input to an agent's thread as a client would (`turn/start`); a turn it starts has
/// the caller's turn as its `rootTurnId`.
async fn submit(
    host: &dyn AgentHost,
    id: &ThreadId,
    input: Vec<UserInput>,
    mode: SendMode,
    caller: &AgentCaller,
) -> Result<(), String> {
    host.send(id, input, mode, caller.turn_id.clone()).await
}
