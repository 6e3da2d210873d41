//! Plan mode's stream (docs/protocol.md §7.25): one sampling attempt's agent messages split
//! by [`PlanParser`] into the message's own text and the proposed plan, as the reference does.
//!
//! * An agent message announced by the model is shown (`item/started`) only once it has text
//!   of its own that is not blank (blanks before it are held and sent with it), so a message
//!   that is nothing but a plan never shows up as an empty message.
//! * The plan is one `plan` item per attempt, id `<turn id>-plan`: started at the first plan
//!   line, its text streamed as `item/plan/delta`; when the message is done the item completes
//!   with the text of the message's last plan block. A second plan in the same attempt adds
//!   nothing once the first has completed.
//! * The message completes with its text without the plan blocks; a message whose text is
//!   then blank completes no item. History keeps the message as the model wrote it.

use std::collections::{HashMap, HashSet};

use weft_protocol::{AgentMessageItem, ItemId, PlanItem, ThreadItem};

use super::proposed_plan::{PlanParser, PlanSegment, plan_text, strip_plan};
use super::{TurnContext, complete_item, emit, start_item};
use crate::events::ThreadEvent;
use crate::time::now_ms;

/// The plan-mode state of one sampling attempt.
pub(super) struct PlanStream {
    /// The plan item's id.
    plan_id: String,
    /// When the plan item started, once it has.
    plan_started: Option<i64>,
    /// The plan item has completed.
    plan_completed: bool,
    /// Each streaming message's parser.
    parsers: HashMap<String, PlanParser>,
    /// Messages announced and not shown yet, with when they were announced.
    pending: HashMap<String, i64>,
    /// Messages shown (started) and not completed yet.
    shown: HashSet<String>,
    /// Blank text of a message not shown yet.
    blanks: HashMap<String, String>,
}

impl PlanStream {
    pub(super) fn new(turn_id: &str) -> PlanStream {
        PlanStream {
            plan_id: format!("{turn_id}-plan"),
            plan_started: None,
            plan_completed: false,
            parsers: HashMap::new(),
            pending: HashMap::new(),
            shown: HashSet::new(),
            blanks: HashMap::new(),
        }
    }

    /// `response.output_item.added` of an assistant message: held until it has text.
    pub(super) fn announce(&mut self, item_id: &str) {
        if !self.shown.contains(item_id) {
            self.pending
                .entry(item_id.to_string())
                .or_insert_with(now_ms);
        }
    }

    /// A text delta of a message.
    pub(super) async fn delta(&mut self, ctx: &TurnContext, item_id: &str, delta: &str) {
        let segments = self
            .parsers
            .entry(item_id.to_string())
            .or_default()
            .push(delta);
        self.segments(ctx, item_id, segments).await;
    }

    /// `response.output_item.done` of a message whose whole text is `text`: the rest of its
    /// stream, the plan item's completion, and the message's start if it has text of its
    /// own. Returns when the message started and the text it completes with, or `None` when
    /// it completes no item.
    pub(super) async fn done(
        &mut self,
        ctx: &TurnContext,
        item_id: &str,
        text: &str,
    ) -> Option<(i64, String)> {
        if let Some(mut parser) = self.parsers.remove(item_id) {
            let rest = parser.finish();
            self.segments(ctx, item_id, rest).await;
        }
        if let Some(plan) = plan_text(text) {
            self.start_plan(ctx).await;
            self.complete_plan(ctx, plan).await;
        }
        let visible = strip_plan(text);
        self.blanks.remove(item_id);
        if visible.trim().is_empty() {
            self.pending.remove(item_id);
            self.shown.remove(item_id);
            return None;
        }
        let started = self.show(ctx, item_id).await;
        self.shown.remove(item_id);
        Some((started, visible))
    }

    /// The response completed: the text still held by messages that never finished.
    pub(super) async fn flush(&mut self, ctx: &TurnContext) {
        let mut parsers: Vec<(String, PlanParser)> = self.parsers.drain().collect();
        parsers.sort_by(|a, b| a.0.cmp(&b.0));
        for (item_id, mut parser) in parsers {
            let rest = parser.finish();
            self.segments(ctx, &item_id, rest).await;
        }
    }

    async fn segments(&mut self, ctx: &TurnContext, item_id: &str, segments: Vec<PlanSegment>) {
        for segment in segments {
            match segment {
                PlanSegment::Text(text) => self.message_text(ctx, item_id, text).await,
                PlanSegment::PlanStart => {
                    if !self.plan_completed {
                        self.start_plan(ctx).await;
                    }
                }
                PlanSegment::PlanDelta(delta) => {
                    if !self.plan_completed && !delta.is_empty() {
                        self.start_plan(ctx).await;
                        let event = ThreadEvent::PlanDelta {
                            turn_id: ctx.turn_id.clone(),
                            item_id: self.plan_id.clone(),
                            delta,
                        };
                        emit(ctx, event).await;
                    }
                }
                PlanSegment::PlanEnd => {}
            }
        }
    }

    /// Text of the message itself: shown once it is not blank.
    async fn message_text(&mut self, ctx: &TurnContext, item_id: &str, text: String) {
        if text.is_empty() {
            return;
        }
        let delta = if self.shown.contains(item_id) {
            text
        } else if text.chars().all(char::is_whitespace) {
            self.blanks
                .entry(item_id.to_string())
                .or_default()
                .push_str(&text);
            return;
        } else {
            let mut held = self.blanks.remove(item_id).unwrap_or_default();
            held.push_str(&text);
            self.show(ctx, item_id).await;
            held
        };
        let event = ThreadEvent::AgentMessageDelta {
            turn_id: ctx.turn_id.clone(),
            item_id: item_id.to_string(),
            delta,
        };
        emit(ctx, event).await;
    }

    /// Start the message's item if it has not started; when it started.
    async fn show(&mut self, ctx: &TurnContext, item_id: &str) -> i64 {
        if let Some(open) = ctx.shared.items().get(item_id) {
            self.shown.insert(item_id.to_string());
            return open.started_at_ms.unwrap_or_default();
        }
        let started = self.pending.remove(item_id).unwrap_or_else(now_ms);
        let mut item = ThreadItem::from(AgentMessageItem::new(item_id.to_string(), ""));
        item.started_at_ms = Some(started);
        start_item(ctx, item).await;
        self.shown.insert(item_id.to_string());
        started
    }

    async fn start_plan(&mut self, ctx: &TurnContext) {
        if self.plan_started.is_some() || self.plan_completed {
            return;
        }
        let started = now_ms();
        self.plan_started = Some(started);
        let mut item = self.plan_item(String::new());
        item.started_at_ms = Some(started);
        start_item(ctx, item).await;
    }

    async fn complete_plan(&mut self, ctx: &TurnContext, text: String) {
        let Some(started) = self.plan_started else {
            return;
        };
        if self.plan_completed {
            return;
        }
        self.plan_completed = true;
        let mut item = self.plan_item(text);
        item.started_at_ms = Some(started);
        item.completed_at_ms = Some(now_ms());
        complete_item(ctx, item).await;
    }

    fn plan_item(&self, text: String) -> ThreadItem {
        ThreadItem::from(PlanItem {
            id: ItemId::from(self.plan_id.clone()),
            text,
        })
    }
}
