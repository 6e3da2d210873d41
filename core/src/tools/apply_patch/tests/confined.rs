//! Patches under a sandbox ([`SandboxFiles`]): a symlink swapped in between the check and the
//! write cannot redirect the write, and protected paths are refused.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use weft_protocol::SandboxPolicy;

use super::super::*;
use super::wrap;
use crate::sandbox::SandboxSpec;

/// `ws` (the only writable root) holding `inside/`, and `outside/` next to it.
struct Layout {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    spec: SandboxSpec,
}

impl Layout {
    fn new() -> Layout {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        fs::create_dir_all(ws.join("inside")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        let policy = SandboxPolicy::WorkspaceWrite {
            writable_roots: Vec::new(),
            network_access: false,
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: true,
        };
        let spec = SandboxSpec::from_policy(&policy, &ws).with_home(&base.join("home"));
        Layout {
            _tmp: tmp,
            ws,
            outside,
            spec,
        }
    }

    fn files(&self) -> SandboxFiles {
        SandboxFiles::new(self.spec.clone(), Vec::new())
    }

    fn plan(&self, body: &str) -> Result<PatchPlan, PatchError> {
        let spec = &self.spec;
        let can_write = |p: &Path| path_is_writable(p, &|q| spec.can_write(q));
        plan_patch_with(&wrap(body), &self.ws, &can_write, &self.files())
    }

    fn outside_is_empty(&self) -> bool {
        fs::read_dir(&self.outside).unwrap().next().is_none()
    }

    /// Applies `plan`, which must fail without writing outside.
    fn apply_refused(&self, plan: &PatchPlan) -> PatchError {
        let err = apply_plan_with(plan, &self.files()).unwrap_err();
        assert!(
            self.outside_is_empty(),
            "the write went outside (a swapped symlink followed): {err}"
        );
        err
    }
}

/// The race of issue 11: `d` links inside when the patch is checked and outside when it is
/// written. The write must not land outside.
#[test]
fn a_symlink_swapped_after_the_check_does_not_redirect_the_write() {
    let l = Layout::new();
    symlink(l.ws.join("inside"), l.ws.join("d")).unwrap();
    let plan = l
        .plan("*** Add File: d/race.txt\n+raced\n*** Add File: plain.txt\n+plain")
        .unwrap();
    fs::remove_file(l.ws.join("d")).unwrap();
    symlink(&l.outside, l.ws.join("d")).unwrap();
    let err = l.apply_refused(&plan);
    assert!(err.wrote_nothing(), "{err}");
    assert!(
        err.model_text().starts_with("patch rejected: "),
        "{}",
        err.model_text()
    );
    assert!(!l.ws.join("plain.txt").exists());
}

/// The same race one level deeper: a real directory checked, then replaced by a symlink.
/// (A swap between this last check and the write itself makes the write fail on the
/// symlink: `sandbox::tests::beneath_follows_no_symlink_on_the_way`.)
#[test]
fn a_directory_replaced_by_a_symlink_is_not_written_through() {
    let l = Layout::new();
    let plan = l.plan("*** Add File: inside/sub/x.txt\n+x").unwrap();
    fs::rename(l.ws.join("inside"), l.ws.join("was-inside")).unwrap();
    fs::create_dir(l.ws.join("inside")).unwrap();
    symlink(&l.outside, l.ws.join("inside/sub")).unwrap();
    let err = l.apply_refused(&plan);
    assert!(matches!(err, PatchError::NotWritable { .. }), "{err}");
}

#[test]
fn a_patch_through_a_symlink_to_the_outside_is_refused() {
    let l = Layout::new();
    symlink(&l.outside, l.ws.join("link")).unwrap();
    let err = l.plan("*** Add File: link/x.txt\n+x").unwrap_err();
    assert!(matches!(err, PatchError::NotWritable { .. }), "{err}");
    // Even a plan that skipped the check cannot write there.
    let unchecked = plan_patch_with(
        &wrap("*** Add File: link/x.txt\n+x"),
        &l.ws,
        &|_| true,
        &l.files(),
    )
    .unwrap();
    let err = l.apply_refused(&unchecked);
    assert!(matches!(err, PatchError::NotWritable { .. }), "{err}");
}

#[test]
fn symlinks_that_stay_inside_still_work() {
    let l = Layout::new();
    fs::write(l.ws.join("inside/real.txt"), "one\n").unwrap();
    symlink(l.ws.join("inside"), l.ws.join("alias")).unwrap();
    let plan = l
        .plan("*** Update File: alias/real.txt\n@@\n-one\n+two\n*** Add File: alias/new.txt\n+new")
        .unwrap();
    apply_plan_with(&plan, &l.files()).unwrap();
    assert_eq!(
        fs::read_to_string(l.ws.join("inside/real.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(
        fs::read_to_string(l.ws.join("inside/new.txt")).unwrap(),
        "new\n"
    );
    assert!(l.ws.join("alias").is_symlink());
}

#[test]
fn git_and_the_home_are_refused() {
    let l = Layout::new();
    fs::create_dir_all(l.ws.join(".git/hooks")).unwrap();
    fs::write(l.ws.join(".git/config"), "[core]\n").unwrap();
    for body in [
        "*** Add File: .git/hooks/pre-commit\n+#!/bin/sh",
        "*** Update File: .git/config\n@@\n-[core]\n+[core]\n+\thooksPath = /tmp",
        "*** Delete File: .git/config",
    ] {
        let err = l.plan(body).unwrap_err();
        assert!(
            matches!(err, PatchError::NotWritable { .. }),
            "{body}: {err}"
        );
    }
    assert!(!l.ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        fs::read_to_string(l.ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(l.spec.is_protected_path(&l.ws.join(".git/config")));
}

#[test]
fn approved_paths_outside_are_written_as_they_are() {
    let l = Layout::new();
    let target = l.outside.join("approved.txt");
    let body = format!("*** Add File: {}\n+ok", target.display());
    let plan = plan_patch_with(&wrap(&body), &l.ws, &|_| true, &l.files()).unwrap();
    assert!(matches!(
        apply_plan_with(&plan, &l.files()),
        Err(PatchError::NotWritable { .. })
    ));
    let approved = SandboxFiles::new(l.spec.clone(), vec![target.clone()]);
    apply_plan_with(&plan, &approved).unwrap();
    assert_eq!(fs::read_to_string(&target).unwrap(), "ok\n");
}
