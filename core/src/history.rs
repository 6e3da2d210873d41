//! The model-facing history of a thread (what is sent back to the model), and the invariants
//! enforced before every request (engine.md §7.6).

use std::collections::HashSet;

use crate::model::ResponseItem;
use crate::rollout::{RolloutRecord, RolloutWriter};

/// The text every unanswered tool call gets when a prompt is built.
const ABORTED_OUTPUT: &str = "aborted";

/// An ordered list of model-facing items. With a journal (the thread's rollout), every item
/// recorded is also appended there, in the same order.
#[derive(Debug, Clone, Default)]
pub struct History {
    items: Vec<ResponseItem>,
    journal: Option<RolloutWriter>,
}

impl History {
    /// An empty history.
    pub fn new() -> History {
        History::default()
    }

    /// A history restored from a rollout, journalling new items to `journal`.
    pub fn restored(items: Vec<ResponseItem>, journal: Option<RolloutWriter>) -> History {
        History { items, journal }
    }

    /// Append one item.
    pub fn record(&mut self, item: ResponseItem) {
        if let Some(journal) = &self.journal {
            journal.append(RolloutRecord::ResponseItem(item.clone()));
        }
        self.items.push(item);
    }

    /// Every item, in order.
    pub fn items(&self) -> &[ResponseItem] {
        &self.items
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the history is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The items to send: every call has an output right after it or later (a synthetic
    /// `aborted` one is inserted right after an unanswered call), and outputs without a call
    /// are dropped.
    pub fn for_prompt(&self) -> Vec<ResponseItem> {
        let answered: HashSet<&str> = self.items.iter().filter_map(output_call_id).collect();
        let called: HashSet<&str> = self.items.iter().filter_map(call_id).collect();
        let mut out = Vec::with_capacity(self.items.len());
        for item in &self.items {
            if let Some(id) = output_call_id(item)
                && !called.contains(id)
            {
                continue;
            }
            out.push(item.clone());
            if let Some(id) = call_id(item)
                && !answered.contains(id)
            {
                out.push(ResponseItem::function_call_output(id, ABORTED_OUTPUT));
            }
        }
        out
    }
}

fn call_id(item: &ResponseItem) -> Option<&str> {
    match item {
        ResponseItem::FunctionCall { call_id, .. }
        | ResponseItem::CustomToolCall { call_id, .. } => Some(call_id),
        _ => None,
    }
}

fn output_call_id(item: &ResponseItem) -> Option<&str> {
    match item {
        ResponseItem::FunctionCallOutput { call_id, .. }
        | ResponseItem::CustomToolCallOutput { call_id, .. } => Some(call_id),
        _ => None,
    }
}
