//! The model-facing history of a thread (what is sent back to the model), and the invariants
//! enforced before every request (docs/architecture.md §6.5).

use std::collections::HashSet;

use crate::model::ResponseItem;
use crate::rollout::{RolloutRecord, RolloutWriter};

/// The text every unanswered tool call gets when a prompt is built.
const ABORTED_OUTPUT: &str = "aborted";

/// An ordered list of model-facing items. With a journal (the thread's rollout), every item
/// recorded is also appended there, in the same order.
///
/// It also keeps the window accounting of docs/architecture.md §9.1: the last authoritative token count
/// the model reported, plus an estimate (4 bytes of model-visible JSON per token) of what was
/// recorded since.
#[derive(Debug, Clone, Default)]
pub struct History {
    items: Vec<ResponseItem>,
    journal: Option<RolloutWriter>,
    /// `total_tokens` of the last model response, when one was reported since the last
    /// replacement.
    last_reported: Option<u64>,
    /// Estimated tokens recorded since `last_reported` (or since the start).
    estimated_since: u64,
}

impl History {
    /// An empty history.
    pub fn new() -> History {
        History::default()
    }

    /// A history restored from a rollout, journalling new items to `journal`.
    pub fn restored(items: Vec<ResponseItem>, journal: Option<RolloutWriter>) -> History {
        let estimated_since = items.iter().map(approx_tokens).fold(0, u64::saturating_add);
        History {
            items,
            journal,
            last_reported: None,
            estimated_since,
        }
    }

    /// Append one item.
    pub fn record(&mut self, item: ResponseItem) {
        if let Some(journal) = &self.journal {
            journal.append(RolloutRecord::ResponseItem(item.clone()));
        }
        self.estimated_since = self.estimated_since.saturating_add(approx_tokens(&item));
        self.items.push(item);
    }

    /// The model reported the size of the context it just answered from (`total_tokens` of
    /// its response, which includes its own output).
    pub fn mark_reported(&mut self, total_tokens: u64) {
        self.last_reported = Some(total_tokens);
        self.estimated_since = 0;
    }

    /// The context window in use: the last reported count plus the estimate of what was
    /// recorded since.
    pub fn estimated_tokens(&self) -> u64 {
        self.last_reported
            .unwrap_or(0)
            .saturating_add(self.estimated_since)
    }

    /// Replace the whole history after a compaction; the rollout gets one `compacted` record
    /// (a resumed thread restarts from `items`).
    pub fn replace(&mut self, items: Vec<ResponseItem>, summary: &str) {
        if let Some(journal) = &self.journal {
            journal.append(RolloutRecord::Compacted {
                summary: summary.to_string(),
                replacement_history: items.clone(),
            });
        }
        self.estimated_since = items.iter().map(approx_tokens).fold(0, u64::saturating_add);
        self.last_reported = None;
        self.items = items;
    }

    /// Stop journalling (the rollout is closed).
    pub fn detach_journal(&mut self) {
        self.journal = None;
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
    /// `aborted` one is inserted right after an unanswered call), outputs without a call are
    /// dropped, and reasoning from before the latest user message is not sent again.
    pub fn for_prompt(&self) -> Vec<ResponseItem> {
        let answered: HashSet<&str> = self.items.iter().filter_map(output_call_id).collect();
        let called: HashSet<&str> = self.items.iter().filter_map(call_id).collect();
        let last_user = self.items.iter().rposition(is_user_message);
        let mut out = Vec::with_capacity(self.items.len());
        for (index, item) in self.items.iter().enumerate() {
            if matches!(item, ResponseItem::Reasoning { .. })
                && last_user.is_some_and(|last| index < last)
            {
                continue;
            }
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

/// Approximate tokens of an item: 4 bytes of its model-visible JSON per token.
pub fn approx_tokens(item: &ResponseItem) -> u64 {
    serde_json::to_vec(item).map_or(0, |bytes| bytes.len() as u64 / 4)
}

fn is_user_message(item: &ResponseItem) -> bool {
    matches!(item, ResponseItem::Message { role, .. } if *role == crate::model::Role::User)
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
