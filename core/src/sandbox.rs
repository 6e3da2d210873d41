//! The sandbox for what the agent runs (docs/protocol.md §9.6).
//!
//! A [`SandboxSpec`] is the resolved form of a thread's [`SandboxPolicy`]: which paths may be
//! written and whether the network is reachable. It is enforced in two places:
//!
//! * for child processes (`exec_command`), in the child between `fork` and `exec`: a Landlock
//!   ruleset (read and execute everywhere, write only beneath the allowed roots; nothing at all
//!   in `read-only`) and, when the network is off, a seccomp filter that makes `socket(2)` fail
//!   with `EPERM` for every address family except `AF_UNIX`. Both are inherited by everything
//!   the command starts and cannot be lifted by it.
//! * in-process, by [`SandboxSpec::can_write`] / [`SandboxSpec::write_access`], which
//!   `apply_patch` consults, and [`Beneath`], through which it then reads and writes: beneath
//!   the writable root's directory handle, following no symlink. Each root's `.git` and Weft's
//!   home are protected there (treated as outside the roots). Commands are kept out of them
//!   too, by read-only binds in a private mount namespace entered before Landlock applies
//!   (`protect.rs`: Landlock grants rights down a whole tree and cannot take them back).
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

use crate::config_base::default_home;

mod beneath;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod protect;
mod support;
#[cfg(test)]
mod tests;

pub use beneath::Beneath;
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
    /// Canonical paths beneath the writable roots that stay read-only (see [`protected`]).
    protected: Vec<PathBuf>,
    /// Weft's home, canonical: read-only except for writable roots inside it.
    home: Option<PathBuf>,
    network: bool,
    cwd: PathBuf,
}

/// How a write to one path may be done under a [`SandboxSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteAccess {
    /// Anywhere, as the path says (no filesystem restriction).
    Anywhere,
    /// Only as `relative` beneath the writable root `root`, following no symlink
    /// (through a [`Beneath`] handle of `root`).
    Beneath {
        /// The outermost writable root containing the resolved path.
        root: PathBuf,
        /// The resolved path relative to `root` (plain names only).
        relative: PathBuf,
    },
    /// Not at all: read-only, outside the writable roots, or protected.
    Denied,
}

/// The names beneath every writable root that stay read-only, as the reference keeps them:
/// the repository's `.git` (its hooks and config run code outside the sandbox).
pub const PROTECTED_NAMES: &[&str] = &[".git"];

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
                    protected: Vec::new(),
                    home: None,
                    network: true,
                    cwd,
                }
            }
            SandboxPolicy::ReadOnly { network_access } => SandboxSpec {
                fs: FileSystemAccess::ReadOnly,
                writable_roots: Vec::new(),
                protected: Vec::new(),
                home: None,
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
                let protected = protected(&resolved);
                SandboxSpec {
                    fs: FileSystemAccess::WorkspaceWrite,
                    writable_roots: resolved,
                    protected,
                    home: resolve_for_write(&default_home()),
                    network: *network_access,
                    cwd,
                }
            }
        }
    }

    /// The same sandbox with `home` (instead of `$WEFT_HOME`, see
    /// [`default_home`]) as Weft's protected home; no effect outside
    /// workspace-write.
    pub fn with_home(mut self, home: &Path) -> SandboxSpec {
        if self.fs == FileSystemAccess::WorkspaceWrite {
            self.home = resolve_for_write(&absolute(home, &self.cwd));
        }
        self
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
    /// symlink at the end — lies beneath a writable root and is not protected (a root's
    /// `.git`, see [`PROTECTED_NAMES`], or Weft's home — except a writable root inside the
    /// home). A path that cannot be resolved safely (a `..` through a directory that does not
    /// exist, a symlink loop) is refused.
    pub fn can_write(&self, path: &Path) -> bool {
        self.write_access(path) != WriteAccess::Denied
    }

    /// How writing `path` may be done (see [`SandboxSpec::can_write`] for what is allowed).
    /// In workspace-write the answer names the root and the resolved path beneath it, for a
    /// write through a [`Beneath`] handle: resolving here and writing there without following
    /// symlinks means a symlink swapped in between cannot redirect the write.
    pub fn write_access(&self, path: &Path) -> WriteAccess {
        self.access_at(|| resolve_for_write(&absolute(path, &self.cwd)))
    }

    /// Like [`SandboxSpec::write_access`] for removing the directory entry `path` itself: a
    /// symlink at the end is the entry, not where it points (only the parent is resolved).
    pub fn entry_access(&self, path: &Path) -> WriteAccess {
        self.access_at(|| {
            let path = absolute(path, &self.cwd);
            Some(resolve_for_write(path.parent()?)?.join(path.file_name()?))
        })
    }

    fn access_at(&self, resolve: impl FnOnce() -> Option<PathBuf>) -> WriteAccess {
        match self.fs {
            FileSystemAccess::Unrestricted => WriteAccess::Anywhere,
            FileSystemAccess::ReadOnly => WriteAccess::Denied,
            FileSystemAccess::WorkspaceWrite => {
                let Some(resolved) = resolve() else {
                    return WriteAccess::Denied;
                };
                if self.is_protected(&resolved) {
                    return WriteAccess::Denied;
                }
                // The outermost root: a nested root could itself be replaced by a symlink
                // from inside the one that contains it.
                let root = self
                    .writable_roots
                    .iter()
                    .filter(|root| resolved.starts_with(root))
                    .min_by_key(|root| root.components().count());
                let Some(root) = root else {
                    return WriteAccess::Denied;
                };
                match resolved.strip_prefix(root) {
                    // The root itself is a directory, not a file to write.
                    Ok(relative) if !relative.as_os_str().is_empty() => WriteAccess::Beneath {
                        root: root.clone(),
                        relative: relative.to_path_buf(),
                    },
                    _ => WriteAccess::Denied,
                }
            }
        }
    }

    /// Whether `path` (resolved as for [`SandboxSpec::can_write`]) is one of the protected
    /// paths beneath the writable roots: a root's `.git` or Weft's home (workspace-write only).
    pub fn is_protected_path(&self, path: &Path) -> bool {
        self.fs == FileSystemAccess::WorkspaceWrite
            && resolve_for_write(&absolute(path, &self.cwd)).is_some_and(|p| self.is_protected(&p))
    }

    /// Whether the resolved `path` is read-only although beneath a writable root.
    fn is_protected(&self, path: &Path) -> bool {
        if self.protected.iter().any(|p| path.starts_with(p)) {
            return true;
        }
        match &self.home {
            // A workspace kept inside the home (a writable root strictly beneath it) stays
            // writable; the home's own files (config.toml, rollouts, the state DB) do not.
            Some(home) if path.starts_with(home) => !self
                .writable_roots
                .iter()
                .any(|root| root.starts_with(home) && root != home && path.starts_with(root)),
            _ => false,
        }
    }

    /// The canonical paths beneath the writable roots that stay read-only (without Weft's
    /// home, see [`SandboxSpec::home`]).
    pub fn protected_paths(&self) -> &[PathBuf] {
        &self.protected
    }

    /// Weft's home (canonical), read-only in workspace-write except for writable roots inside
    /// it; `None` in the other modes.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
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

/// Every root's [`PROTECTED_NAMES`], as named and as resolved (a `.git` that is a symlink
/// protects where it points too), whether or not they exist yet.
fn protected(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for root in roots {
        for name in PROTECTED_NAMES {
            let named = root.join(name);
            let resolved = resolve_for_write(&named);
            for path in std::iter::once(named).chain(resolved) {
                if !out.contains(&path) {
                    out.push(path);
                }
            }
        }
    }
    out
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
