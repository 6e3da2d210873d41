//! apply_patch through the runtime: items, the turn diff, failed verification, the writable roots.

use super::*;

const ADD_PATCH: &str = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n";

#[tokio::test]
async fn apply_patch_items_and_the_turn_diff() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, workspace_write());
    let text = f.patch(&turn, "p1", ADD_PATCH).await;
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value["output"],
        "Success. Updated the following files:\nA hello.txt\n"
    );
    assert_eq!(value["metadata"]["exit_code"], 0);
    assert_eq!(
        std::fs::read_to_string(f.cwd().join("hello.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        f.sink.labels(),
        ["started:fileChange", "completed:fileChange", "diff"]
    );
    let item = file_change(&f.sink.completed()[0]).clone();
    assert_eq!(item.status, PatchApplyStatus::Completed);
    assert_eq!(item.changes.len(), 1);
    assert_eq!(item.changes[0].diff, "hello\n");

    // A second patch (freeform) in the same turn: the diff covers both.
    let update = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello world\n*** Add File: b.txt\n+b\n*** End Patch";
    let text = f.custom(&turn, "p2", "apply_patch", update).await;
    assert!(
        text.starts_with("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA b.txt\nM hello.txt\n"),
        "{text}"
    );
    let diff = f
        .sink
        .seen()
        .into_iter()
        .rev()
        .find_map(|s| match s {
            Seen::Event(ThreadEvent::TurnDiffUpdated { diff, .. }) => Some(diff),
            _ => None,
        })
        .unwrap();
    assert!(diff.contains("diff --git a/b.txt b/b.txt"), "{diff}");
    assert!(
        diff.contains("diff --git a/hello.txt b/hello.txt"),
        "{diff}"
    );
    assert!(diff.contains("+hello world"), "{diff}");
}

#[tokio::test]
async fn a_patch_that_fails_verification_writes_nothing() {
    let f = Fixture::new();
    std::fs::write(f.cwd().join("a.txt"), "one\n").unwrap();
    let turn = f.turn(AskForApproval::Never, full_access());
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: a.txt\n@@\n-missing\n+y\n*** End Patch";
    let text = f.patch(&turn, "p1", patch).await;
    assert!(
        text.starts_with("apply_patch verification failed: Failed to find expected lines"),
        "{text}"
    );
    assert!(!f.cwd().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(f.cwd().join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(f.sink.labels().is_empty());
}

#[tokio::test]
async fn patches_outside_the_roots() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("out.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch",
        target.display()
    );
    // never: refused, nothing asked, nothing written.
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, workspace_write());
    let text = f.patch(&turn, "p1", &patch).await;
    assert!(
        text.starts_with("patch rejected: writing outside of the sandbox's writable roots"),
        "{text}"
    );
    assert!(!target.exists());
    // on-request: asks; decline writes nothing; acceptForSession writes and is remembered.
    let turn = f.turn(AskForApproval::OnRequest, workspace_write());
    f.sink.answer(accept("decline"));
    let text = f.patch(&turn, "p2", &patch).await;
    assert_eq!(text, PATCH_REJECTED);
    assert!(!target.exists());
    assert_eq!(
        f.sink.labels(),
        [
            "started:fileChange",
            "status:waiting",
            "request:fileChange",
            "status:active",
            "completed:fileChange"
        ]
    );
    assert_eq!(
        file_change(&f.sink.completed()[0]).status,
        PatchApplyStatus::Declined
    );
    f.sink.answer(accept("acceptForSession"));
    f.patch(&turn, "p3", &patch).await;
    assert!(target.exists());
    assert_eq!(f.sink.requests(), 2);
    std::fs::remove_file(&target).unwrap();
    f.patch(&turn, "p4", &patch).await;
    assert!(target.exists());
    assert_eq!(f.sink.requests(), 2, "approved for the session");
    // Inside the workspace nothing is asked under on-request.
    f.patch(&turn, "p5", ADD_PATCH).await;
    assert_eq!(f.sink.requests(), 2);
    // untrusted asks for every patch.
    let turn = f.turn(AskForApproval::Untrusted, workspace_write());
    f.sink.answer(accept("cancel"));
    let text = f.patch(&turn, "p6", ADD_PATCH).await;
    assert_eq!(text, PATCH_REJECTED);
    assert!(f.cancel.is_cancelled());
}
