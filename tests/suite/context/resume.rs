//! Resume after a compaction (issue 6 §5): the resumed thread continues from the compacted
//! history (summary + kept user messages), not the pre-compaction one, while `thread/read`
//! still shows every turn with its items.

use serde_json::json;
use weft_test_support::Transport;

use super::{
    UNDER_THE_LIMIT, assert_summary_between, compact, environment_contexts, item_types, read,
    start_compacting, turns,
};
use crate::persistence::{path_of, rollout_lines};

async fn resume_after_compaction(transport: Transport) {
    const SUMMARY: &str = "SUMMARY-RESUME: the number to remember is 42.";
    let replies = ["Okay, I will remember 42.", SUMMARY, "You told me 42."];
    let (mut p, thread) = start_compacting(transport, replies, UNDER_THE_LIMIT).await;
    let first = p.run_turn(&thread, "remember the number 42").await;
    let (_, compaction) = compact(&mut p.client, &thread).await;
    let before = read(&mut p.client, &thread, true).await;

    p.restart().await;
    let resumed = p
        .client
        .request("thread/resume", json!({"threadId": thread}))
        .await
        .unwrap_or_else(|err| panic!("thread/resume failed: {err}"));
    assert_eq!(resumed["thread"]["id"], thread.as_str());
    assert_eq!(turns(&resumed["thread"]), turns(&before));

    let last = p.run_turn(&thread, "what number did I tell you?").await;
    assert_eq!(last.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(3).await;
    assert_eq!(requests.len(), 3);
    assert!(!super::is_summary_request(&requests[2]));
    assert_summary_between(
        &requests[2],
        "remember the number 42",
        "what number did I tell you?",
        SUMMARY,
    );
    // The compacted history has the environment context in full; nothing changed since, so
    // the resumed thread does not send it again (docs/architecture.md §9.4).
    let contexts = environment_contexts(&requests[2]);
    assert_eq!(
        contexts.len(),
        1,
        "the environment context after compaction and resume: {contexts:#?}"
    );

    // Every turn keeps its items, the compaction turn included.
    let thread_now = read(&mut p.client, &thread, true).await;
    let all = turns(&thread_now);
    let ids: Vec<&str> = all
        .iter()
        .map(|t| t["id"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        ids,
        [
            first.turn_id.as_str(),
            compaction.as_str(),
            last.turn_id.as_str()
        ]
    );
    assert_eq!(item_types(&all[0]), ["userMessage", "agentMessage"]);
    assert_eq!(all[0]["items"][1]["text"], "Okay, I will remember 42.");
    assert_eq!(item_types(&all[1]), ["contextCompaction"]);
    assert_eq!(item_types(&all[2]), ["userMessage", "agentMessage"]);
    for turn in &all {
        assert_eq!(turn["status"], "completed", "{turn}");
    }

    // The rollout says so: one `compacted` record.
    let lines = rollout_lines(&path_of(&thread_now));
    let compacted = lines.iter().filter(|l| l["type"] == "compacted").count();
    assert_eq!(compacted, 1, "one compacted record in the rollout");
}

on_both_transports!(resume_after_compaction);
