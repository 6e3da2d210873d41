//! The `thread` and `turn` tracing spans (docs/architecture.md §11). A test binary of its own:
//! tracing caches per-callsite interest process-wide, so a span test that shares its process
//! with tests running on other threads can miss its spans.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use support::{harness, submit, turn_completed};
use weft_core::thread::{InputMode, Submitted};
use weft_mock_model::Reply;

/// A span as it was opened.
#[derive(Debug, Clone)]
struct OpenedSpan {
    name: String,
    parent: Option<String>,
    /// `name=value ` for each field, in order.
    fields: String,
}

/// Every span opened while it is the default subscriber.
#[derive(Clone, Default)]
struct SpanLog(Arc<parking_lot::Mutex<Vec<OpenedSpan>>>);

struct FieldText(String);

impl tracing::field::Visit for FieldText {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl<S> tracing_subscriber::Layer<S> for SpanLog
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = FieldText(String::new());
        attrs.record(&mut fields);
        let parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.name().to_string());
        self.0.lock().push(OpenedSpan {
            name: attrs.metadata().name().to_string(),
            parent,
            fields: fields.0,
        });
    }
}

#[tokio::test]
async fn the_actor_runs_in_a_thread_span_and_its_turn_in_a_turn_span() {
    use tracing_subscriber::layer::SubscriberExt;
    let log = SpanLog::default();
    let subscriber = tracing_subscriber::registry().with(log.clone());
    let _default = tracing::subscriber::set_default(subscriber);

    let mut h = harness().await;
    h.mock.push(Reply::new().text("done").responses());
    let Submitted::Started(turn) = submit(&h.handle, "go", InputMode::StartOrSteer)
        .await
        .unwrap()
    else {
        panic!("expected a new turn");
    };
    turn_completed(&mut h.events).await;

    let spans = log.0.lock().clone();
    let thread_id = h.handle.id();
    let thread_fields = format!("thread_id={thread_id} ");
    assert!(
        spans
            .iter()
            .any(|s| s.name == "thread" && s.parent.is_none() && s.fields == thread_fields),
        "{spans:?}"
    );
    let turn_fields = format!(
        "thread_id={thread_id} turn_id={} task=\"regular\" ",
        turn.id
    );
    assert!(
        spans.iter().any(|s| s.name == "turn"
            && s.parent.as_deref() == Some("thread")
            && s.fields == turn_fields),
        "{spans:?}"
    );
}
