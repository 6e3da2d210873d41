//! Tests of the sandbox: path rules in-process, and enforcement on real commands. When this
//! kernel lacks Landlock, the enforcement tests assert that Weft refuses instead (and say so).

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use weft_protocol::SandboxPolicy;

use super::*;
use crate::exec::{ExecError, ExecOutput, ExecRequest, ExecSessions};

fn workspace_write(roots: &[&Path], exclude_tmp: bool) -> SandboxPolicy {
    SandboxPolicy::WorkspaceWrite {
        writable_roots: roots.iter().map(|r| r.display().to_string()).collect(),
        network_access: false,
        exclude_tmpdir_env_var: exclude_tmp,
        exclude_slash_tmp: exclude_tmp,
    }
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

async fn run(cmd: &str, cwd: &Path, spec: &SandboxSpec) -> Result<ExecOutput, ExecError> {
    let sessions = ExecSessions::new();
    let result = sessions
        .exec_command(
            ExecRequest {
                cmd: cmd.to_string(),
                workdir: cwd.to_path_buf(),
                shell: Some("/bin/bash".to_string()),
                login: false,
                yield_time_ms: 10_000,
                max_output_tokens: None,
            },
            spec,
            |_| {},
            &CancellationToken::new(),
        )
        .await;
    sessions.shutdown().await;
    result
}

/// Whether this kernel can enforce `spec`; prints a note and checks the refusal when not.
fn enforceable(spec: &SandboxSpec, result: &Result<ExecOutput, ExecError>) -> bool {
    let support = sandbox_support();
    match support.check(spec) {
        Ok(()) => true,
        Err(reason) => {
            eprintln!(
                "note: sandbox not enforceable here ({}); checking the refusal",
                support.summary()
            );
            assert_eq!(result, &Err(ExecError::SandboxUnavailable(reason)));
            false
        }
    }
}

#[test]
fn support_is_reported() {
    let support = sandbox_support();
    eprintln!("sandbox support: {}", support.summary());
    assert_eq!(
        support.landlock_full,
        support.landlock_abi.is_some_and(|abi| abi >= 3)
    );
    assert!(
        support
            .check(&SandboxSpec::unrestricted(Path::new("/")))
            .is_ok()
    );
}

#[test]
fn missing_kernel_support_refuses_confined_commands() {
    let cwd = Path::new("/");
    let none = SandboxSupport {
        landlock_abi: None,
        landlock_full: false,
        seccomp: false,
    };
    let write = SandboxSpec::from_policy(&workspace_write(&[], false), cwd);
    let refusal = none.check(&write).unwrap_err();
    assert!(refusal.contains("Landlock"), "{refusal}");
    assert!(refusal.contains("workspace-write"), "{refusal}");
    let read_only = SandboxSpec::from_policy(
        &SandboxPolicy::ReadOnly {
            network_access: true,
        },
        cwd,
    );
    assert!(none.check(&read_only).is_err());
    assert!(none.check(&SandboxSpec::unrestricted(cwd)).is_ok());
    let landlock_only = SandboxSupport {
        landlock_abi: Some(2),
        landlock_full: false,
        seccomp: false,
    };
    assert!(landlock_only.check(&read_only).is_ok());
    let network = landlock_only.check(&write).unwrap_err();
    assert!(network.contains("seccomp"), "{network}");
    assert!(landlock_only.summary().contains("partial"));
}

#[test]
fn policies_resolve_to_write_roots() {
    let cwd = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    let spec = SandboxSpec::from_policy(&workspace_write(&[extra.path()], false), cwd.path());
    assert_eq!(spec.file_system(), FileSystemAccess::WorkspaceWrite);
    assert!(!spec.network_allowed());
    assert!(spec.is_confined());
    let roots = spec.writable_roots();
    assert_eq!(roots[0], canonical(cwd.path()));
    assert!(roots.contains(&canonical(extra.path())));
    assert!(roots.contains(&canonical(Path::new("/tmp"))));

    let strict = SandboxSpec::from_policy(&workspace_write(&[], true), cwd.path());
    assert_eq!(strict.writable_roots(), &[canonical(cwd.path())]);

    let read_only = SandboxSpec::from_policy(
        &SandboxPolicy::ReadOnly {
            network_access: true,
        },
        cwd.path(),
    );
    assert_eq!(read_only.file_system(), FileSystemAccess::ReadOnly);
    assert!(read_only.network_allowed());
    assert!(read_only.writable_roots().is_empty());

    let full = SandboxSpec::from_policy(&SandboxPolicy::DangerFullAccess, cwd.path());
    assert!(!full.is_confined());
    assert!(full.network_allowed());
    let external = SandboxSpec::from_policy(
        &SandboxPolicy::ExternalSandbox {
            network_access: weft_protocol::NetworkAccess::Restricted,
        },
        cwd.path(),
    );
    assert!(!external.is_confined());
}

#[test]
fn can_write_follows_the_roots() {
    let cwd = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let spec = SandboxSpec::from_policy(&workspace_write(&[], true), cwd.path());
    std::fs::create_dir(cwd.path().join("src")).unwrap();
    assert!(spec.can_write(&cwd.path().join("src/main.rs")));
    assert!(spec.can_write(Path::new("src/new/deep/file.rs")));
    assert!(spec.can_write(Path::new("./README.md")));
    assert!(spec.can_write(Path::new("src/../notes.txt")));
    assert!(!spec.can_write(&outside.path().join("x")));
    assert!(!spec.can_write(Path::new("../escape.txt")));
    assert!(!spec.can_write(Path::new("/etc/passwd")));
    // `..` through a directory that does not exist cannot be decided: refused.
    assert!(!spec.can_write(Path::new("missing/../../escape.txt")));

    // A symlink inside the workspace that points outside does not make outside writable.
    std::os::unix::fs::symlink(outside.path(), cwd.path().join("out")).unwrap();
    assert!(!spec.can_write(Path::new("out/file.txt")));
    // Nor does a dangling symlink to a file outside.
    std::os::unix::fs::symlink(outside.path().join("new.txt"), cwd.path().join("dangling"))
        .unwrap();
    assert!(!spec.can_write(Path::new("dangling")));
    // A symlink pointing back inside is fine.
    std::os::unix::fs::symlink(cwd.path().join("src"), cwd.path().join("alias")).unwrap();
    assert!(spec.can_write(Path::new("alias/lib.rs")));

    let read_only = SandboxSpec::from_policy(
        &SandboxPolicy::ReadOnly {
            network_access: false,
        },
        cwd.path(),
    );
    assert!(!read_only.can_write(&cwd.path().join("src/main.rs")));
    let full = SandboxSpec::unrestricted(cwd.path());
    assert!(full.can_write(&outside.path().join("x")));
}

#[test]
fn sandbox_denials_are_recognised() {
    assert!(looks_like_sandbox_denial(
        "bash: line 1: /etc/x: Permission denied\n",
        Some(1)
    ));
    assert!(looks_like_sandbox_denial(
        "bash: socket: Operation not permitted\n",
        Some(1)
    ));
    assert!(looks_like_sandbox_denial(
        "touch: cannot touch 'x': Read-only file system",
        Some(1)
    ));
    assert!(!looks_like_sandbox_denial("Permission denied", Some(0)));
    assert!(!looks_like_sandbox_denial("error: no such file", Some(1)));
}

#[tokio::test]
async fn workspace_write_allows_the_workspace_only() {
    let cwd = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let spec = SandboxSpec::from_policy(&workspace_write(&[], true), cwd.path());
    let outside_file = outside.path().join("outside.txt");
    let cmd = format!(
        "echo in > inside.txt && mkdir -p sub/dir && echo nested > sub/dir/f && echo wrote-inside; \
         echo hi > /dev/null && echo devnull-ok; \
         echo out > {}",
        outside_file.display()
    );
    let result = run(&cmd, cwd.path(), &spec).await;
    if !enforceable(&spec, &result) {
        assert!(!cwd.path().join("inside.txt").exists());
        return;
    }
    let out = result.unwrap();
    assert!(out.output.contains("wrote-inside\n"), "{}", out.output);
    assert!(out.output.contains("devnull-ok\n"), "{}", out.output);
    assert!(out.output.contains("Permission denied"), "{}", out.output);
    assert_ne!(out.exit_code, Some(0));
    assert!(looks_like_sandbox_denial(&out.output, out.exit_code));
    assert_eq!(
        std::fs::read_to_string(cwd.path().join("inside.txt")).unwrap(),
        "in\n"
    );
    assert!(cwd.path().join("sub/dir/f").exists());
    assert!(!outside_file.exists());

    // Children of the command are confined too; /tmp was excluded by this policy.
    let nested = format!(
        "bash -c 'touch {}'",
        outside.path().join("nested").display()
    );
    let out = run(&nested, cwd.path(), &spec).await.unwrap();
    assert_ne!(out.exit_code, Some(0));
    assert!(!outside.path().join("nested").exists());
}

#[tokio::test]
async fn workspace_write_includes_tmp_unless_excluded() {
    let cwd = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir_in("/tmp").unwrap();
    let spec = SandboxSpec::from_policy(&workspace_write(&[], false), cwd.path());
    let target = scratch.path().join("tmp-ok");
    let result = run(&format!("touch {}", target.display()), cwd.path(), &spec).await;
    if !enforceable(&spec, &result) {
        return;
    }
    assert_eq!(result.unwrap().exit_code, Some(0));
    assert!(target.exists());
}

#[tokio::test]
async fn read_only_cannot_write_anywhere() {
    let cwd = tempfile::tempdir().unwrap();
    let spec = SandboxSpec::from_policy(
        &SandboxPolicy::ReadOnly {
            network_access: false,
        },
        cwd.path(),
    );
    std::fs::write(cwd.path().join("existing.txt"), "keep\n").unwrap();
    let result = run(
        "cat existing.txt; echo x > /dev/null && echo devnull-ok >/dev/stdout; \
         echo more >> existing.txt; touch new.txt; mkdir d; touch /tmp/weft-ro-probe-$$",
        cwd.path(),
        &spec,
    )
    .await;
    if !enforceable(&spec, &result) {
        return;
    }
    let out = result.unwrap();
    assert!(
        out.output.starts_with("keep\ndevnull-ok\n"),
        "{}",
        out.output
    );
    assert_ne!(out.exit_code, Some(0));
    assert_eq!(
        out.output.matches("Permission denied").count(),
        4,
        "{}",
        out.output
    );
    assert_eq!(
        std::fs::read_to_string(cwd.path().join("existing.txt")).unwrap(),
        "keep\n"
    );
    assert!(!cwd.path().join("new.txt").exists());
    assert!(!cwd.path().join("d").exists());
}

#[tokio::test]
async fn network_is_denied_unless_allowed() {
    let cwd = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let cmd = format!("echo hello > /dev/tcp/127.0.0.1/{port} && echo connected");

    let sandboxed = SandboxSpec::from_policy(&workspace_write(&[], false), cwd.path());
    let result = run(&cmd, cwd.path(), &sandboxed).await;
    if enforceable(&sandboxed, &result) {
        let out = result.unwrap();
        assert_ne!(out.exit_code, Some(0), "{}", out.output);
        assert!(
            out.output.contains("Operation not permitted"),
            "{}",
            out.output
        );
        assert!(!out.output.contains("connected"));
        assert!(looks_like_sandbox_denial(&out.output, out.exit_code));
        // Nothing reached the listener.
        let accepted = tokio::time::timeout(Duration::from_millis(100), listener.accept()).await;
        assert!(accepted.is_err(), "the sandboxed command connected");
    }

    // With network access allowed in the policy (and Landlock still on), it connects.
    let networked = SandboxSpec::from_policy(
        &SandboxPolicy::WorkspaceWrite {
            writable_roots: Vec::new(),
            network_access: true,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        },
        cwd.path(),
    );
    let result = run(&cmd, cwd.path(), &networked).await;
    if enforceable(&networked, &result) {
        let out = result.unwrap();
        assert_eq!(out.exit_code, Some(0), "{}", out.output);
        let accepted = tokio::time::timeout(Duration::from_secs(5), listener.accept()).await;
        assert!(matches!(accepted, Ok(Ok(_))));
    }

    // danger-full-access: unconfined, always runs.
    let full = SandboxSpec::unrestricted(cwd.path());
    let out = run(&cmd, cwd.path(), &full).await.unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.output);
    assert_eq!(out.output, "connected\n");
    let accepted = tokio::time::timeout(Duration::from_secs(5), listener.accept()).await;
    assert!(matches!(accepted, Ok(Ok(_))));
}

#[tokio::test]
async fn unix_sockets_still_work_without_network() {
    let cwd = tempfile::tempdir().unwrap();
    let socket = cwd.path().join("s.sock");
    let listener = tokio::net::UnixListener::bind(&socket).unwrap();
    let spec = SandboxSpec::from_policy(&workspace_write(&[], true), cwd.path());
    // `python3` may be missing; fall back to checking that `socat`-less bash at least runs.
    let cmd = format!(
        "if command -v python3 >/dev/null; then python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}'); print('unix-ok')\"; else echo unix-ok; fi",
        socket.display()
    );
    let result = run(&cmd, cwd.path(), &spec).await;
    if !enforceable(&spec, &result) {
        return;
    }
    let out = result.unwrap();
    assert_eq!(out.output.trim_end(), "unix-ok", "{}", out.output);
    drop(listener);
}

/// A workspace `ws` with a folder `inside`, and a folder `outside` next to it, both canonical.
fn race_layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = canonical(tmp.path());
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("inside")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    (tmp, ws, base.join("outside"))
}

#[cfg(unix)]
#[test]
fn beneath_follows_no_symlink_on_the_way() {
    use std::os::unix::fs::symlink;
    let (_tmp, ws, outside) = race_layout();
    let beneath = Beneath::open(&ws).unwrap();
    beneath
        .write(Path::new("inside/new/deep.txt"), b"ok\n", None)
        .unwrap();
    assert_eq!(
        beneath.read(Path::new("inside/new/deep.txt")).unwrap(),
        Some(b"ok\n".to_vec())
    );
    assert_eq!(beneath.read(Path::new("inside/none.txt")).unwrap(), None);
    assert_eq!(beneath.read(Path::new("missing/none.txt")).unwrap(), None);
    // A directory checked as `inside` and replaced by a symlink to the outside afterwards.
    std::fs::rename(ws.join("inside"), ws.join("moved")).unwrap();
    symlink(&outside, ws.join("inside")).unwrap();
    let err = beneath
        .write(Path::new("inside/escaped.txt"), b"x", None)
        .unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert!(beneath.read(Path::new("inside/escaped.txt")).is_err());
    assert!(beneath.remove(Path::new("inside/escaped.txt")).is_err());
    // The last component is never followed either.
    std::fs::write(outside.join("target.txt"), "outside\n").unwrap();
    symlink(outside.join("target.txt"), ws.join("file-link")).unwrap();
    assert!(beneath.write(Path::new("file-link"), b"x", None).is_err());
    assert!(beneath.read(Path::new("file-link")).is_err());
    assert!(std::fs::read_dir(&outside).unwrap().count() == 1);
    assert_eq!(
        std::fs::read_to_string(outside.join("target.txt")).unwrap(),
        "outside\n"
    );
    // Removing the link removes the link, not its target.
    beneath.remove(Path::new("file-link")).unwrap();
    assert!(outside.join("target.txt").exists());
}

#[cfg(unix)]
#[test]
fn beneath_reads_and_writes_regular_files_only() {
    let (_tmp, ws, _outside) = race_layout();
    let beneath = Beneath::open(&ws).unwrap();
    let fifo = ws.join("inside/fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Neither hangs on the FIFO.
    assert!(beneath.read(Path::new("inside/fifo")).is_err());
    assert!(beneath.write(Path::new("inside/fifo"), b"x", None).is_err());
    let err = beneath.read(Path::new("inside")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::IsADirectory);
    assert!(beneath.read(Path::new("../x")).is_err());
}

#[cfg(unix)]
#[test]
fn write_access_names_the_outermost_root_and_the_resolved_path() {
    use std::os::unix::fs::symlink;
    let (_tmp, ws, outside) = race_layout();
    let nested = ws.join("inside");
    let spec = SandboxSpec::from_policy(&workspace_write(&[&nested], true), &ws);
    symlink(ws.join("inside"), ws.join("d")).unwrap();
    assert_eq!(
        spec.write_access(&ws.join("d/x.txt")),
        WriteAccess::Beneath {
            root: ws.clone(),
            relative: PathBuf::from("inside/x.txt"),
        }
    );
    symlink(&outside, ws.join("out")).unwrap();
    assert_eq!(
        spec.write_access(&ws.join("out/x.txt")),
        WriteAccess::Denied
    );
    // Removing the link itself is inside.
    assert_eq!(
        spec.entry_access(&ws.join("out")),
        WriteAccess::Beneath {
            root: ws.clone(),
            relative: PathBuf::from("out"),
        }
    );
    assert_eq!(spec.write_access(&ws), WriteAccess::Denied);
    let full = SandboxSpec::unrestricted(&ws);
    assert_eq!(full.write_access(&outside.join("x")), WriteAccess::Anywhere);
}

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
