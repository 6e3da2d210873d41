//! The `thread` and `turn` tracing spans (docs/architecture.md §11). A test binary of its own:
//! tracing caches per-callsite interest process-wide, so a span test that shares its process
//! with tests running on other threads can miss its spans.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use weft_core::config::Config;
use weft_core::events::{EventSink, Reply, ServerRequestOutcome, ServerRequestParams, ThreadEvent};
use weft_core::thread::{
    InputMode, Op, StartThreadOptions, Submitted, ThreadManager, TurnOverrides,
};
use weft_mock_model::{MockModel, Reply as ModelReply};
use weft_protocol::{ThreadId, UserInput};

const WAIT: Duration = Duration::from_secs(10);

struct ChannelSink(mpsc::UnboundedSender<ThreadEvent>);

impl EventSink for ChannelSink {
    fn emit<'a>(&'a self, _thread: &'a ThreadId, event: ThreadEvent) -> BoxFuture<'a, ()> {
        let _ = self.0.send(event);
        Box::pin(async {})
    }

    fn request<'a>(
        &'a self,
        _thread: &'a ThreadId,
        _params: ServerRequestParams,
    ) -> BoxFuture<'a, ServerRequestOutcome> {
        Box::pin(async { ServerRequestOutcome::Cancelled })
    }
}

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

    let mock = MockModel::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let overrides = vec![
        "model_provider=\"mock\"".to_string(),
        "model_providers.mock.name=\"mock\"".to_string(),
        format!("model_providers.mock.base_url=\"{}\"", mock.base_url()),
    ];
    let (config, _) = Config::load(home.path(), &overrides).unwrap();
    let manager = ThreadManager::new(Arc::new(config));
    let (tx, mut events) = mpsc::unbounded_channel();
    let options = StartThreadOptions {
        cwd: Some(home.path().to_path_buf()),
        ..StartThreadOptions::default()
    };
    let (handle, _) = manager
        .start_thread(options, Arc::new(ChannelSink(tx)))
        .await
        .unwrap();
    mock.push(ModelReply::new().text("done").responses());
    let (reply, rx) = Reply::channel();
    handle
        .send(Op::Submit {
            input: vec![UserInput::text("go")],
            mode: InputMode::StartOrSteer,
            overrides: TurnOverrides::default(),
            client_id: None,
            reply,
        })
        .await
        .unwrap();
    let Submitted::Started(turn) = tokio::time::timeout(WAIT, rx)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
    else {
        panic!("expected a new turn");
    };
    loop {
        let event = tokio::time::timeout(WAIT, events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(event, ThreadEvent::TurnCompleted(_)) {
            break;
        }
    }

    let spans = log.0.lock().clone();
    let thread_id = handle.id();
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
