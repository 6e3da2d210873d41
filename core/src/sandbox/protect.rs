//! Keeping a repository's `.git` and Weft's home read-only to commands in workspace-write,
//! even where they lie beneath a writable root (where Landlock alone would let them be
//! written: its rights are inherited down a tree and cannot be taken back for a subfolder).
//!
//! The child enters a private mount namespace (inside a new user namespace when it is not
//! root) and bind-mounts each protected path onto itself read-only, before Landlock is
//! applied. Writes there then fail with `EROFS`, renaming or removing the mount point fails
//! with `EBUSY`, and Landlock forbids the sandboxed process to unmount or remount anything.
//! Everything is prepared in the parent; the child only makes system calls.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rustix::fs::{Mode, OFlags, StatVfsMountFlags};
use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::thread::UnshareFlags;

use super::{FileSystemAccess, SandboxSpec};

/// What the child does to protect the paths, prepared in the parent.
pub(crate) struct Protection {
    /// `Some((uid_map, gid_map))` when a user namespace is needed (not root).
    user_maps: Option<(CString, CString)>,
    /// Each path to bind read-only, with the mount flags it must keep (a user namespace may
    /// not clear the flags of the mount it was given).
    paths: Vec<(CString, MountFlags)>,
}

/// The existing paths beneath a writable root that must stay read-only to commands: each
/// root's `.git` (directory or file) and Weft's home — except, as for `apply_patch`, writable
/// roots inside the home: then the home's other entries, down to the roots.
pub(crate) fn protected_mounts(spec: &SandboxSpec) -> Vec<PathBuf> {
    if spec.file_system() != FileSystemAccess::WorkspaceWrite {
        return Vec::new();
    }
    let roots = spec.writable_roots();
    let beneath_root = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    let mut out: Vec<PathBuf> = Vec::new();
    for path in spec.protected_paths() {
        if let Ok(canonical) = std::fs::canonicalize(path)
            && beneath_root(&canonical)
            && !out.contains(&canonical)
        {
            out.push(canonical);
        }
    }
    if let Some(home) = spec.home()
        && home.exists()
        && beneath_root(home)
    {
        let inner: Vec<&PathBuf> = roots
            .iter()
            .filter(|r| r.starts_with(home) && r.as_path() != home)
            .collect();
        carve(home, &inner, &mut out);
    }
    out
}

/// Adds `path` to `out`, or, when writable roots lie inside it, its entries (recursively)
/// except those roots. Symlinks are skipped (a bind would protect their target instead).
fn carve(path: &Path, inner: &[&PathBuf], out: &mut Vec<PathBuf>) {
    if inner.iter().any(|r| r.as_path() == path) {
        return;
    }
    if !inner.iter().any(|r| r.starts_with(path)) {
        if !out.iter().any(|p| p == path) {
            out.push(path.to_path_buf());
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| !t.is_symlink()) {
            carve(&entry.path(), inner, out);
        }
    }
}

/// What the child needs to protect `spec`'s paths; `None` when there is nothing to protect.
/// Refuses (an error text) when the paths exist but mount namespaces are unavailable here,
/// instead of running the command with them writable.
pub(crate) fn prepare(spec: &SandboxSpec) -> Result<Option<Protection>, String> {
    let mounts = protected_mounts(spec);
    if mounts.is_empty() {
        return Ok(None);
    }
    if let Err(error) = namespaces_available() {
        return Err(format!(
            "sandbox unavailable: Weft keeps `.git` and its home read-only to commands with a \
             private mount namespace, which this system refuses ({error}), so it refuses to \
             run the command with {} writable; use danger-full-access to allow it",
            mounts[0].display()
        ));
    }
    let mut paths = Vec::with_capacity(mounts.len());
    for path in mounts {
        let locked = rustix::fs::statvfs(&path)
            .map(|s| locked_flags(s.f_flag))
            .map_err(|e| format!("cannot inspect {}: {e}", path.display()))?;
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("{} contains a NUL byte", path.display()))?;
        paths.push((c, locked));
    }
    Ok(Some(Protection {
        user_maps: user_maps()?,
        paths,
    }))
}

/// The mount flags of an existing mount that a user namespace must keep when remounting.
fn locked_flags(flags: StatVfsMountFlags) -> MountFlags {
    let mut out = MountFlags::empty();
    for (st, ms) in [
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ] {
        if flags.contains(st) {
            out |= ms;
        }
    }
    out
}

/// The identity maps for a user namespace, or `None` when running as root (then a mount
/// namespace alone is entered).
fn user_maps() -> Result<Option<(CString, CString)>, String> {
    if rustix::process::geteuid().is_root() {
        return Ok(None);
    }
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let map = |id: u32| CString::new(format!("{id} {id} 1")).map_err(|e| e.to_string());
    Ok(Some((map(uid)?, map(gid)?)))
}

/// Whether the child can enter the namespaces (probed once, in a forked child that then
/// exits without `exec`); the error says why not.
fn namespaces_available() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE.get_or_init(probe).clone()
}

#[allow(unsafe_code)]
fn probe() -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let empty = Protection {
        user_maps: user_maps()?,
        paths: Vec::new(),
    };
    let mut command = std::process::Command::new("/proc/self/exe");
    // SAFETY: as for the sandboxed child (see `enter`): only system calls on data prepared
    // here; success is reported as `ECANCELED` so that nothing is executed.
    unsafe {
        command.pre_exec(move || {
            enter(&empty)?;
            Err(io::Error::from_raw_os_error(libc::ECANCELED))
        });
    }
    let result = match command.spawn() {
        Err(e) if e.raw_os_error() == Some(libc::ECANCELED) => Ok(()),
        Err(e) => Err(e.to_string()),
        Ok(mut child) => {
            let _ = child.kill();
            let _ = child.wait();
            Err("the probe ran unexpectedly".to_string())
        }
    };
    match &result {
        Ok(()) => tracing::debug!("mount namespaces available for protected paths"),
        Err(error) => tracing::warn!(%error, "mount namespaces unavailable: commands in \
             workspace-write with a .git or Weft's home beneath a writable root are refused"),
    }
    result
}

/// Runs in the forked child, before Landlock: only system calls, no allocation.
#[allow(unsafe_code)]
pub(crate) fn enter(protection: &Protection) -> io::Result<()> {
    let flags = if protection.user_maps.is_some() {
        UnshareFlags::NEWUSER | UnshareFlags::NEWNS
    } else {
        UnshareFlags::NEWNS
    };
    // SAFETY: unsharing namespaces (not `FILES`) leaves no other thread (the forked child
    // has one) observing a changed file-descriptor table.
    unsafe { rustix::thread::unshare_unsafe(flags) }?;
    if let Some((uid_map, gid_map)) = &protection.user_maps {
        write_proc(c"/proc/self/setgroups", b"deny")?;
        write_proc(c"/proc/self/uid_map", uid_map.as_bytes())?;
        write_proc(c"/proc/self/gid_map", gid_map.as_bytes())?;
    }
    rustix::mount::mount_change(
        c"/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )?;
    for (path, locked) in &protection.paths {
        rustix::mount::mount_bind_recursive(path.as_c_str(), path.as_c_str())?;
        rustix::mount::mount_remount(
            path.as_c_str(),
            MountFlags::BIND | MountFlags::RDONLY | *locked,
            c"",
        )?;
    }
    Ok(())
}

fn write_proc(path: &std::ffi::CStr, contents: &[u8]) -> io::Result<()> {
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    let written = rustix::io::write(&fd, contents)?;
    if written != contents.len() {
        return Err(io::Error::from_raw_os_error(libc::EIO));
    }
    Ok(())
}
