//! What the core's integration tests share: a thread manager on the scripted mock model,
//! one thread started on it, and the round trips of its input.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use weft_core::config::Config;
use weft_core::events::{ChannelSink, Reply, ThreadEvent};
use weft_core::thread::{
    CoreError, InputMode, Op, StartThreadOptions, Submitted, ThreadHandle, ThreadManager,
    TurnOverrides,
};
use weft_mock_model::MockModel;
use weft_protocol::UserInput;

/// How long a test waits for anything.
pub const WAIT: Duration = Duration::from_secs(10);

/// One thread on the mock model, with the events it emits.
pub struct Harness {
    pub mock: MockModel,
    pub handle: ThreadHandle,
    pub events: mpsc::UnboundedReceiver<ThreadEvent>,
    _home: tempfile::TempDir,
}

/// Start a thread (in a home of its own) whose model is a fresh mock.
pub async fn harness() -> Harness {
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

/// Submit `text` in `mode` and wait for the answer.
pub async fn submit(
    handle: &ThreadHandle,
    text: &str,
    mode: InputMode,
) -> Result<Submitted, CoreError> {
    let (reply, rx) = Reply::channel();
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

/// Wait for the next turn to complete.
pub async fn turn_completed(
    events: &mut mpsc::UnboundedReceiver<ThreadEvent>,
) -> weft_protocol::Turn {
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
