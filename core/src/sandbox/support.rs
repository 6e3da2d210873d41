//! What the running kernel can enforce, probed once per process.

use std::sync::OnceLock;

use super::{FileSystemAccess, SandboxSpec};

/// The sandboxing features of the running kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSupport {
    /// The Landlock ABI version detected (1 = Linux 5.13, 2 = 5.19, 3 = 6.2, 4 = 6.7,
    /// 5 = 6.10, 6 = 6.12 or later; the probe stops at 6), or `None` when Landlock is not
    /// built in or not enabled at boot (`lsm=` must list `landlock`).
    pub landlock_abi: Option<u8>,
    /// Whether Landlock restricts every kind of write the sandbox denies (ABI ≥ 3: with 1 and
    /// 2, `truncate(2)` of an existing file and, with 1, cross-directory renames and links are
    /// not covered). Commands still run with what the kernel offers.
    pub landlock_full: bool,
    /// Whether seccomp-bpf filters are available (needed to deny the network).
    pub seccomp: bool,
}

/// The kernel's sandboxing support (probed on first use, then cached).
pub fn sandbox_support() -> SandboxSupport {
    static SUPPORT: OnceLock<SandboxSupport> = OnceLock::new();
    SUPPORT.get_or_init(probe).clone()
}

impl SandboxSupport {
    /// Whether a command confined by `spec` may run here. The error explains, for the model
    /// and the user, why Weft refuses instead of running the command unconfined.
    pub fn check(&self, spec: &SandboxSpec) -> Result<(), String> {
        if !spec.is_confined() {
            return Ok(());
        }
        let mode = match spec.file_system() {
            FileSystemAccess::ReadOnly => "read-only",
            FileSystemAccess::WorkspaceWrite => "workspace-write",
            FileSystemAccess::Unrestricted => "network-restricted",
        };
        if spec.file_system() != FileSystemAccess::Unrestricted && self.landlock_abi.is_none() {
            return Err(format!(
                "sandbox unavailable: this kernel does not provide Landlock (Linux 5.13 or \
                 later with `landlock` in the enabled LSMs), so Weft cannot enforce the \
                 {mode} sandbox and refuses to run the command unconfined; run it under \
                 danger-full-access to allow it"
            ));
        }
        if !spec.network_allowed() && !self.seccomp {
            return Err(format!(
                "sandbox unavailable: this kernel does not provide seccomp filters, so Weft \
                 cannot deny network access in the {mode} sandbox and refuses to run the \
                 command; allow network access or use danger-full-access"
            ));
        }
        Ok(())
    }

    /// One line for logs and diagnostics.
    pub fn summary(&self) -> String {
        let landlock = match self.landlock_abi {
            Some(abi) if self.landlock_full => format!("Landlock ABI {abi} (full)"),
            Some(abi) => format!("Landlock ABI {abi} (partial: some writes are not covered)"),
            None => "no Landlock (sandboxed commands are refused)".to_string(),
        };
        let seccomp = if self.seccomp {
            "seccomp available"
        } else {
            "no seccomp (network cannot be denied)"
        };
        format!("{landlock}; {seccomp}")
    }
}

#[cfg(target_os = "linux")]
fn probe() -> SandboxSupport {
    let landlock_abi = probe_landlock();
    SandboxSupport {
        landlock_abi,
        landlock_full: landlock_abi.is_some_and(|abi| abi >= 3),
        seccomp: probe_seccomp(),
    }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> SandboxSupport {
    SandboxSupport {
        landlock_abi: None,
        landlock_full: false,
        seccomp: false,
    }
}

/// The highest ABI for which the kernel accepts a ruleset handling that ABI's new rights
/// (each probe creates and drops one ruleset; nothing is enforced on this process).
#[cfg(target_os = "linux")]
fn probe_landlock() -> Option<u8> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, Scope,
    };
    let strict = || Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
    let fs = |abi: ABI| {
        strict()
            .handle_access(AccessFs::from_all(abi))
            .and_then(Ruleset::create)
            .is_ok()
    };
    let net = || {
        strict()
            .handle_access(AccessNet::from_all(ABI::V4))
            .and_then(Ruleset::create)
            .is_ok()
    };
    let scope = || {
        strict()
            .scope(Scope::from_all(ABI::V6))
            .and_then(Ruleset::create)
            .is_ok()
    };
    if !fs(ABI::V1) {
        return None;
    }
    let abi = if scope() {
        6
    } else if fs(ABI::V5) {
        5
    } else if net() {
        4
    } else if fs(ABI::V3) {
        3
    } else if fs(ABI::V2) {
        2
    } else {
        1
    };
    Some(abi)
}

/// seccomp is compiled in when `/proc/self/status` reports a `Seccomp:` field.
#[cfg(target_os = "linux")]
fn probe_seccomp() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|status| status.lines().any(|line| line.starts_with("Seccomp:")))
        .unwrap_or(false)
}
