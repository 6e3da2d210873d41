//! The policy's path rules in-process, and the support report.

use super::*;

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
