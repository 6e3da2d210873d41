//! What a running turn shares with its thread's actor: steered input waiting for the next step
//! boundary, notes for the model (a goal's new objective, docs/protocol.md §7.26), whether the
//! model produced anything, the thread's token totals as the turn last reported them, and the
//! turn's items (see `open_items.rs`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use weft_protocol::{ItemId, ThreadItem, ThreadTokenUsage, UserInput};

use super::open_items::OpenItems;

/// User input waiting to enter the running turn at the next step boundary.
#[derive(Debug, Clone)]
pub struct PendingInput {
    /// The `userMessage` item id minted for it.
    pub item_id: ItemId,
    /// What the user sent.
    pub input: Vec<UserInput>,
    /// `clientUserMessageId`, echoed as the item's `clientId`.
    pub client_id: Option<String>,
}

/// State shared between a running turn and its thread's actor.
#[derive(Debug, Default)]
pub struct TurnShared {
    pending: Mutex<VecDeque<PendingInput>>,
    steered: Notify,
    notes: Mutex<Vec<String>>,
    /// Mail from the thread's agent tree, with whether it asks for a turn.
    mail: Mutex<Vec<(crate::model::ResponseItem, bool)>>,
    produced: AtomicBool,
    items: OpenItems,
    last_agent_message: Mutex<Option<String>>,
    /// The thread's token totals, copied by the turn at each report (the actor's view while
    /// the turn holds the totals, docs/architecture.md §5.1).
    token_usage: Mutex<ThreadTokenUsage>,
    /// What runs inside the turn besides its task (a user's shell command started while it
    /// ran): stopped when the turn's items are sealed.
    auxiliary: Mutex<Vec<CancellationToken>>,
}

impl TurnShared {
    /// The state shared with a turn that starts from the thread's `token_usage`.
    pub fn new(token_usage: ThreadTokenUsage) -> TurnShared {
        TurnShared {
            token_usage: Mutex::new(token_usage),
            ..TurnShared::default()
        }
    }

    /// The thread's token totals as the turn last reported them.
    pub fn token_usage(&self) -> ThreadTokenUsage {
        *self.token_usage.lock()
    }

    pub(crate) fn set_token_usage(&self, usage: ThreadTokenUsage) {
        *self.token_usage.lock() = usage;
    }

    /// Queue steered input and wake the turn.
    pub fn push_pending(&self, input: PendingInput) {
        self.pending.lock().push_back(input);
        self.steered.notify_one();
    }

    /// Whether input is waiting (steered input, or mail that asks for a turn).
    pub fn has_pending(&self) -> bool {
        !self.pending.lock().is_empty() || self.mail.lock().iter().any(|(_, trigger)| *trigger)
    }

    /// Queue mail from the agent tree (docs/agents.md §5), recorded at the next step
    /// boundary. Mail with `trigger` keeps the turn going until it is read.
    pub fn push_mail(&self, item: crate::model::ResponseItem, trigger: bool) {
        self.mail.lock().push((item, trigger));
    }

    /// Take the queued mail, in order.
    pub fn take_mail(&self) -> Vec<crate::model::ResponseItem> {
        self.mail.lock().drain(..).map(|(item, _)| item).collect()
    }

    /// Mail the turn did not read before it ended (the actor keeps it for the next turn).
    pub fn unread_mail(&self) -> Vec<(crate::model::ResponseItem, bool)> {
        std::mem::take(&mut *self.mail.lock())
    }

    /// Take all waiting input.
    pub fn take_pending(&self) -> Vec<PendingInput> {
        self.pending.lock().drain(..).collect()
    }

    /// Queue a note for the model: a user message (no item) recorded at the next step boundary.
    /// It does not wake the turn, and one still queued when the turn ends is dropped.
    pub fn push_note(&self, text: String) {
        self.notes.lock().push(text);
    }

    /// Take the queued notes.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock())
    }

    /// Whether the model produced a message or a tool call in this turn.
    pub fn produced(&self) -> bool {
        self.produced.load(Ordering::Relaxed)
    }

    pub(crate) fn mark_produced(&self) {
        self.produced.store(true, Ordering::Relaxed);
    }

    /// The items the turn has completed so far, in completion order.
    pub fn completed_items(&self) -> Vec<ThreadItem> {
        self.items.completed()
    }

    /// The last agent message's text.
    pub fn last_agent_message(&self) -> Option<String> {
        self.last_agent_message.lock().clone()
    }

    /// Items that were started and never completed (the task was aborted), as they should
    /// complete: commands and file changes `failed`. Also counted among the turn's items; a
    /// late event of the aborted task is dropped afterwards (see [`OpenItems::abandon`]).
    pub fn complete_abandoned(&self, completed_at_ms: i64) -> Vec<ThreadItem> {
        // The turn is over: what still runs inside it stops (its items complete here).
        for auxiliary in self.auxiliary.lock().drain(..) {
            auxiliary.cancel();
        }
        self.items.abandon(completed_at_ms)
    }

    /// Run something inside the turn besides its task: `cancel` fires when the turn ends
    /// (see [`TurnShared::complete_abandoned`]).
    pub fn hold_auxiliary(&self, cancel: CancellationToken) {
        let mut auxiliary = self.auxiliary.lock();
        auxiliary.retain(|token| !token.is_cancelled());
        auxiliary.push(cancel);
    }

    /// The turn's items, open and completed.
    pub(crate) fn items(&self) -> &OpenItems {
        &self.items
    }

    /// Woken by [`TurnShared::push_pending`].
    pub(crate) fn steered(&self) -> &Notify {
        &self.steered
    }

    pub(crate) fn set_last_agent_message(&self, text: String) {
        *self.last_agent_message.lock() = Some(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(id: &str) -> PendingInput {
        PendingInput {
            item_id: ItemId::from(id.to_string()),
            input: Vec::new(),
            client_id: None,
        }
    }

    #[tokio::test]
    async fn steered_input_is_kept_in_order_and_wakes_the_turn() {
        let shared = TurnShared::default();
        assert!(!shared.has_pending());
        shared.push_pending(input("u1"));
        shared.push_pending(input("u2"));
        // The wake-up is stored for the turn's next wait.
        shared.steered().notified().await;
        assert!(shared.has_pending());
        let ids: Vec<String> = shared
            .take_pending()
            .into_iter()
            .map(|p| p.item_id.to_string())
            .collect();
        assert_eq!(ids, ["u1", "u2"]);
        assert!(!shared.has_pending());
    }

    #[test]
    fn what_runs_inside_the_turn_stops_when_its_items_are_sealed() {
        let shared = TurnShared::default();
        let (done, running) = (CancellationToken::new(), CancellationToken::new());
        shared.hold_auxiliary(done.clone());
        done.cancel();
        shared.hold_auxiliary(running.clone());
        assert_eq!(shared.auxiliary.lock().len(), 1, "a finished one is let go");
        assert!(!running.is_cancelled());
        shared.complete_abandoned(0);
        assert!(running.is_cancelled());
        assert!(shared.auxiliary.lock().is_empty());
    }

    #[test]
    fn notes_are_taken_once_and_output_is_remembered() {
        let shared = TurnShared::default();
        shared.push_note("a".into());
        shared.push_note("b".into());
        assert!(!shared.has_pending(), "a note is not user input");
        assert_eq!(shared.take_notes(), ["a", "b"]);
        assert!(shared.take_notes().is_empty());
        assert!(!shared.produced());
        shared.mark_produced();
        assert!(shared.produced());
    }
}
