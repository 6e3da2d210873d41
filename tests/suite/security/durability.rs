//! Rollouts, thread state and the turn loop against bad input (issue 11, items 7, 10, 12):
//! a damaged rollout is refused and left as it was, a model stream with an absurd index fails
//! its turn only, and `turn/start` checks a `cwd` as `thread/start` does. See
//! `docs/architecture.md` §7.6 and §10 and `docs/protocol.md` §7.

use serde_json::{Value, json};
use weft_mock_model::{Reasoning, Reply};
use weft_test_support::Transport;

use crate::persistence::{Persist, ok, read, rollout_files};
use crate::turns::{read_through_turn_completed, text_input};

on_both_transports!(
    name_set_leaves_a_damaged_rollout_as_it_was,
    an_absurd_summary_index_fails_the_turn_only,
    turn_start_checks_cwd_as_thread_start_does,
);

/// Item 10: `thread/name/set` on a stored thread whose header is torn answers an error naming
/// the problem, and the file keeps every byte.
async fn name_set_leaves_a_damaged_rollout_as_it_was(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let thread = p.start_thread().await;
    p.push(Reply::new().text("hello"));
    p.run_turn(&thread, "hi").await;
    p.stop().await;

    let files = rollout_files(p.home.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let path = &files[0];
    let text = std::fs::read_to_string(path).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    assert!(rest.lines().count() > 2, "a turn's lines follow the header");
    // The header torn in the middle; every later line intact.
    let damaged = format!("{}\n{rest}", &header[..header.len() / 2]);
    std::fs::write(path, &damaged).unwrap();

    p.start_again().await;
    let answer = p
        .client
        .request(
            "thread/name/set",
            json!({"threadId": thread, "name": "renamed"}),
        )
        .await;
    let err = answer.expect_err("naming a thread whose rollout has no header");
    assert!(
        err.message.contains("no valid session header"),
        "unexpected error {err:?}"
    );
    assert_eq!(std::fs::read_to_string(path).unwrap(), damaged);
    // The daemon goes on serving.
    ok(&mut p.client, "thread/list", json!({})).await;
}

/// Item 7: `summary_index: 2000000000` from the model ends that turn as failed with a message
/// naming the field (it once made the daemon allocate until it aborted); the thread and the
/// daemon go on.
async fn an_absurd_summary_index_fails_the_turn_only(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let thread = p.start_thread().await;
    p.push(
        Reply::new()
            .raw_event(
                json!({"type": "response.output_item.added", "output_index": 0,
                "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
            )
            .raw_event(json!({"type": "response.reasoning_summary_part.added",
                "item_id": "rs_1", "output_index": 0, "summary_index": 2_000_000_000i64,
                "part": {"type": "summary_text", "text": ""}}))
            .text("never reached"),
    );
    let run = p.run_turn(&thread, "hi").await;
    let turn = run.completed_turn();
    assert_eq!(turn["status"], "failed", "{turn}");
    let message = turn["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("summary_index") && message.contains("2000000000"),
        "{message}"
    );
    assert_eq!(
        p.mock.requests().len(),
        1,
        "a malformed stream is not retried"
    );

    // The same thread runs its next turn; the reasoning bound still lets normal parts through.
    p.push(
        Reply::new()
            .reasoning(Reasoning::new().summary("thinking"))
            .text("fine"),
    );
    let next = p.run_turn(&thread, "again").await;
    assert_eq!(next.completed_turn()["status"], "completed");
}

/// Item 12: a `turn/start` `cwd` that `thread/start` refuses is refused with the same error,
/// and the thread's cwd stays as it was.
async fn turn_start_checks_cwd_as_thread_start_does(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let thread = p.start_thread().await;
    for bad in ["/nonexistent/dir", "relative/path"] {
        let refused = p
            .client
            .request("thread/start", json!({"cwd": bad}))
            .await
            .expect_err("thread/start with a cwd that is not a directory");
        let answer = p
            .client
            .request(
                "turn/start",
                json!({"threadId": thread, "input": [text_input("hi")], "cwd": bad}),
            )
            .await;
        let err = answer.expect_err("turn/start with a cwd that is not a directory");
        assert_eq!((err.code, &err.message), (refused.code, &refused.message));
        assert!(err.message.contains(bad), "{err:?}");
    }
    assert!(p.mock.requests().is_empty(), "no turn ran");
    assert_eq!(read(&mut p.client, &thread, false).await["cwd"], p.cwd());

    // A good cwd is still taken.
    let sub = p.home.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    p.push(Reply::new().text("ok"));
    let id = p
        .client
        .send_request(
            "turn/start",
            json!({"threadId": thread, "input": [text_input("hi")],
                   "cwd": sub.display().to_string()}),
        )
        .await;
    let messages = read_through_turn_completed(&mut p.client).await;
    let response: &Value = messages
        .iter()
        .find(|m| m.get("id") == Some(&id))
        .expect("turn/start response");
    assert!(response.get("error").is_none(), "{response}");
    assert_eq!(
        read(&mut p.client, &thread, false).await["cwd"],
        sub.display().to_string()
    );
}
