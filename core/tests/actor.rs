//! Actor-level tests: input routing answered at once, against the scripted mock model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::{Harness, WAIT, harness, submit, turn_completed};
use weft_core::thread::{CoreError, InputMode, Submitted};
use weft_mock_model::{Gate, Reply};
use weft_protocol::TurnStatus;

/// A thread whose turn, started with "one" in `mode`, has its first model response
/// (`replies[0]`) held at the gate until the test releases it; the model's next response is
/// `replies[1]`.
async fn held_turn(replies: [&str; 2], mode: InputMode) -> (Harness, Gate, weft_protocol::Turn) {
    let h = harness().await;
    let gate = Gate::new();
    h.mock
        .push(Reply::new().gate(&gate).text(replies[0]).responses());
    h.mock.push(Reply::new().text(replies[1]).responses());
    let Submitted::Started(turn) = submit(&h.handle, "one", mode).await.unwrap() else {
        panic!("expected a new turn");
    };
    gate.wait_reached(WAIT).await.unwrap();
    (h, gate, *turn)
}

#[tokio::test]
async fn routing_modes_are_answered_immediately_and_rejections_are_not_queued() {
    let (mut h, gate, turn) = held_turn(["first", "second"], InputMode::StartIfIdle).await;

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
    let (mut h, _gate, turn) = held_turn(["partial", "after steer"], InputMode::StartOrSteer).await;
    let steered = submit(&h.handle, "more", InputMode::StartOrSteer)
        .await
        .unwrap();
    assert_eq!(steered, Submitted::Steered(turn.id.clone()));
    let done = turn_completed(&mut h.events).await;
    assert_eq!(done.id, turn.id);
    let requests = h.mock.wait_for_requests(2, WAIT).await.unwrap();
    assert!(requests[1].body.to_string().contains("more"));
}
