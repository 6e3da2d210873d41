//! Linux enforcement: a Landlock ruleset and a seccomp filter, both prepared in the parent and
//! applied in the child between `fork` and `exec`.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::{FileSystemAccess, SandboxSpec, WRITABLE_DEVICES};

/// The Landlock ABI whose rights we ask for. Best effort: on older kernels the rights they do
/// not know are dropped by the `landlock` crate (see [`super::SandboxSupport::landlock_full`]).
/// ABI 5 is the last one that adds filesystem rights we handle (`IoctlDev`).
const TARGET_ABI: ABI = ABI::V5;

/// What a child process applies to itself before `exec`, prepared in the parent so that the
/// child only makes system calls.
pub(crate) struct ChildSandbox {
    /// A created Landlock ruleset (close-on-exec).
    landlock: Option<OwnedFd>,
    /// The compiled network filter.
    seccomp: Option<BpfProgram>,
    /// The read-only binds for `.git` and Weft's home beneath the writable roots.
    protection: Option<super::protect::Protection>,
}

/// Builds what the child needs to confine itself to `spec`; `None` when `spec` confines
/// nothing. Errors are texts for the caller (they mean the sandbox could not be built).
pub(crate) fn prepare_child_sandbox(spec: &SandboxSpec) -> Result<Option<ChildSandbox>, String> {
    if !spec.is_confined() {
        return Ok(None);
    }
    let landlock = match spec.file_system() {
        FileSystemAccess::Unrestricted => None,
        FileSystemAccess::ReadOnly | FileSystemAccess::WorkspaceWrite => {
            Some(landlock_ruleset(spec)?)
        }
    };
    let seccomp = if spec.network_allowed() {
        None
    } else {
        Some(network_filter()?)
    };
    let protection = super::protect::prepare(spec)?;
    Ok(Some(ChildSandbox {
        landlock,
        seccomp,
        protection,
    }))
}

/// Read and execute everywhere; read and write the [`WRITABLE_DEVICES`]; everything beneath
/// each writable root (workspace-write only).
fn landlock_ruleset(spec: &SandboxSpec) -> Result<OwnedFd, String> {
    let failed = |e: landlock::RulesetError| format!("cannot build the Landlock ruleset: {e}");
    let everywhere = AccessFs::from_read(TARGET_ABI) | AccessFs::IoctlDev;
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
    let root = PathFd::new("/").map_err(|e| format!("cannot open / for Landlock: {e}"))?;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TARGET_ABI))
        .map_err(failed)?
        .create()
        .map_err(failed)?
        .add_rule(PathBeneath::new(root, everywhere))
        .map_err(failed)?;
    for device_path in WRITABLE_DEVICES {
        if let Ok(fd) = PathFd::new(device_path) {
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, device))
                .map_err(failed)?;
        }
    }
    if spec.file_system() == FileSystemAccess::WorkspaceWrite {
        for writable in spec.writable_roots() {
            match PathFd::new(writable) {
                // Rights that do not apply to a non-directory are dropped by the crate.
                Ok(fd) => {
                    ruleset = ruleset
                        .add_rule(PathBeneath::new(fd, AccessFs::from_all(TARGET_ABI)))
                        .map_err(failed)?;
                }
                Err(error) => {
                    tracing::debug!(root = %writable.display(), %error, "writable root skipped");
                }
            }
        }
    }
    let fd: Option<OwnedFd> = ruleset.into();
    fd.ok_or_else(|| "Landlock is not available on this kernel".to_string())
}

/// `socket(2)` and `socketpair(2)` fail with `EPERM` for every domain but `AF_UNIX`, and
/// `io_uring_setup(2)` fails too (io_uring can open sockets without `socket(2)`). Any other
/// architecture's system calls (32-bit compat) kill the process, per `seccompiler`.
fn network_filter() -> Result<BpfProgram, String> {
    let failed = |e: seccompiler::BackendError| format!("cannot build the seccomp filter: {e}");
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(failed)?;
    let not_unix = || {
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .and_then(|domain| SeccompRule::new(vec![domain]))
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut deny = |nr: i64, conditional: bool| -> Result<(), String> {
        let chain = if conditional {
            vec![not_unix().map_err(failed)?]
        } else {
            Vec::new()
        };
        rules.insert(nr, chain);
        Ok(())
    };
    deny(libc::SYS_socket, true)?;
    deny(libc::SYS_socketpair, true)?;
    deny(libc::SYS_io_uring_setup, false)?;
    // The x32 ABI shares the x86_64 audit arch with the syscall numbers offset by this bit.
    #[cfg(target_arch = "x86_64")]
    {
        const X32_SYSCALL_BIT: i64 = 0x4000_0000;
        deny(libc::SYS_socket | X32_SYSCALL_BIT, true)?;
        deny(libc::SYS_socketpair | X32_SYSCALL_BIT, true)?;
        deny(libc::SYS_io_uring_setup | X32_SYSCALL_BIT, false)?;
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(failed)?;
    BpfProgram::try_from(filter).map_err(failed)
}

/// Makes the child confine itself before `exec`. The ruleset fd and the filter are owned by the
/// command's pre-exec closure; drop the command after spawning so the parent's copy is closed.
#[allow(unsafe_code)]
pub(crate) fn install_in_command(command: &mut tokio::process::Command, sandbox: ChildSandbox) {
    use std::io;
    use std::os::fd::AsRawFd;

    /// Runs in the forked child.
    fn enter(sandbox: &ChildSandbox) -> io::Result<()> {
        // First: Landlock, once applied, forbids mounting.
        if let Some(protection) = &sandbox.protection {
            super::protect::enter(protection)?;
        }
        if let Some(ruleset) = &sandbox.landlock {
            // SAFETY: plain `prctl(2)` with integer arguments; no memory is touched.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `landlock_restrict_self(2)` takes a ruleset fd (alive: owned by the
            // closure) and flags; no memory is passed.
            let rc =
                unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(program) = &sandbox.seccomp {
            match seccompiler::apply_filter(program) {
                Ok(()) => {}
                Err(seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e)) => {
                    return Err(e);
                }
                Err(_) => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
            }
        }
        Ok(())
    }

    // SAFETY: the closure runs in the child after `fork`, where only async-signal-safe work is
    // sound (another thread of the parent may have held the allocator's lock). `enter` only
    // issues system calls on data prepared in the parent — the ruleset fd and the compiled BPF
    // program (`apply_filter` builds its `sock_fprog` on the stack) — allocates nothing, takes
    // no locks, and reports failures as raw OS errors (`last_os_error` does not allocate).
    unsafe {
        command.pre_exec(move || enter(&sandbox));
    }
}
