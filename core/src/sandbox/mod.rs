//! The sandbox for what the agent runs (docs/protocol.md §9.5).
//!
//! A [`SandboxSpec`] is the resolved form of a thread's [`SandboxPolicy`]: which paths may be
//! written and whether the network is reachable. It is enforced in two places:
//!
//! * for child processes (`exec_command`), in the child between `fork` and `exec`: a Landlock
//!   ruleset (read and execute everywhere, write only beneath the allowed roots; nothing at all
//!   in `read-only`) and, when the network is off, a seccomp filter that makes `socket(2)` fail
//!   with `EPERM` for every address family except `AF_UNIX`. Both are inherited by everything
//!   the command starts and cannot be lifted by it.
//! * in-process, by [`SandboxSpec::can_write`], which `apply_patch` consults before it writes.
//!
//! Where the kernel lacks Landlock (or seccomp, when the network must be denied), a confined
//! command is refused ([`SandboxSupport::check`]) instead of running unconfined.
//! `danger-full-access` and `externalSandbox` run unconfined.
//!
//! Why seccomp on `socket(2)` rather than on `connect`/`bind`/…: refusing to create IP sockets
//! closes every network path at once (TCP, UDP, raw, netlink, `io_uring` sockets — `io_uring`
//! is refused too), keeps `AF_UNIX` working for local IPC (ssh-agent, language servers,
//! `make -j` job servers), and needs no user or network namespace, which may be disabled.

use std::path::{Component, Path, PathBuf};

use weft_protocol::SandboxPolicy;

#[cfg(target_os = "linux")]
mod linux;
mod support;
#[cfg(test)]
mod tests;

#[cfg(target_os = "linux")]
pub(crate) use linux::{ChildSandbox, install_in_command, prepare_child_sandbox};
pub use support::{SandboxSupport, sandbox_support};

/// Character devices that stay writable in every confined mode (commands redirect to them).
pub const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// What the filesystem allows a command to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileSystemAccess {
    /// No restriction (`danger-full-access`, `externalSandbox`).
    Unrestricted,
    /// Nothing may be written (except [`WRITABLE_DEVICES`]).
    ReadOnly,
    /// Only beneath [`SandboxSpec::writable_roots`] (and [`WRITABLE_DEVICES`]).
    WorkspaceWrite,
}

/// The sandbox a command runs under, resolved from a [`SandboxPolicy`] and the turn's cwd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSpec {
    fs: FileSystemAccess,
    writable_roots: Vec<PathBuf>,
    network: bool,
    cwd: PathBuf,
}

impl SandboxSpec {
    /// Resolves a policy against the turn's working directory.
    ///
    /// `workspaceWrite` makes writable: `cwd`, every `writableRoots` entry (relative entries
    /// are taken relative to `cwd`), `$TMPDIR` unless `excludeTmpdirEnvVar`, and `/tmp` unless
    /// `excludeSlashTmp`. Roots are canonicalised (symlinks resolved) where they exist.
    pub fn from_policy(policy: &SandboxPolicy, cwd: &Path) -> SandboxSpec {
        let cwd = absolute(cwd, Path::new("/"));
        match policy {
            SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. } => {
                SandboxSpec {
                    fs: FileSystemAccess::Unrestricted,
                    writable_roots: Vec::new(),
                    network: true,
                    cwd,
                }
            }
            SandboxPolicy::ReadOnly { network_access } => SandboxSpec {
                fs: FileSystemAccess::ReadOnly,
                writable_roots: Vec::new(),
                network: *network_access,
                cwd,
            },
            SandboxPolicy::WorkspaceWrite {
                writable_roots,
                network_access,
                exclude_tmpdir_env_var,
                exclude_slash_tmp,
            } => {
                let mut roots = vec![cwd.clone()];
                roots.extend(
                    writable_roots
                        .iter()
                        .filter(|r| !r.is_empty())
                        .map(|r| absolute(Path::new(r), &cwd)),
                );
                // A `$TMPDIR` of `/` (or a symlink to it) would lift the sandbox: ignored.
                if !exclude_tmpdir_env_var
                    && let Some(tmpdir) = std::env::var_os("TMPDIR")
                    && Path::new(&tmpdir).is_absolute()
                    && resolve_for_write(Path::new(&tmpdir)).is_some_and(|t| t != Path::new("/"))
                {
                    roots.push(PathBuf::from(tmpdir));
                }
                if !exclude_slash_tmp {
                    roots.push(PathBuf::from("/tmp"));
                }
                let mut resolved: Vec<PathBuf> = Vec::new();
                for root in roots {
                    let Some(root) = resolve_for_write(&root) else {
                        continue;
                    };
                    if !resolved.contains(&root) {
                        resolved.push(root);
                    }
                }
                SandboxSpec {
                    fs: FileSystemAccess::WorkspaceWrite,
                    writable_roots: resolved,
                    network: *network_access,
                    cwd,
                }
            }
        }
    }

    /// No sandbox at all.
    pub fn unrestricted(cwd: &Path) -> SandboxSpec {
        SandboxSpec::from_policy(&SandboxPolicy::DangerFullAccess, cwd)
    }

    /// What may be written.
    pub fn file_system(&self) -> FileSystemAccess {
        self.fs
    }

    /// The canonical writable roots (`workspace-write` only; empty otherwise).
    pub fn writable_roots(&self) -> &[PathBuf] {
        &self.writable_roots
    }

    /// Whether commands may use the network.
    pub fn network_allowed(&self) -> bool {
        self.network
    }

    /// The working directory relative paths are resolved against.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Whether anything must be enforced for a child process.
    pub fn is_confined(&self) -> bool {
        self.fs != FileSystemAccess::Unrestricted || !self.network
    }

    /// Whether writing `path` (relative paths are resolved against the cwd) is allowed: always
    /// under no filesystem restriction, never in read-only, and in workspace-write only when
    /// the path — after resolving symlinks of every existing ancestor, and following a dangling
    /// symlink at the end — lies beneath a writable root. A path that cannot be resolved safely
    /// (a `..` through a directory that does not exist, a symlink loop) is refused.
    pub fn can_write(&self, path: &Path) -> bool {
        match self.fs {
            FileSystemAccess::Unrestricted => true,
            FileSystemAccess::ReadOnly => false,
            FileSystemAccess::WorkspaceWrite => {
                let Some(resolved) = resolve_for_write(&absolute(path, &self.cwd)) else {
                    return false;
                };
                self.writable_roots
                    .iter()
                    .any(|root| resolved.starts_with(root))
            }
        }
    }

    /// A short description for error messages and logs.
    pub fn describe(&self) -> String {
        let fs = match self.fs {
            FileSystemAccess::Unrestricted => "full filesystem access".to_string(),
            FileSystemAccess::ReadOnly => "read-only filesystem".to_string(),
            FileSystemAccess::WorkspaceWrite => {
                let roots: Vec<String> = self
                    .writable_roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect();
                format!("writes only in {}", roots.join(", "))
            }
        };
        let net = if self.network {
            "network allowed"
        } else {
            "network denied"
        };
        format!("{fs}; {net}")
    }
}

/// Whether a failed command's output looks like the sandbox refused it: a non-zero exit with
/// the OS's permission errors (`EACCES`/`EPERM`, as printed by libc's `strerror`, Python and
/// Rust) or the typical "read-only file system" text. Heuristic, for the caller to tell the
/// model (or to offer an escalation) — never proof.
pub fn looks_like_sandbox_denial(output: &str, exit_code: Option<i32>) -> bool {
    if exit_code == Some(0) {
        return false;
    }
    const MARKERS: &[&str] = &[
        "permission denied",
        "operation not permitted",
        "read-only file system",
    ];
    let lower = output.to_lowercase();
    MARKERS.iter().any(|m| lower.contains(m))
}

/// `path` made absolute against `base`, with `.` components dropped (no other normalisation).
fn absolute(path: &Path, base: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    joined
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// Where a write to the absolute `path` would land: the canonical path when it exists; for a
/// dangling symlink, where it points; otherwise the resolved parent joined with the file name.
/// `None` when that cannot be decided (`..` through a missing directory, symlink loops).
fn resolve_for_write(path: &Path) -> Option<PathBuf> {
    resolve_with_depth(path, 0)
}

fn resolve_with_depth(path: &Path, depth: u32) -> Option<PathBuf> {
    const MAX_SYMLINKS: u32 = 40;
    if depth > MAX_SYMLINKS {
        return None;
    }
    if let Ok(canonical) = std::fs::canonicalize(path) {
        return Some(canonical);
    }
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.file_type().is_symlink()
    {
        let target = std::fs::read_link(path).ok()?;
        let target = if target.is_absolute() {
            target
        } else {
            path.parent()?.join(target)
        };
        return resolve_with_depth(&target, depth + 1);
    }
    let name = path.file_name()?;
    let parent = path.parent()?;
    Some(resolve_with_depth(parent, depth)?.join(name))
}
