//! `.git` and Weft's home stay read-only inside the writable roots, in-process and for
//! commands.

use super::*;

#[cfg(unix)]
#[test]
fn git_and_weft_home_stay_read_only_inside_the_roots() {
    let (_tmp, ws, outside) = race_layout();
    let home = ws.join("weft-home");
    let nested_ws = home.join("ws");
    std::fs::create_dir_all(&nested_ws).unwrap();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    let spec =
        SandboxSpec::from_policy(&workspace_write(&[&nested_ws], true), &ws).with_home(&home);
    assert!(spec.can_write(&ws.join("src/main.rs")));
    assert!(spec.can_write(&ws.join(".gitignore")));
    for protected in [
        ".git/hooks/pre-commit",
        ".git/config",
        ".git",
        "weft-home/config.toml",
    ] {
        assert!(!spec.can_write(&ws.join(protected)), "{protected}");
        assert!(spec.is_protected_path(&ws.join(protected)), "{protected}");
    }
    // A symlink to the protected folder does not open it.
    std::os::unix::fs::symlink(ws.join(".git"), ws.join("g")).unwrap();
    assert!(!spec.can_write(&ws.join("g/hooks/pre-commit")));
    // A `.git` that does not exist yet is protected too (a new repository's hooks).
    assert!(!spec.can_write(&nested_ws.join(".git/hooks/post-checkout")));
    // A workspace kept inside the home stays writable.
    assert!(spec.can_write(&nested_ws.join("notes.txt")));
    assert!(!spec.is_protected_path(&outside.join("x")));
    // Nothing is protected without confinement.
    assert!(SandboxSpec::unrestricted(&ws).can_write(&ws.join(".git/config")));
}

/// A workspace (in a fresh directory outside `/tmp`'s writable root, so only it is writable)
/// with a repository's `.git`.
#[cfg(target_os = "linux")]
fn repo_layout() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = canonical(tmp.path()).join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    (tmp, ws)
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn commands_cannot_write_or_move_git_inside_the_workspace() {
    let (_tmp, ws) = repo_layout();
    let spec = SandboxSpec::from_policy(&workspace_write(&[], true), &ws);
    assert_eq!(
        protect::protected_mounts(&spec),
        vec![ws.join(".git")],
        "{spec:?}"
    );
    let cmd = "echo x > .git/hooks/p; echo rc-hook=$?; echo y >> .git/config; echo rc-config=$?; \
               mv .git g2; echo rc-mv=$?; rm -rf .git; echo rc-rm=$?; \
               echo ok > ok.txt && echo wrote-ok";
    let result = run(cmd, &ws, &spec).await;
    if !enforceable(&spec, &result) {
        return;
    }
    let out = result.unwrap();
    for rc in ["rc-hook=", "rc-config=", "rc-mv=", "rc-rm="] {
        assert!(
            !out.output.contains(&format!("{rc}0\n")),
            "{rc}: {}",
            out.output
        );
    }
    assert!(out.output.contains("wrote-ok\n"), "{}", out.output);
    assert!(!ws.join(".git/hooks/p").exists());
    assert!(!ws.join("g2").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(std::fs::read_to_string(ws.join("ok.txt")).unwrap(), "ok\n");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_git_file_and_weft_home_entries_are_protected_but_nested_workspaces_are_not() {
    let tmp = tempfile::tempdir().unwrap();
    let base = canonical(tmp.path());
    // The home lies beneath the writable root `base`; a workspace inside the home stays
    // writable, the home's other entries do not.
    let home = base.join("home");
    let nested = home.join("ws");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(home.join("config.toml"), "model = \"m\"\n").unwrap();
    std::fs::create_dir_all(home.join("sessions")).unwrap();
    // A worktree's `.git` is a file.
    std::fs::write(nested.join(".git"), "gitdir: /elsewhere\n").unwrap();
    let spec = SandboxSpec::from_policy(&workspace_write(&[&base], true), &nested).with_home(&home);
    let mut mounts = protect::protected_mounts(&spec);
    mounts.sort();
    let mut expected = vec![
        nested.join(".git"),
        home.join("config.toml"),
        home.join("sessions"),
    ];
    expected.sort();
    assert_eq!(mounts, expected);
    let cmd = format!(
        "echo x > .git; echo rc-git=$?; echo x > {home}/config.toml; echo rc-config=$?; \
         touch {home}/sessions/s; echo rc-sessions=$?; echo ok > notes.txt && echo wrote-ok",
        home = home.display()
    );
    let result = run(&cmd, &nested, &spec).await;
    if !enforceable(&spec, &result) {
        return;
    }
    let out = result.unwrap();
    for rc in ["rc-git=", "rc-config=", "rc-sessions="] {
        assert!(
            !out.output.contains(&format!("{rc}0\n")),
            "{rc}: {}",
            out.output
        );
    }
    assert!(out.output.contains("wrote-ok\n"), "{}", out.output);
    assert_eq!(
        std::fs::read_to_string(nested.join(".git")).unwrap(),
        "gitdir: /elsewhere\n"
    );
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        "model = \"m\"\n"
    );
    assert!(!home.join("sessions/s").exists());
    assert!(nested.join("notes.txt").exists());
}

#[cfg(target_os = "linux")]
#[test]
fn nothing_is_mounted_without_a_git_or_a_home_beneath_the_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = canonical(tmp.path());
    let home = ws.join("missing-home");
    let spec = SandboxSpec::from_policy(&workspace_write(&[], true), &ws).with_home(&home);
    assert!(protect::protected_mounts(&spec).is_empty());
    assert!(protect::prepare(&spec).unwrap().is_none());
    // Outside workspace-write nothing is bound either (Landlock denies every write already).
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    let read_only = SandboxSpec::from_policy(
        &SandboxPolicy::ReadOnly {
            network_access: false,
        },
        &ws,
    );
    assert!(protect::protected_mounts(&read_only).is_empty());
}
