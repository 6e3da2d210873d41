use std::path::Path;
use std::process::Command;

use super::*;

fn sh(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "u")
        .env("GIT_AUTHOR_EMAIL", "u@x")
        .env("GIT_COMMITTER_NAME", "u")
        .env("GIT_COMMITTER_EMAIL", "u@x")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn limits() -> SnapshotsConfig {
    SnapshotsConfig {
        max_file_bytes: 1000,
        ..SnapshotsConfig::default()
    }
}

/// A repository with a commit, a tracked change, an untracked file, an ignored one and a big one.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    sh(
        dir.path(),
        "git init -q -b main . && printf 'ignored.txt\\n' > .gitignore && echo one > a.txt \
         && git add . && git commit -qm init && echo two > a.txt && echo new > b.txt \
         && echo secret > ignored.txt && head -c 5000 /dev/zero > big.bin && git add a.txt",
    );
    dir
}

/// What must never change: the index's bytes, every ref but Weft's, HEAD, the stash.
fn user_state(dir: &Path) -> (Vec<u8>, String, String) {
    let index = std::fs::read(dir.join(".git/index")).unwrap();
    let refs = sh(
        dir,
        "git for-each-ref --format='%(refname) %(objectname)' | grep -v refs/weft/ || true",
    );
    let head = std::fs::read_to_string(dir.join(".git/HEAD")).unwrap();
    (index, refs, head)
}

#[tokio::test]
async fn a_snapshot_of_a_repository_leaves_the_user_state_alone_and_restores() {
    let dir = repo();
    let home = tempfile::tempdir().unwrap();
    let before = user_state(dir.path());
    let snap = Snapshotter::locate(dir.path(), home.path(), limits())
        .await
        .unwrap();
    assert!(!snap.workspace().private);
    let taken = snap
        .take("refs/weft/snapshots/t/u/before", "before")
        .await
        .unwrap();
    assert_eq!(user_state(dir.path()), before);
    let listed = sh(
        dir.path(),
        &format!("git ls-tree -r --name-only {}", taken.commit),
    );
    assert_eq!(
        listed, ".gitignore\na.txt\nb.txt\n",
        "no ignored or big file"
    );
    assert_eq!(
        sh(dir.path(), "git rev-parse refs/weft/snapshots/t/u/before").trim(),
        taken.commit
    );

    // The agent changes things; the restore puts them back and deletes what it added.
    sh(
        dir.path(),
        "echo three > a.txt && rm b.txt && mkdir -p d && echo c > d/c.txt",
    );
    let now = snap.current_tree().await.unwrap();
    assert_ne!(now, taken.tree);
    let changes = snap.restore(&now, &taken.tree).await.unwrap();
    assert_eq!(changes.len(), 3);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "new\n"
    );
    assert!(!dir.path().join("d").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ignored.txt")).unwrap(),
        "secret\n"
    );
    assert_eq!(
        std::fs::metadata(dir.path().join("big.bin")).unwrap().len(),
        5000
    );
    assert_eq!(snap.current_tree().await.unwrap(), taken.tree);
    assert_eq!(user_state(dir.path()), before);
}

#[tokio::test]
async fn a_plain_directory_snapshots_into_a_private_repository() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    sh(
        dir.path(),
        "echo x > x.txt && ln -s x.txt link && printf '#!/bin/sh\\n' > run.sh && chmod +x run.sh",
    );
    let snap = Snapshotter::locate(dir.path(), home.path(), limits())
        .await
        .unwrap();
    assert!(snap.workspace().private);
    assert!(snap.workspace().git_dir.starts_with(home.path()));
    assert!(!dir.path().join(".git").exists());
    let taken = snap
        .take("refs/weft/snapshots/t/u/before", "before")
        .await
        .unwrap();
    sh(
        dir.path(),
        "rm link run.sh && echo y > x.txt && echo z > z.txt",
    );
    let now = snap.current_tree().await.unwrap();
    snap.restore(&now, &taken.tree).await.unwrap();
    assert_eq!(
        std::fs::read_link(dir.path().join("link")).unwrap(),
        Path::new("x.txt")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("x.txt")).unwrap(),
        "x\n"
    );
    assert!(!dir.path().join("z.txt").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.path().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111);
    assert!(!dir.path().join(".git").exists());
    // The same directory finds the same private repository again.
    let again = Snapshotter::locate(dir.path(), home.path(), limits())
        .await
        .unwrap();
    assert_eq!(again.workspace(), snap.workspace());
}

#[tokio::test]
async fn too_many_files_are_refused_and_old_snapshots_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    sh(dir.path(), "for i in 1 2 3; do echo $i > f$i; done");
    let few = SnapshotsConfig {
        max_files: 2,
        ..limits()
    };
    let snap = Snapshotter::locate(dir.path(), home.path(), few)
        .await
        .unwrap();
    assert!(matches!(
        snap.take("refs/weft/snapshots/t/u/before", "m").await,
        Err(SnapshotError::TooManyFiles(2))
    ));
    let kept = SnapshotsConfig {
        max_count: 2,
        ..limits()
    };
    let snap = Snapshotter::locate(dir.path(), home.path(), kept)
        .await
        .unwrap();
    for turn in ["a", "b", "c"] {
        snap.take(&format!("refs/weft/snapshots/t/{turn}/before"), "m")
            .await
            .unwrap();
    }
    let now = crate::time::now_secs();
    assert_eq!(snap.prune(now).await.unwrap(), 1);
    // Everything is older than a day from a year on.
    assert_eq!(snap.prune(now + 365 * 86_400).await.unwrap(), 2);
}

/// `$WEFT_HOME` inside the workspace (its rollouts, its private repositories) is never part of
/// a snapshot, and does not count toward `max_files`.
#[tokio::test]
async fn weft_home_inside_the_workspace_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    sh(
        dir.path(),
        "echo x > x.txt && mkdir -p home/sessions && for i in 1 2 3 4; do echo $i > home/sessions/r$i; done",
    );
    let few = SnapshotsConfig {
        max_files: 2,
        ..limits()
    };
    let snap = Snapshotter::locate(dir.path(), &dir.path().join("home"), few)
        .await
        .unwrap();
    let taken = snap
        .take("refs/weft/snapshots/t/u/before", "m")
        .await
        .unwrap();
    let git_dir = snap.workspace().git_dir.display().to_string();
    let listed = sh(
        dir.path(),
        &format!(
            "GIT_DIR={git_dir} git ls-tree -r --name-only {}",
            taken.commit
        ),
    );
    assert_eq!(listed, "x.txt\n");
}
