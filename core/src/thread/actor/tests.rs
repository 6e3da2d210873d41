//! Actor-level tests: input routing answered at once, against the scripted mock model.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use weft_mock_model::{Gate, MockModel, Reply};
use weft_protocol::{ThreadId, TurnStatus, UserInput};

use crate::config::Config;
use crate::events::{EventSink, Reply as CoreReply, ThreadEvent};
use crate::thread::{
    CoreError, InputMode, Op, StartThreadOptions, Submitted, ThreadHandle, ThreadManager,
    TurnOverrides,
};

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
        _params: crate::events::ServerRequestParams,
    ) -> BoxFuture<'a, crate::events::ServerRequestOutcome> {
        Box::pin(async { crate::events::ServerRequestOutcome::Cancelled })
    }
}

struct Harness {
    mock: MockModel,
    handle: ThreadHandle,
    events: mpsc::UnboundedReceiver<ThreadEvent>,
    _home: tempfile::TempDir,
}

async fn harness() -> Harness {
    let mock = MockModel::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let overrides = vec![
        "model_provider=\"mock\"".to_string(),
        "model_providers.mock.name=\"mock\"".to_string(),
        format!("model_providers.mock.base_url=\"{}\"", mock.base_url()),
    ];
    let (config, _) = Config::load(home.path(), &overrides).unwrap();
    let manager = ThreadManager::new(Arc::new(config));
    let (tx, events) = mpsc::unbounded_channel();
    let options = StartThreadOptions {
        cwd: Some(home.path().to_path_buf()),
        ..StartThreadOptions::default()
    };
    let (handle, _) = manager
        .start_thread(options, Arc::new(ChannelSink(tx)))
        .await
        .unwrap();
    Harness {
        mock,
        handle,
        events,
        _home: home,
    }
}

async fn submit(
    handle: &ThreadHandle,
    text: &str,
    mode: InputMode,
) -> Result<Submitted, CoreError> {
    let (reply, rx) = CoreReply::channel();
    handle
        .send(Op::Submit {
            input: vec![UserInput::text(text)],
            mode,
            overrides: TurnOverrides::default(),
            client_id: None,
            reply,
        })
        .await
        .unwrap();
    tokio::time::timeout(WAIT, rx).await.unwrap().unwrap()
}

async fn turn_completed(events: &mut mpsc::UnboundedReceiver<ThreadEvent>) -> weft_protocol::Turn {
    loop {
        match tokio::time::timeout(WAIT, events.recv())
            .await
            .unwrap()
            .unwrap()
        {
            ThreadEvent::TurnCompleted(turn) => return turn,
            _ => continue,
        }
    }
}

#[tokio::test]
async fn routing_modes_are_answered_immediately_and_rejections_are_not_queued() {
    let mut h = harness().await;
    let gate = Gate::new();
    h.mock
        .push(Reply::new().gate(&gate).text("first").responses());
    h.mock.push(Reply::new().text("second").responses());

    let Submitted::Started(turn) = submit(&h.handle, "one", InputMode::StartIfIdle)
        .await
        .unwrap()
    else {
        panic!("expected a new turn");
    };
    gate.wait_reached(WAIT).await.unwrap();

    // StartIfIdle on a busy thread: rejected, never queued.
    let busy = submit(&h.handle, "REJECTED-INPUT-1", InputMode::StartIfIdle)
        .await
        .unwrap_err();
    assert!(matches!(busy, CoreError::Busy(_)));
    // Steer with the wrong expected id: rejected.
    let mismatch = submit(
        &h.handle,
        "REJECTED-INPUT-2",
        InputMode::Steer {
            expected_turn_id: "nope".into(),
        },
    )
    .await
    .unwrap_err();
    assert_eq!(
        mismatch.to_string(),
        format!("expected active turn id `nope` but found `{}`", turn.id)
    );

    gate.release();
    let done = turn_completed(&mut h.events).await;
    assert_eq!(done.id, turn.id);
    assert_eq!(done.status, TurnStatus::Completed);
    // Only one model request: nothing rejected was recorded or queued.
    assert_eq!(h.mock.requests().len(), 1);
    let inputs = serde_json::to_string(&h.mock.requests()[0].body).unwrap();
    assert!(!inputs.contains("REJECTED-INPUT"));

    // Idle: steering is refused, StartOrSteer starts a turn.
    let idle = submit(
        &h.handle,
        "x",
        InputMode::Steer {
            expected_turn_id: turn.id.to_string(),
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(idle, CoreError::NoActiveTurnToSteer), "{idle:?}");
    assert!(matches!(
        submit(&h.handle, "two", InputMode::StartOrSteer)
            .await
            .unwrap(),
        Submitted::Started(_)
    ));
    turn_completed(&mut h.events).await;
    let second = h.mock.requests()[1].body.to_string();
    assert!(second.contains("second") || second.contains("two"));
    assert!(!second.contains("REJECTED-INPUT"));
}

#[tokio::test]
async fn start_or_steer_on_a_busy_thread_joins_the_running_turn() {
    let mut h = harness().await;
    let gate = Gate::new();
    h.mock
        .push(Reply::new().gate(&gate).text("partial").responses());
    h.mock.push(Reply::new().text("after steer").responses());
    let Submitted::Started(turn) = submit(&h.handle, "one", InputMode::StartOrSteer)
        .await
        .unwrap()
    else {
        panic!("expected a new turn");
    };
    gate.wait_reached(WAIT).await.unwrap();
    let steered = submit(&h.handle, "more", InputMode::StartOrSteer)
        .await
        .unwrap();
    assert_eq!(steered, Submitted::Steered(turn.id.clone()));
    let done = turn_completed(&mut h.events).await;
    assert_eq!(done.id, turn.id);
    let requests = h.mock.wait_for_requests(2, WAIT).await.unwrap();
    assert!(requests[1].body.to_string().contains("more"));
}
