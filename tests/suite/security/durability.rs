//! Rollouts, thread state and the turn loop against bad input (issue 11, items 7, 10, 12):
//! a damaged rollout is refused and left as it was, a model stream with an absurd index fails
//! its turn only, and `turn/start` checks a `cwd` as `thread/start` does. See
//! `docs/architecture.md` §7.6 and §10 and `docs/protocol.md` §7.

use serde_json::{Value, json};
use weft_mock_model::{Reasoning, Reply};
use weft_test_support::Transport;

use crate::persistence::{Persist, ok, read, rollout_files};
use crate::requests::Requests;
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
    let answer = p.client.set_name(&thread, "renamed").await;
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
    let message = run.failure_message();
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

/// A small tmpfs mounted over a directory for one test (the suite runs as root), unmounted
/// (lazily, so an fd the daemon still holds cannot block it) when dropped.
struct SmallDisk {
    dir: std::path::PathBuf,
}

impl SmallDisk {
    fn mount(dir: &std::path::Path, size: &str) -> SmallDisk {
        std::fs::create_dir_all(dir).unwrap();
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .expect("run mount");
        assert!(status.success(), "mount a tmpfs on {}", dir.display());
        SmallDisk {
            dir: dir.to_path_buf(),
        }
    }

    /// Write a filler file until the disk is full; returns its path.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let path = self.dir.join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let chunk = [0u8; 512];
        while file.write_all(&chunk).is_ok() {}
        let _ = file.write_all(&[0u8; 1]);
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.dir)
            .status();
    }
}

on_both_transports!(a_full_disk_fails_the_turn_and_holds_the_thread_until_it_drains);

/// Item 5: with `$WEFT_HOME/sessions` full, the turn whose records cannot be written is
/// reported `failed` with an `error` notification, and the thread refuses new turns with a
/// clear error; once there is room again everything held is written, in order, and a restart
/// finds every turn.
async fn a_full_disk_fails_the_turn_and_holds_the_thread_until_it_drains(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let disk = SmallDisk::mount(&p.home.path().join("sessions"), "256k");
    let thread = p.start_thread().await;
    p.push(Reply::new().text("first answer"));
    assert_eq!(
        p.run_turn(&thread, "first").await.completed_turn()["status"],
        "completed"
    );

    let filler = disk.fill();
    p.push(Reply::new().text("second answer"));
    let run = p.run_turn(&thread, "second").await;
    let message = run.failure_message();
    assert!(
        message.contains("could not be saved") && message.contains("No space left"),
        "{message}"
    );
    let errors = run.notifications("error");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0]["params"]["error"]["message"], message);

    let refused = p
        .client
        .turn_start(&thread, "third")
        .await
        .expect_err("a new turn while the rollout cannot be written");
    assert!(
        refused
            .message
            .contains("cannot start a turn until its rollout can be written again"),
        "{refused:?}"
    );
    assert_eq!(p.mock.requests().len(), 2, "the refused turn never ran");

    std::fs::remove_file(filler).unwrap();
    p.push(Reply::new().text("third answer"));
    assert_eq!(
        p.run_turn(&thread, "third").await.completed_turn()["status"],
        "completed"
    );

    p.restart().await;
    let stored = ok(
        &mut p.client,
        "thread/read",
        json!({"threadId": thread, "includeTurns": true}),
    )
    .await;
    let turns = stored["thread"]["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 3, "{turns:#?}");
    let texts = stored["thread"]["turns"].to_string();
    for text in ["first answer", "second answer", "third answer"] {
        assert!(texts.contains(text), "{text} missing from {texts}");
    }
    p.stop().await;
    drop(disk);
}
