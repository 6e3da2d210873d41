//! Planning and applying patches on disk: outcomes, diffs, verification, roots, symlinks and
//! the turn diff.

use super::*;

#[test]
fn success_text_lists_added_modified_deleted() {
    let dir = Dir::with(&[
        ("mod.txt", "a\n"),
        ("old/name.txt", "n\n"),
        ("gone.txt", "g\n"),
    ]);
    let patch = wrap(
        "*** Delete File: gone.txt\n*** Update File: mod.txt\n@@\n-a\n+b\n\
         *** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-n\n+N\n\
         *** Add File: new/nested.txt\n+hello",
    );
    let plan = dir.plan(&patch).unwrap();
    let outcome = apply_plan(&plan).unwrap();
    let want = "Success. Updated the following files:\nA new/nested.txt\nM mod.txt\n\
                M renamed/dir/name.txt\nD gone.txt\n";
    assert_eq!(outcome.success_text(), want);
    assert_eq!(plan.success_text(), want);
    assert_eq!(dir.read("mod.txt").as_deref(), Some("b\n"));
    assert_eq!(dir.read("renamed/dir/name.txt").as_deref(), Some("N\n"));
    assert_eq!(dir.read("old/name.txt"), None);
    assert_eq!(dir.read("gone.txt"), None);
    assert_eq!(dir.read("new/nested.txt").as_deref(), Some("hello\n"));
}

#[test]
fn file_change_diffs_follow_the_protocol() {
    let dir = Dir::with(&[
        ("u.txt", "1\n2\n3\n4\n5\n"),
        ("d.txt", "bye\n"),
        ("m.txt", "keep\nold\n"),
    ]);
    let root = dir.root();
    let plan = dir.planned(
        "*** Add File: a.txt\n+hello from apply_patch\n*** Delete File: d.txt\n\
             *** Update File: u.txt\n@@\n 2\n-3\n+three\n 4\n\
             *** Update File: m.txt\n*** Move to: sub/m2.txt\n@@\n keep\n-old\n+new",
    );
    let c = plan.changes();
    assert_eq!(c.len(), 4);

    assert_eq!(c[0].path, root.join("a.txt"));
    assert_eq!(c[0].kind, ChangeKind::Add);
    assert_eq!(c[0].diff, "hello from apply_patch\n");
    assert_eq!(
        c[0].git_diff,
        "diff --git a/a.txt b/a.txt\nnew file mode 100644\n\
         index 0000000000000000000000000000000000000000..86ddfb8cbbf96928cb6ee38b9174645983db4797\n\
         --- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hello from apply_patch\n"
    );

    assert_eq!(c[1].kind, ChangeKind::Delete);
    assert_eq!(c[1].diff, "bye\n");
    assert!(
        c[1].git_diff
            .starts_with("diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n")
    );
    assert!(
        c[1].git_diff
            .ends_with("--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n")
    );

    assert_eq!(c[2].kind, ChangeKind::Update { move_path: None });
    assert_eq!(c[2].diff, "@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n");
    assert!(
        c[2].git_diff
            .contains("--- a/u.txt\n+++ b/u.txt\n@@ -1,5 +1,5 @@\n 1\n 2\n-3\n")
    );

    let dest = root.join("sub/m2.txt");
    assert_eq!(
        c[3].kind,
        ChangeKind::Update {
            move_path: Some(dest.clone())
        }
    );
    assert_eq!(
        c[3].diff,
        format!(
            "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n\n\nMoved to: {}",
            dest.display()
        )
    );
    assert!(
        c[3].git_diff
            .starts_with("diff --git a/m.txt b/sub/m2.txt\n")
    );

    let proto = c[3].to_protocol();
    let json = serde_json::to_value(&proto).unwrap();
    assert_eq!(json["kind"]["type"], "update");
    assert_eq!(json["kind"]["move_path"], dest.to_string_lossy().as_ref());
    assert_eq!(json["path"], root.join("m.txt").to_string_lossy().as_ref());
    assert_eq!(plan.protocol_changes().len(), 4);

    // Planning wrote nothing.
    assert_eq!(dir.read("a.txt"), None);
    assert_eq!(dir.read("d.txt").as_deref(), Some("bye\n"));
    assert_eq!(dir.read("m.txt").as_deref(), Some("keep\nold\n"));
}

#[test]
fn verification_failure_writes_nothing() {
    let dir = Dir::with(&[("one.txt", "1\n"), ("two.txt", "2\n"), ("three.txt", "3\n")]);
    let patch = wrap(
        "*** Update File: one.txt\n@@\n-1\n+uno\n*** Add File: brand/new.txt\n+new\n\
         *** Delete File: two.txt\n*** Update File: three.txt\n@@\n-not three\n+tres",
    );
    let err = dir.apply(&patch).unwrap_err();
    assert!(err.wrote_nothing());
    assert!(
        err.model_text()
            .starts_with("apply_patch verification failed: Failed to find expected lines in "),
        "{}",
        err.model_text()
    );
    assert_eq!(dir.read("one.txt").as_deref(), Some("1\n"));
    assert_eq!(dir.read("two.txt").as_deref(), Some("2\n"));
    assert_eq!(dir.read("three.txt").as_deref(), Some("3\n"));
    assert!(!dir.root().join("brand").exists());
}

#[test]
fn moves_preserve_permissions_and_overwrite_destinations() {
    let dir = Dir::with(&[("script.sh", "echo hi\n"), ("dest/script.sh", "old dest\n")]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(
            dir.root().join("script.sh"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    let plan = dir.planned(
        "*** Update File: script.sh\n*** Move to: dest/script.sh\n@@\n-echo hi\n+echo bye",
    );
    assert_eq!(
        plan.changes()[0].overwritten_move_content.as_deref(),
        Some("old dest\n")
    );
    apply_plan(&plan).unwrap();
    assert_eq!(dir.read("script.sh"), None);
    assert_eq!(dir.read("dest/script.sh").as_deref(), Some("echo bye\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.root().join("dest/script.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
}

#[test]
fn add_over_an_existing_file_overwrites_it() {
    let dir = Dir::new();
    dir.write("dup.txt", "before\n");
    let plan = dir.planned("*** Add File: dup.txt\n+after");
    let change = &plan.changes()[0];
    assert_eq!(change.kind, ChangeKind::Add);
    assert_eq!(change.old_content.as_deref(), Some("before\n"));
    assert!(change.git_diff.contains("-before\n+after\n"));
    assert!(!change.git_diff.contains("new file mode"));
    apply_plan(&plan).unwrap();
    assert_eq!(dir.read("dup.txt").as_deref(), Some("after\n"));
}

#[test]
fn missing_files_and_directories_are_rejected() {
    let dir = Dir::new();
    let root = dir.root();
    let err = dir.plan(&wrap("*** Delete File: nope.txt")).unwrap_err();
    assert_eq!(
        err.model_text(),
        format!(
            "apply_patch verification failed: Failed to read {}: {}",
            root.join("nope.txt").display(),
            std::io::Error::from_raw_os_error(2)
        )
    );
    let err = dir
        .plan(&wrap("*** Update File: nope.txt\n@@\n-a\n+b"))
        .unwrap_err();
    assert!(
        err.to_string().starts_with(&format!(
            "Failed to read file to update {}",
            root.join("nope.txt").display()
        )),
        "{err}"
    );
    fs::create_dir(root.join("adir")).unwrap();
    let err = dir.plan(&wrap("*** Delete File: adir")).unwrap_err();
    assert!(err.to_string().contains("Is a directory"), "{err}");
    let err = dir.plan(&wrap("*** Add File: adir\n+x")).unwrap_err();
    assert!(err.to_string().contains("Is a directory"), "{err}");
    assert!(root.join("adir").is_dir());
    // Deleting twice in one patch: the second sees the first.
    dir.write("once.txt", "x\n");
    assert!(
        dir.plan(&wrap(
            "*** Delete File: once.txt\n*** Delete File: once.txt"
        ))
        .is_err()
    );
    assert_eq!(dir.read("once.txt").as_deref(), Some("x\n"));
}

#[test]
fn non_utf8_files() {
    let dir = Dir::new();
    fs::write(dir.root().join("bin"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let err = dir
        .plan(&wrap("*** Update File: bin\n@@\n-A\n+B"))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("stream did not contain valid UTF-8"),
        "{err}"
    );
    // Deleting one works.
    dir.apply(&wrap("*** Delete File: bin")).unwrap();
    assert!(!dir.root().join("bin").exists());
}

#[test]
fn paths_outside_the_writable_roots_are_rejected() {
    let dir = Dir::new();
    let root = dir.root();
    fs::create_dir(root.join("ws")).unwrap();
    fs::write(root.join("outside.txt"), "secret\n").unwrap();
    let ws = root.join("ws");
    let inside = |p: &Path| p.starts_with(&ws);

    // `../` traversal.
    let err = plan_patch(&wrap("*** Add File: ../evil.txt\n+x"), &ws, &inside).unwrap_err();
    assert!(matches!(&err, PatchError::NotWritable { path } if *path == root.join("evil.txt")));
    assert_eq!(
        err.model_text(),
        format!(
            "patch rejected: writing outside of the sandbox's writable roots: {}",
            root.join("evil.txt").display()
        )
    );
    let err = plan_patch(&wrap("*** Add File: sub/../../evil.txt\n+x"), &ws, &inside).unwrap_err();
    assert!(matches!(err, PatchError::NotWritable { .. }));
    // Update / delete / move destination outside.
    for body in [
        "*** Update File: ../outside.txt\n@@\n-secret\n+pwned",
        "*** Delete File: ../outside.txt",
    ] {
        let err = plan_patch(&wrap(body), &ws, &inside).unwrap_err();
        assert!(
            matches!(err, PatchError::NotWritable { .. }),
            "{body}: {err}"
        );
    }
    fs::write(ws.join("in.txt"), "a\n").unwrap();
    let err = plan_patch(
        &wrap("*** Update File: in.txt\n*** Move to: ../moved.txt\n@@\n-a\n+b"),
        &ws,
        &inside,
    )
    .unwrap_err();
    assert!(matches!(err, PatchError::NotWritable { .. }));
    // Absolute paths: inside is fine, outside is not.
    let abs_inside = ws.join("abs.txt");
    let plan = plan_patch(
        &wrap(&format!("*** Add File: {}\n+ok", abs_inside.display())),
        &ws,
        &inside,
    )
    .unwrap();
    assert_eq!(plan.changes()[0].path, abs_inside);
    apply_plan(&plan).unwrap();
    assert_eq!(fs::read_to_string(&abs_inside).unwrap(), "ok\n");
    let err = plan_patch(
        &wrap(&format!(
            "*** Add File: {}\n+x",
            root.join("abs-out.txt").display()
        )),
        &ws,
        &inside,
    )
    .unwrap_err();
    assert!(matches!(err, PatchError::NotWritable { .. }));
    // Nothing outside changed.
    assert_eq!(
        fs::read_to_string(root.join("outside.txt")).unwrap(),
        "secret\n"
    );
    assert!(!root.join("evil.txt").exists());
    assert!(!root.join("moved.txt").exists());
    assert_eq!(fs::read_to_string(ws.join("in.txt")).unwrap(), "a\n");
}

#[cfg(unix)]
#[test]
fn symlinks_cannot_escape_the_writable_roots() {
    let dir = Dir::new();
    let root = dir.root();
    let ws = root.join("ws");
    fs::create_dir_all(root.join("target")).unwrap();
    fs::create_dir(&ws).unwrap();
    std::os::unix::fs::symlink(root.join("target"), ws.join("link")).unwrap();
    std::os::unix::fs::symlink(root.join("target/dangling.txt"), ws.join("dangle")).unwrap();
    let inside = |p: &Path| p.starts_with(&ws);
    for body in ["*** Add File: link/x.txt\n+x", "*** Add File: dangle\n+x"] {
        let err = plan_patch(&wrap(body), &ws, &inside).unwrap_err();
        assert!(
            matches!(err, PatchError::NotWritable { .. }),
            "{body}: {err}"
        );
    }
    assert!(!root.join("target/x.txt").exists());
    assert!(!root.join("target/dangling.txt").exists());
    assert!(path_is_writable(&ws.join("plain.txt"), &inside));
    assert!(!path_is_writable(&ws.join("link/plain.txt"), &inside));
}

#[test]
fn files_changed_after_planning_are_not_clobbered() {
    let dir = Dir::with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let plan =
        dir.planned("*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B");
    dir.write("b.txt", "b\nedited by someone else\n");
    let err = apply_plan(&plan).unwrap_err();
    assert!(matches!(err, PatchError::Stale { .. }));
    assert!(err.wrote_nothing());
    assert!(
        err.model_text()
            .starts_with("apply_patch verification failed: ")
    );
    assert_eq!(dir.read("a.txt").as_deref(), Some("a\n"));
    // A file that appeared where the plan expected none.
    let plan = dir.planned("*** Add File: c.txt\n+c");
    dir.write("c.txt", "surprise\n");
    assert!(matches!(apply_plan(&plan), Err(PatchError::Stale { .. })));
    assert_eq!(dir.read("c.txt").as_deref(), Some("surprise\n"));
}

#[test]
fn operations_on_the_same_path_compose() {
    let dir = Dir::new();
    let plan = dir.planned(
        "*** Add File: f.txt\n+one\n+two\n*** Update File: f.txt\n@@\n-two\n+deux\n\
             *** Update File: f.txt\n*** Move to: g.txt\n@@\n-one\n+un",
    );
    assert_eq!(
        plan.changes()[1].diff,
        "@@ -1,2 +1,2 @@\n one\n-two\n+deux\n"
    );
    apply_plan(&plan).unwrap();
    assert_eq!(dir.read("f.txt"), None);
    assert_eq!(dir.read("g.txt").as_deref(), Some("un\ndeux\n"));
}

#[test]
fn write_failures_are_reported_with_their_cause() {
    let dir = Dir::new();
    let plan = dir.planned("*** Add File: first.txt\n+1\n*** Add File: sub/child.txt\n+x");
    // After planning, a file appears where the parent directory must be created.
    dir.write("sub", "I am a file\n");
    let err = apply_plan(&plan).unwrap_err();
    assert!(!err.wrote_nothing());
    assert!(
        err.model_text()
            .starts_with("Failed to create parent directories for "),
        "{err}"
    );
    // No rollback: the first operation stays applied.
    assert_eq!(dir.read("first.txt").as_deref(), Some("1\n"));
}

#[test]
fn turn_diff_tracker_aggregates_patches() {
    let dir = Dir::with(&[("a.txt", "a\n"), ("r.txt", "r\n")]);
    let root = dir.root();
    let mut tracker = TurnDiffTracker::new(Some(root.clone()));
    assert_eq!(tracker.unified_diff(), None);

    let p1 = dir.planned("*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: n.txt\n+n");
    apply_plan(&p1).unwrap();
    tracker.track(&p1);
    let p2 = dir.planned("*** Update File: a.txt\n@@\n-b\n+c\n*** Update File: r.txt\n*** Move to: s.txt\n@@\n-r\n+s");
    apply_plan(&p2).unwrap();
    tracker.track(&p2);
    let diff = tracker.unified_diff().unwrap();
    assert!(
        diff.starts_with("diff --git a/a.txt b/a.txt\nindex "),
        "{diff}"
    );
    assert!(
        diff.contains("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+c\n"),
        "{diff}"
    );
    assert!(
        diff.contains("diff --git a/n.txt b/n.txt\nnew file mode 100644\n"),
        "{diff}"
    );
    assert!(diff.contains("diff --git a/r.txt b/s.txt\n"), "{diff}");
    assert!(
        diff.contains("--- a/r.txt\n+++ b/s.txt\n@@ -1 +1 @@\n-r\n+s\n"),
        "{diff}"
    );

    // Reverting everything leaves no diff.
    let p3 = dir.planned(
        "*** Update File: a.txt\n@@\n-c\n+a\n*** Delete File: n.txt\n\
             *** Update File: s.txt\n*** Move to: r.txt\n@@\n-s\n+r",
    );
    apply_plan(&p3).unwrap();
    tracker.track(&p3);
    assert_eq!(tracker.unified_diff(), None);
}
