//! Each target named in the reviewer's request with its diff, the outcome for the next turn and after a restart, `review_model`.

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::*;
use crate::persistence::Persist;
use crate::tools::start_thread;
use crate::turns::{Harness, assistant_texts, str_at, user_texts};

async fn each_target_is_named_and_carries_its_diff(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let (repo, sha) = repository();
    let cwd = repo.path().display().to_string();
    let thread = start_thread(&mut h.client, &cwd, "never", "workspace-write").await;

    // Uncommitted changes, with findings.
    h.push(Reply::new().text(findings_answer()));
    let messages = run_review(
        &mut h.client,
        &thread,
        json!({"type": "uncommittedChanges"}),
        "current changes",
    )
    .await;
    assert_eq!(outline(&messages), REVIEW_RUN);
    assert_eq!(item(&messages, "exitedReviewMode")["review"], RENDERED);
    assert_eq!(item(&messages, "agentMessage")["text"], RENDERED);
    let done = &messages.last().unwrap()["params"]["turn"];
    assert_eq!(done["status"], "completed");
    assert_eq!(done["items"][0]["text"], RENDERED);
    let asked = reviewer_request(&h.wait_for_requests(1).await[0]);
    assert!(asked.contains("not committed yet"), "{asked}");
    assert!(asked.contains("git diff HEAD"), "{asked}");
    assert!(asked.contains("+not committed"), "{asked}");
    assert!(asked.contains("+untracked file"), "{asked}");

    // The base branch: what the topic branch adds to main.
    h.push(Reply::new().text("Nothing to report."));
    let messages = run_review(
        &mut h.client,
        &thread,
        json!({"type": "baseBranch", "branch": " main "}),
        "changes against 'main'",
    )
    .await;
    // Plain text is the review as it is.
    assert_eq!(
        item(&messages, "exitedReviewMode")["review"],
        "Nothing to report."
    );
    let asked = reviewer_request(&h.wait_for_requests(2).await[1]);
    assert!(asked.contains("base branch 'main'"), "{asked}");
    assert!(asked.contains("+changed on topic"), "{asked}");

    // A commit, with its title.
    h.push(Reply::new().text("{}"));
    let hint = format!("commit {}: topic work", &sha[..7]);
    let messages = run_review(
        &mut h.client,
        &thread,
        json!({"type": "commit", "sha": sha, "title": "topic work"}),
        &hint,
    )
    .await;
    // Not the whole format: the text as it is.
    assert_eq!(item(&messages, "exitedReviewMode")["review"], "{}");
    let asked = reviewer_request(&h.wait_for_requests(3).await[2]);
    assert!(
        asked.contains(&format!("commit {sha} (\"topic work\")")),
        "{asked}"
    );
    assert!(asked.contains(&format!("git show {sha}")), "{asked}");
    assert!(
        asked.contains("    topic work"),
        "the commit's message: {asked}"
    );

    // Custom instructions: the request is the instructions, without a diff.
    h.push(Reply::new().text("The wording is fine."));
    run_review(
        &mut h.client,
        &thread,
        json!({"type": "custom", "instructions": "Check the wording of a.txt"}),
        "Check the wording of a.txt",
    )
    .await;
    let asked = reviewer_request(&h.wait_for_requests(4).await[3]);
    assert_eq!(asked, "Check the wording of a.txt");
}

async fn the_next_turn_sees_the_review_and_a_restart_keeps_it(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let (repo, _) = repository();
    let thread = p
        .start_thread_with(json!({"cwd": repo.path(), "approvalPolicy": "never"}))
        .await;
    p.push(Reply::new().text(findings_answer()));
    let messages = run_review(
        &mut p.client,
        &thread,
        json!({"type": "uncommittedChanges"}),
        "current changes",
    )
    .await;
    let review_turn = str_at(&messages[0], "/result/turn/id");
    p.push(Reply::new().text("I will fix it."));
    let next = p.run_turn(&thread, "fix what the review found").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    let requests = p
        .mock
        .wait_for_requests(2, weft_test_support::DEFAULT_TIMEOUT)
        .await
        .unwrap();
    let users = user_texts(&requests[1]);
    let told = users
        .iter()
        .find(|t| t.starts_with("<user_action>"))
        .unwrap_or_else(|| panic!("no review outcome for the next turn: {users:?}"));
    assert!(told.contains("Guard the empty list"), "{told}");
    assert!(told.contains("/repo/a.txt:2-3"), "{told}");
    assert!(assistant_texts(&requests[1]).contains(&RENDERED.to_string()));
    // The reviewer's own conversation is not the thread's.
    assert!(
        !users.iter().any(|t| t.contains("not committed yet")),
        "{users:?}"
    );
    assert!(
        requests[1].body["instructions"]
            .as_str()
            .is_some_and(|i| !i.starts_with("You are reviewing"))
    );

    p.restart().await;
    let read = p
        .client
        .request_ok(
            "thread/read",
            json!({"threadId": thread, "includeTurns": true}),
        )
        .await;
    let turn = read["thread"]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == review_turn.as_str())
        .unwrap_or_else(|| panic!("no review turn after the restart: {read}"))
        .clone();
    assert_eq!(turn["status"], "completed");
    let kinds: Vec<&str> = turn["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "enteredReviewMode",
            "userMessage",
            "exitedReviewMode",
            "agentMessage"
        ],
        "{turn}"
    );
    assert_eq!(turn["items"][2]["review"], RENDERED);
    // The thread is previewed by the review's request.
    assert!(
        read["thread"]["preview"]
            .as_str()
            .is_some_and(|p| p.contains("not committed yet")),
        "{read}"
    );
    let page = p
        .client
        .request_ok(
            "thread/items/list",
            json!({"threadId": thread, "turnId": review_turn}),
        )
        .await;
    assert!(page.to_string().contains("exitedReviewMode"), "{page}");
}

async fn review_model_is_the_reviewers(transport: Transport) {
    let mut p = Persist::with_config(transport, "review_model = \"mock-reviewer\"").await;
    let config = p.client.request_ok("config/read", json!({})).await;
    assert_eq!(
        config["config"]["review_model"], "mock-reviewer",
        "{config}"
    );
    assert_eq!(
        config["config"]["review"],
        json!({"max_diff_bytes": 16384, "diff_timeout_ms": 5000}),
        "{config}"
    );
    let thread = p.start_thread().await;
    p.push(Reply::new().text("Fine."));
    run_review(
        &mut p.client,
        &thread,
        json!({"type": "custom", "instructions": "look"}),
        "look",
    )
    .await;
    p.push(Reply::new().text("ok"));
    p.run_turn(&thread, "and now").await;
    let requests = p
        .mock
        .wait_for_requests(2, weft_test_support::DEFAULT_TIMEOUT)
        .await
        .unwrap();
    assert_eq!(requests[0].body["model"], "mock-reviewer");
    assert_eq!(requests[1].body["model"], "mock-model");
}

on_both_transports!(
    each_target_is_named_and_carries_its_diff,
    the_next_turn_sees_the_review_and_a_restart_keeps_it,
    review_model_is_the_reviewers,
);
