//! The one owner of a turn's items: what the turn has started and not completed yet, and what
//! it has completed (the finished turn's items, in completion order).
//!
//! Every item event of a turn passes through [`OpenItems::observe`] on its way to the client,
//! whether the turn loop or a tool emits it (see `item_sink.rs`): a started item becomes open,
//! deltas grow the open agent message's text and the open reasoning item's parts, and a
//! completed item moves from open to completed. What is still open is completed from here:
//!
//! * when a sampling stream ends — normally, abandoned for steered input, or interrupted —
//!   its agent messages and reasoning items complete as streamed so far
//!   ([`OpenItems::streamed`]);
//! * when the task was aborted hard, everything still open completes, commands and file
//!   changes as `failed` ([`OpenItems::abandon`]); after that the turn's items are sealed and a
//!   late event of the aborted task is dropped, so no item completes twice.

use parking_lot::Mutex;
use weft_protocol::{CommandExecutionStatus, PatchApplyStatus, ThreadItem, ThreadItemDetails};

use crate::events::ThreadEvent;
use crate::model::limits::part_index_ok;

/// The items of one turn: open and completed.
#[derive(Debug, Default)]
pub struct OpenItems {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Started and not completed, as they stand (text and parts streamed so far).
    open: Vec<ThreadItem>,
    /// Completed, in completion order.
    completed: Vec<ThreadItem>,
    /// Set by [`OpenItems::abandon`]: the turn is over.
    sealed: bool,
}

impl State {
    fn open_mut(&mut self, id: &str) -> Option<&mut ThreadItemDetails> {
        self.open
            .iter_mut()
            .rev()
            .map(|item| &mut item.details)
            .find(|details| details.id().as_str() == id)
    }

    fn reasoning_mut(&mut self, id: &str) -> Option<(&mut Vec<String>, &mut Vec<String>)> {
        match self.open_mut(id) {
            Some(ThreadItemDetails::Reasoning(reasoning)) => {
                Some((&mut reasoning.summary, &mut reasoning.content))
            }
            _ => None,
        }
    }
}

impl OpenItems {
    /// Note an event on its way to the client. Returns false when it must not be sent: an
    /// item event after [`OpenItems::abandon`] sealed the turn (a late event of an aborted task).
    pub fn observe(&self, event: &ThreadEvent) -> bool {
        let mut state = self.state.lock();
        match event {
            ThreadEvent::ItemStarted { item, .. } => {
                if state.sealed {
                    return false;
                }
                state.open.push(item.clone());
            }
            ThreadEvent::ItemCompleted { item, .. } => {
                let at = state.open.iter().position(|o| o.id() == item.id());
                if state.sealed && at.is_none() {
                    return false;
                }
                if let Some(at) = at {
                    state.open.remove(at);
                }
                state.completed.push(item.clone());
            }
            ThreadEvent::AgentMessageDelta { item_id, delta, .. } => {
                if let Some(ThreadItemDetails::AgentMessage(message)) = state.open_mut(item_id) {
                    message.text.push_str(delta);
                }
            }
            ThreadEvent::PlanDelta { item_id, delta, .. } => {
                if let Some(ThreadItemDetails::Plan(plan)) = state.open_mut(item_id) {
                    plan.text.push_str(delta);
                }
            }
            ThreadEvent::ReasoningSummaryPartAdded {
                item_id,
                summary_index,
                ..
            } => {
                if let Some((summary, _)) = state.reasoning_mut(item_id) {
                    grow(summary, *summary_index);
                }
            }
            ThreadEvent::ReasoningSummaryTextDelta {
                item_id,
                summary_index,
                delta,
                ..
            } => {
                if let Some((summary, _)) = state.reasoning_mut(item_id) {
                    append_part(summary, *summary_index, delta);
                }
            }
            ThreadEvent::ReasoningTextDelta {
                item_id,
                content_index,
                delta,
                ..
            } => {
                if let Some((_, content)) = state.reasoning_mut(item_id) {
                    append_part(content, *content_index, delta);
                }
            }
            _ => {}
        }
        true
    }

    /// The open item with this id, as it stands.
    pub fn get(&self, id: &str) -> Option<ThreadItem> {
        let state = self.state.lock();
        state
            .open
            .iter()
            .rev()
            .find(|o| o.id().as_str() == id)
            .cloned()
    }

    /// The open agent messages and reasoning items (what a sampling stream starts), as they
    /// should complete when the stream ends before they are done: with the text and parts
    /// streamed so far. They stay open until their completion is observed.
    pub fn streamed(&self, completed_at_ms: i64) -> Vec<ThreadItem> {
        let state = self.state.lock();
        state
            .open
            .iter()
            .filter(|item| {
                matches!(
                    item.details,
                    ThreadItemDetails::AgentMessage(_)
                        | ThreadItemDetails::Reasoning(_)
                        | ThreadItemDetails::Plan(_)
                )
            })
            .map(|item| {
                let mut item = item.clone();
                item.completed_at_ms = Some(completed_at_ms);
                item
            })
            .collect()
    }

    /// Complete everything still open (the task was aborted): commands and file changes
    /// `failed`, multi-agent calls `interrupted`, messages and reasoning as streamed so far. The completed items are counted
    /// among the turn's items and returned for the caller to send; the turn is sealed.
    pub fn abandon(&self, completed_at_ms: i64) -> Vec<ThreadItem> {
        let mut state = self.state.lock();
        state.sealed = true;
        let open = std::mem::take(&mut state.open);
        let mut done = Vec::with_capacity(open.len());
        for mut item in open {
            match &mut item.details {
                ThreadItemDetails::CommandExecution(command) => {
                    command.status = CommandExecutionStatus::Failed;
                }
                ThreadItemDetails::FileChange(change) => {
                    change.status = PatchApplyStatus::Failed;
                }
                // A multi-agent call cut short (a `wait_agent` the user interrupted).
                ThreadItemDetails::CollabAgentToolCall(call) => {
                    call.status = weft_protocol::CollabAgentToolCallStatus::Interrupted;
                }
                _ => {}
            }
            item.completed_at_ms = Some(completed_at_ms);
            state.completed.push(item.clone());
            done.push(item);
        }
        done
    }

    /// The items completed so far, in completion order.
    pub fn completed(&self) -> Vec<ThreadItem> {
        self.state.lock().completed.clone()
    }
}

/// Append `delta` to part `index` of a reasoning summary or content, growing the list.
fn append_part(parts: &mut Vec<String>, index: i64, delta: &str) {
    grow(parts, index);
    if let Some(part) = usize::try_from(index).ok().and_then(|i| parts.get_mut(i)) {
        part.push_str(delta);
    }
}

/// Grow `parts` to hold part `index`. The decoders end a stream whose index is past
/// [`MAX_REASONING_PARTS`](crate::model::limits::MAX_REASONING_PARTS); such an index is ignored here too, so no event can make this
/// allocate more than the bound.
fn grow(parts: &mut Vec<String>, index: i64) {
    if !part_index_ok(index) {
        return;
    }
    let Ok(index) = usize::try_from(index) else {
        return;
    };
    while parts.len() <= index {
        parts.push(String::new());
    }
}

#[cfg(test)]
mod tests {
    use weft_protocol::{
        AgentMessageItem, CommandExecutionItem, CommandExecutionSource, ItemId, ReasoningItem,
        TurnId,
    };

    use super::*;

    fn turn() -> TurnId {
        TurnId::from("t".to_string())
    }

    fn started(item: &ThreadItem) -> ThreadEvent {
        ThreadEvent::ItemStarted {
            turn_id: turn(),
            item: item.clone(),
        }
    }

    fn completed(item: &ThreadItem) -> ThreadEvent {
        ThreadEvent::ItemCompleted {
            turn_id: turn(),
            item: item.clone(),
        }
    }

    fn command(id: &str) -> ThreadItem {
        ThreadItem::from(CommandExecutionItem {
            id: ItemId::from(id.to_string()),
            command: "sleep 30".into(),
            cwd: "/".into(),
            process_id: None,
            source: CommandExecutionSource::default(),
            status: CommandExecutionStatus::InProgress,
            command_actions: Vec::new(),
            aggregated_output: None,
            exit_code: None,
            duration_ms: None,
            plugin_id: None,
            script_path: None,
        })
    }

    fn reasoning(id: &str) -> ThreadItem {
        ThreadItem::from(ReasoningItem {
            id: ItemId::from(id.to_string()),
            summary: Vec::new(),
            content: Vec::new(),
        })
    }

    #[test]
    fn abandoned_items_complete_and_commands_fail() {
        let items = OpenItems::default();
        let message = ThreadItem::from(AgentMessageItem::new("m1", ""));
        let done = ThreadItem::from(AgentMessageItem::new("m2", "whole"));
        let command = command("c1");
        for item in [&message, &done, &command] {
            assert!(items.observe(&started(item)));
        }
        items.observe(&ThreadEvent::AgentMessageDelta {
            turn_id: turn(),
            item_id: "m1".into(),
            delta: "partial".into(),
        });
        assert!(items.observe(&completed(&done)));
        let abandoned = items.abandon(42);
        let ids: Vec<&str> = abandoned.iter().map(|i| i.id().as_str()).collect();
        assert_eq!(ids, ["m1", "c1"]);
        assert!(matches!(
            &abandoned[0].details,
            ThreadItemDetails::AgentMessage(m) if m.text == "partial"
        ));
        assert!(abandoned.iter().all(|i| i.completed_at_ms == Some(42)));
        assert!(matches!(
            &abandoned[1].details,
            ThreadItemDetails::CommandExecution(c) if c.status == CommandExecutionStatus::Failed
        ));
        assert_eq!(items.completed().len(), 3);
        assert!(items.abandon(43).is_empty());
    }

    #[test]
    fn a_late_event_after_abandon_is_dropped() {
        let items = OpenItems::default();
        let first = command("c1");
        items.observe(&started(&first));
        assert_eq!(items.abandon(42).len(), 1);
        // The aborted tool task completes its command after all: not a second time.
        assert!(!items.observe(&completed(&first)));
        assert!(!items.observe(&started(&command("c2"))));
        assert_eq!(items.completed().len(), 1);
    }

    #[test]
    fn a_part_index_past_the_bound_allocates_nothing() {
        let items = OpenItems::default();
        items.observe(&started(&reasoning("r1")));
        items.observe(&ThreadEvent::ReasoningSummaryPartAdded {
            turn_id: turn(),
            item_id: "r1".into(),
            summary_index: 2_000_000_000,
        });
        items.observe(&ThreadEvent::ReasoningTextDelta {
            turn_id: turn(),
            item_id: "r1".into(),
            delta: "x".into(),
            content_index: i64::MAX,
        });
        let streamed = items.streamed(1);
        assert!(matches!(
            &streamed[0].details,
            ThreadItemDetails::Reasoning(r) if r.summary.is_empty() && r.content.is_empty()
        ));
    }

    #[test]
    fn streamed_items_keep_their_text_and_parts() {
        let items = OpenItems::default();
        let message = ThreadItem::from(AgentMessageItem::new("m1", ""));
        let thinking = reasoning("r1");
        let command = command("c1");
        for item in [&message, &thinking, &command] {
            items.observe(&started(item));
        }
        for event in [
            ThreadEvent::AgentMessageDelta {
                turn_id: turn(),
                item_id: "m1".into(),
                delta: "Hel".into(),
            },
            ThreadEvent::AgentMessageDelta {
                turn_id: turn(),
                item_id: "m1".into(),
                delta: "lo".into(),
            },
            ThreadEvent::ReasoningSummaryPartAdded {
                turn_id: turn(),
                item_id: "r1".into(),
                summary_index: 1,
            },
            ThreadEvent::ReasoningSummaryTextDelta {
                turn_id: turn(),
                item_id: "r1".into(),
                delta: "second".into(),
                summary_index: 1,
            },
            ThreadEvent::ReasoningTextDelta {
                turn_id: turn(),
                item_id: "r1".into(),
                delta: "raw".into(),
                content_index: 0,
            },
        ] {
            items.observe(&event);
        }
        // Only what the stream started, not the tool's command.
        let streamed = items.streamed(7);
        let ids: Vec<&str> = streamed.iter().map(|i| i.id().as_str()).collect();
        assert_eq!(ids, ["m1", "r1"]);
        assert!(matches!(
            &streamed[0].details,
            ThreadItemDetails::AgentMessage(m) if m.text == "Hello"
        ));
        assert!(matches!(
            &streamed[1].details,
            ThreadItemDetails::Reasoning(r) if r.summary == ["", "second"] && r.content == ["raw"]
        ));
        assert!(streamed.iter().all(|i| i.completed_at_ms == Some(7)));
        for item in &streamed {
            assert!(items.observe(&completed(item)));
        }
        assert!(items.streamed(8).is_empty());
        assert!(items.get("c1").is_some());
        assert_eq!(items.completed().len(), 2);
    }
}
