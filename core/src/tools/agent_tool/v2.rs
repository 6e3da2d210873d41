//! v2's tools (`collaboration`, `[features.multi_agent_v2]`): agents are named by path
//! (`/root/worker_a`), talk by mail (`agent_message` items, docs/agents.md §5), and clients
//! see `subAgentActivity` items. Only the root gets these tools, as in the reference.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use weft_protocol::{
    CollabAgentTool, CollabAgentToolCallStatus, ItemId, SubAgentActivityItem, SubAgentActivityKind,
    ThreadId, ThreadItem,
};

use super::Call;
use super::v1::child_settings;
use crate::agents::{
    AgentCaller, AgentMail, AgentRecord, AgentStatus, ROOT_PATH, SpawnRequest, notify, prompts,
};
use crate::model::ResponseItem;
use crate::tools::tool::aborted_by_user;

/// `wait_agent`'s timeout when none is given, and its bounds (milliseconds).
const WAIT_DEFAULT_MS: u64 = 30_000;
const WAIT_MIN_MS: u64 = 10_000;
const WAIT_MAX_MS: u64 = 3_600_000;

/// `spawn_agent` → `{"task_name":"/root/NAME"}`.
pub async fn spawn(call: &Call<'_>) -> String {
    let caller = call.caller;
    let Some(task) = call.text("task_name") else {
        return "missing field `task_name`".into();
    };
    if task.is_empty()
        || !task
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return "task_name must use only lowercase letters, digits and underscores".into();
    }
    let Some(message) = call.text("message").filter(|m| !m.trim().is_empty()) else {
        return "message must not be empty".into();
    };
    let fork = match call.text("fork_turns").as_deref() {
        None | Some("all") => true,
        Some("none") => false,
        Some(other) => {
            return format!("fork_turns must be `all` or `none`, not `{other}`");
        }
    };
    if fork && (call.text("model").is_some() || call.text("reasoning_effort").is_some()) {
        return "a full-history fork keeps the parent's model and reasoning effort: set fork_turns to \"none\" to choose them".into();
    }
    let own_path = caller.place.name(&caller.thread_id);
    let path = format!("{own_path}/{task}");
    let settings = if fork {
        caller.settings.clone()
    } else {
        child_settings(call)
    };
    let history = if fork {
        fork_history(caller)
    } else {
        Vec::new()
    };
    let control = caller.hub.control(&caller.place.root).await;
    let request = SpawnRequest {
        path: Some(path.clone()),
        settings,
        history,
        role: None,
    };
    let spawned = match caller.spawn(&control, request).await {
        Ok(spawned) => spawned,
        Err(err) => return err,
    };
    let child = spawned.id.clone();
    let mut item = activity(call.call_id, SubAgentActivityKind::Started, &child, &path);
    item.model = Some(spawned.settings.model.clone());
    item.reasoning_effort = spawned.settings.reasoning_effort.clone();
    show(call, item).await;
    let task_mail = notify::agent_message(&own_path, &path, "NEW_TASK", &message);
    match caller.hub.mailbox(&child) {
        Some(mailbox) => {
            let mail = AgentMail {
                root_turn: Some(caller.turn_id.clone()),
                ..AgentMail::model(task_mail)
            };
            mailbox.send(mail, true);
        }
        None => tracing::warn!(agent = %child, "the sub-agent's mailbox is gone"),
    }
    json!({ "task_name": path }).to_string()
}

/// `send_message` (queued, no turn) and `followup_task` (starts a turn) → `""`.
pub async fn message(call: &Call<'_>, followup: bool) -> String {
    let caller = call.caller;
    let Some(target) = call.text("target") else {
        return "missing field `target`".into();
    };
    let Some(text) = call.text("message").filter(|m| !m.trim().is_empty()) else {
        return "message must not be empty".into();
    };
    let record = match resolve(caller, &target).await {
        Ok(record) => record,
        Err(err) => return err,
    };
    let Some(path) = record.path.clone() else {
        return format!("agent `{target}` has no task name");
    };
    let control = caller.hub.control(&caller.place.root).await;
    if let Err(status) = control.open(&caller.hub, &record.thread_id).await {
        return format!("agent `{path}` is {}", status.to_model());
    }
    let own_path = caller.place.name(&caller.thread_id);
    let kind = if followup { "NEW_TASK" } else { "MESSAGE" };
    let mail = notify::agent_message(&own_path, &path, kind, &text);
    if let Some(mailbox) = caller.hub.mailbox(&record.thread_id) {
        let mail = AgentMail {
            root_turn: followup.then(|| caller.turn_id.clone()),
            ..AgentMail::model(mail)
        };
        mailbox.send(mail, followup);
    }
    show(
        call,
        activity(
            call.call_id,
            SubAgentActivityKind::Interacted,
            &record.thread_id,
            &path,
        ),
    )
    .await;
    String::new()
}

/// `interrupt_agent` → `{"previous_status"}`.
pub async fn interrupt(call: &Call<'_>) -> String {
    let caller = call.caller;
    let Some(target) = call.text("target") else {
        return "missing field `target`".into();
    };
    let record = match resolve(caller, &target).await {
        Ok(record) => record,
        Err(err) => return err,
    };
    let control = caller.hub.control(&caller.place.root).await;
    let previous = control.interrupt(&caller.hub, &record.thread_id).await;
    let path = record.path.clone().unwrap_or_else(|| target.clone());
    show(
        call,
        activity(
            call.call_id,
            SubAgentActivityKind::Interrupted,
            &record.thread_id,
            &path,
        ),
    )
    .await;
    json!({ "previous_status": previous.to_model() }).to_string()
}

/// `list_agents` → `{"agents":[{"agent_name","agent_status"}…]}`: the root and every open
/// agent, in spawn order, optionally under a path prefix. No item.
pub async fn list(call: &Call<'_>) -> String {
    let caller = call.caller;
    let prefix = call.text("path_prefix");
    let control = caller.hub.control(&caller.place.root).await;
    let mut agents = vec![(ROOT_PATH.to_string(), root_status(caller))];
    for record in control.registry().agents() {
        if record.closed {
            continue;
        }
        let status = control.status(&record.thread_id).await;
        agents.push((
            record
                .path
                .clone()
                .unwrap_or_else(|| record.thread_id.to_string()),
            status,
        ));
    }
    let agents: Vec<Value> = agents
        .into_iter()
        .filter(|(name, _)| match &prefix {
            Some(prefix) => name == prefix || name.starts_with(&format!("{prefix}/")),
            None => true,
        })
        .map(|(name, status)| json!({ "agent_name": name, "agent_status": status.to_model() }))
        .collect();
    json!({ "agents": agents }).to_string()
}

/// `wait_agent` → `{"message","timed_out"}`, as the reference waits (docs/agents.md §6.2): at
/// once when the caller has mail its model has not read yet (queued, or handed to this turn
/// and not recorded), else until new mail arrives or the timeout. A `timeout_ms` of zero or
/// less is refused (no item); `turn/interrupt` ends the wait and the turn.
pub async fn wait(call: &Call<'_>) -> String {
    let caller = call.caller;
    let started = Instant::now();
    let timeout = match call
        .args
        .get("timeout_ms")
        .and_then(Value::as_f64)
        .filter(|ms| ms.is_finite())
    {
        Some(ms) if ms <= 0.0 => return "timeout_ms must be greater than zero".into(),
        Some(ms) => (ms as u64).clamp(WAIT_MIN_MS, WAIT_MAX_MS),
        None => WAIT_DEFAULT_MS,
    };
    let item = call.item(CollabAgentTool::Wait);
    call.started(&item).await;
    let Some(mailbox) = caller.hub.mailbox(&caller.thread_id) else {
        call.completed(item, CollabAgentToolCallStatus::Failed)
            .await;
        return "the agent's mailbox is gone".into();
    };
    // Watching before looking, so mail sent in between is not missed.
    let mut watch = mailbox.watch();
    watch.borrow_and_update();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout);
    let timed_out = !mailbox.unread()
        && tokio::select! {
            biased;
            () = call.turn.cancel.cancelled() => {
                return aborted_by_user(started.elapsed());
            }
            () = tokio::time::sleep_until(deadline) => true,
            changed = watch.changed() => changed.is_err(),
        };
    mailbox.set_waited(mailbox.last_seq());
    // The mail is read at the turn's next step: make sure the turn has it by then.
    if !timed_out && let Some(host) = caller.hub.host() {
        host.deliver_mail(&caller.thread_id).await;
    }
    call.completed(item, CollabAgentToolCallStatus::Completed)
        .await;
    let message = if timed_out {
        "Wait timed out."
    } else {
        "Wait completed."
    };
    json!({ "message": message, "timed_out": timed_out }).to_string()
}

/// The root's status as the tools report it: it is the one calling.
fn root_status(_caller: &AgentCaller) -> AgentStatus {
    AgentStatus::Running
}

/// The agent a `target` names: an id, a canonical path (`/root/worker_a`), or a path
/// relative to the caller (`worker_a`).
async fn resolve(caller: &AgentCaller, target: &str) -> Result<AgentRecord, String> {
    let control = caller.hub.control(&caller.place.root).await;
    let registry = control.registry();
    let found = if uuid::Uuid::parse_str(target).is_ok() {
        registry.get(&ThreadId::from(target))
    } else if target.starts_with('/') {
        registry.by_path(target)
    } else {
        let own = caller.place.name(&caller.thread_id);
        registry.by_path(&format!("{own}/{target}"))
    };
    found
        .filter(|record| !record.closed)
        .ok_or_else(|| format!("agent `{target}` not found"))
}

/// A `subAgentActivity` item for this call.
fn activity(
    call_id: &str,
    kind: SubAgentActivityKind,
    agent: &ThreadId,
    path: &str,
) -> SubAgentActivityItem {
    notify::activity(ItemId::from(call_id).to_string(), kind, agent, path)
}

/// `item/started` and `item/completed` of an activity (it happens at once).
async fn show(call: &Call<'_>, activity: SubAgentActivityItem) {
    let now = crate::time::now_ms();
    let mut item = ThreadItem::new(activity);
    item.started_at_ms = Some(now);
    call.turn.item_started(item.clone()).await;
    item.completed_at_ms = Some(now);
    call.turn.item_completed(item).await;
}

/// A v2 full-history fork: the caller's whole history, a call still open (this spawn) answered
/// `aborted`, then the note that the rest is the child's own, and a member's messages.
fn fork_history(caller: &AgentCaller) -> Vec<ResponseItem> {
    let items: Vec<ResponseItem> = caller.history.lock().items().to_vec();
    let answered: std::collections::HashSet<String> = items
        .iter()
        .filter_map(|item| match item {
            ResponseItem::FunctionCallOutput { call_id, .. }
            | ResponseItem::CustomToolCallOutput { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    let mut history = Vec::with_capacity(items.len() + 4);
    for item in items {
        let open = item
            .call_id()
            .filter(|id| !answered.contains(*id))
            .map(str::to_string);
        let custom = matches!(item, ResponseItem::CustomToolCall { .. });
        history.push(item);
        if let Some(call_id) = open {
            history.push(if custom {
                ResponseItem::custom_tool_call_output(call_id, "aborted")
            } else {
                ResponseItem::function_call_output(call_id, "aborted")
            });
        }
    }
    history.push(prompts::forked_message());
    history.extend(prompts::member_messages());
    history
}
