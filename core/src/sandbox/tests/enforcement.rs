//! Enforcement on real commands: refusal without kernel support, write roots, `/tmp`, read-only,
//! network, Unix sockets.

use super::*;

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
