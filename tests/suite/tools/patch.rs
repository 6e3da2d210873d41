//! `apply_patch` end to end: verification failures write nothing, moves and deletes, the
//! freeform variant, and the `fileChange` item and turn diff.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{Tools, completed_item};

#[tokio::test]
async fn a_patch_that_fails_verification_writes_nothing() {
    let mut t = Tools::start(Transport::Stdio).await;
    t.write("keep.txt", "one\ntwo\n");
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+new\n*** Delete File: keep.txt\n*** Update File: keep.txt\n@@\n-three\n+four\n*** End Patch\n";
    let run = t
        .patch_turn("workspace-write", "call_bad", patch, "That did not apply.")
        .await;
    // Nothing was written, and no fileChange item was shown for a patch that never applied.
    assert!(!t.path("new.txt").exists());
    assert_eq!(t.read("keep.txt"), "one\ntwo\n");
    assert!(run.completed_items_of("fileChange").is_empty());
    assert!(run.notifications("turn/diff/updated").is_empty());
    let output = t.h.output_in(2, "call_bad").await;
    assert!(
        output.starts_with("apply_patch verification failed: "),
        "{output}"
    );
    t.finish().await;
}

async fn a_patch_with_a_move_and_a_delete(transport: Transport) {
    let mut t = Tools::start(transport).await;
    t.write("src.txt", "fn one() {}\nfn two() {}\n");
    t.write("old.txt", "obsolete\n");
    let patch = "*** Begin Patch\n*** Update File: src.txt\n*** Move to: lib/moved.txt\n@@\n fn one() {}\n-fn two() {}\n+fn three() {}\n*** Delete File: old.txt\n*** End Patch\n";
    let run = t
        .patch_turn("workspace-write", "call_move", patch, "Moved and deleted.")
        .await;
    assert!(!t.path("src.txt").exists());
    assert!(!t.path("old.txt").exists());
    assert_eq!(t.read("lib/moved.txt"), "fn one() {}\nfn three() {}\n");
    let item = completed_item(&run.messages, "call_move");
    assert_eq!(item["status"], "completed");
    let moved = t.path("lib/moved.txt").display().to_string();
    assert_eq!(
        item["changes"],
        json!([
            {"path": t.path("src.txt").display().to_string(),
             "kind": {"type": "update", "move_path": moved},
             "diff": format!("@@ -1,2 +1,2 @@\n fn one() {{}}\n-fn two() {{}}\n+fn three() {{}}\n\n\nMoved to: {moved}")},
            {"path": t.path("old.txt").display().to_string(),
             "kind": {"type": "delete"},
             "diff": "obsolete\n"}
        ])
    );
    let diffs = run.notifications("turn/diff/updated");
    assert_eq!(diffs.len(), 1);
    let diff = diffs[0]["params"]["diff"].as_str().unwrap();
    assert!(
        diff.contains("diff --git a/old.txt b/old.txt\ndeleted file mode"),
        "{diff}"
    );
    assert!(
        diff.contains("diff --git a/src.txt b/lib/moved.txt\n"),
        "{diff}"
    );
    let output: Value = serde_json::from_str(&t.h.output_in(2, "call_move").await).unwrap();
    assert_eq!(
        output["output"],
        "Success. Updated the following files:\nM lib/moved.txt\nD old.txt\n"
    );
    t.finish().await;
}

/// A model that calls `apply_patch` as a custom (freeform) tool is served too, and answered
/// with a `custom_tool_call_output` in the reference's text form.
#[tokio::test]
async fn the_freeform_variant_is_accepted() {
    let mut t = Tools::start(Transport::Stdio).await;
    t.push(Reply::new().custom_tool_call(
        "call_free",
        "apply_patch",
        "*** Begin Patch\n*** Add File: hello.txt\n+hello from apply_patch\n*** End Patch\n",
    ));
    t.push(Reply::new().text("Patched."));
    let thread = t.thread("never", "workspace-write").await;
    let run = t.h.run_turn(&thread, "add a hello file").await;
    assert_eq!(t.read("hello.txt"), "hello from apply_patch\n");
    let item = completed_item(&run.messages, "call_free");
    assert_eq!(
        item["changes"],
        json!([{"path": t.path("hello.txt").display().to_string(),
                "kind": {"type": "add"}, "diff": "hello from apply_patch\n"}])
    );
    let diff = run.notifications("turn/diff/updated")[0]["params"]["diff"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        diff,
        "diff --git a/hello.txt b/hello.txt\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..86ddfb8cbbf96928cb6ee38b9174645983db4797\n--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello from apply_patch\n"
    );
    let requests = t.h.wait_for_requests(2).await;
    let output = requests[1]
        .inputs_of_type("custom_tool_call_output")
        .find(|i| i["call_id"] == "call_free")
        .expect("a custom_tool_call_output");
    let text = output["output"].as_str().unwrap();
    assert!(text.starts_with("Exit code: 0\nWall time: "), "{text}");
    assert!(
        text.ends_with(" seconds\nOutput:\nSuccess. Updated the following files:\nA hello.txt\n"),
        "{text}"
    );
    t.finish().await;
}

on_both_transports!(a_patch_with_a_move_and_a_delete);
