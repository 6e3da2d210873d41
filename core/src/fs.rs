//! The file access behind the `fs/*` methods (docs/protocol.md §7.31): what a client may read,
//! write and watch on the daemon's machine.
//!
//! Every operation starts from an open directory handle and names what it touches relative to
//! it (`openat(2)` and friends), so the place that was checked is the place that is used:
//!
//! - With `[fs] roots`, a path must lie beneath a root; it is walked from the root's handle one
//!   component at a time with `O_NOFOLLOW`, as `apply_patch` walks its writable roots
//!   (`sandbox/beneath.rs`), so no symbolic link — swapped in before or during the call — leads
//!   out of the roots.
//! - Without roots a client reaches what the daemon's user may, as in the reference: links are
//!   followed, but the object finally opened is checked by its real path (the kernel's, from
//!   `/proc/self/fd`), never by the name asked for.
//! - Either way nothing beneath `$WEFT_HOME` (its tokens, the state DB, the web sign-in URL, the
//!   rollouts, the config) is ever read, written, listed or watched, and no directory that
//!   contains it is removed or copied; nor is the daemon's own `/proc/<pid>` (its environment
//!   holds provider keys, its `fd/` the state DB).
//!
//! Files are opened `O_PATH` first and their type checked on the handle: a FIFO, socket or
//! device is refused before anything could block on it. Sizes are bounded by
//! `limits.max_fs_file_bytes`.

mod tree;
pub mod watch;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags, mkdirat, openat, statat};
use rustix::io::Errno;
use weft_protocol::fs_api::{
    AbsolutePathBuf, FsGetMetadataResponse, FsReadDirectoryEntry, FsReadDirectoryResponse,
};

pub use self::watch::{FsWatches, WatchError, WatchSubscription};
use crate::config::{Config, FsConfig};

/// Why an `fs/*` call failed: a refusal of the request (`-32600` on the wire) or what the
/// operating system said (`-32603`, with its text, as the reference answers).
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// The request is refused (its path, its size, its kind of file).
    #[error("{0}")]
    Invalid(String),
    /// The operation failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl From<Errno> for FsError {
    fn from(errno: Errno) -> Self {
        FsError::Io(io::Error::from(errno))
    }
}

/// One of `[fs] roots`: as written and as resolved when the daemon started.
#[derive(Debug, Clone)]
struct Root {
    spelled: PathBuf,
    canonical: PathBuf,
}

/// The file access of the `fs/*` methods: the roots, the protected `$WEFT_HOME` and the size
/// bound, shared by every connection.
#[derive(Debug)]
pub struct FsAccess {
    roots: Option<Vec<Root>>,
    /// `$WEFT_HOME` as configured and resolved (both are protected).
    homes: Vec<PathBuf>,
    /// The daemon's own `/proc/<pid>`: its environment (provider keys), memory and open files.
    own_proc: PathBuf,
    max_file_bytes: u64,
}

/// A located path: the open directory holding it and its name there (`None` when the path is
/// a root itself, or `/`, and `dir` is the object).
struct Target {
    dir: OwnedFd,
    name: Option<OsString>,
    /// The path as the request named it (normalized), for messages.
    shown: PathBuf,
}

impl FsAccess {
    /// The access `config` allows: its `[fs]` roots (resolved now), its `$WEFT_HOME` and its
    /// `limits.max_fs_file_bytes`.
    pub fn new(config: &Config) -> FsAccess {
        FsAccess::with(&config.fs, &config.home, config.limits.max_fs_file_bytes)
    }

    /// The access of these settings.
    pub fn with(fs: &FsConfig, home: &Path, max_file_bytes: u64) -> FsAccess {
        let resolve = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.into());
        let roots = fs.roots.as_ref().map(|roots| {
            roots
                .iter()
                .map(|root| Root {
                    spelled: normalized(root),
                    canonical: resolve(root),
                })
                .collect()
        });
        let mut homes = vec![normalized(home), resolve(home)];
        homes.dedup();
        FsAccess {
            roots,
            homes,
            own_proc: PathBuf::from(format!("/proc/{}", std::process::id())),
            max_file_bytes,
        }
    }

    /// Whether `[fs] roots` confine the paths.
    pub fn confined(&self) -> bool {
        self.roots.is_some()
    }

    /// The largest file read or written, in bytes.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    /// `fs/readFile`: the contents of the regular file at `path`.
    pub fn read_file(&self, path: &AbsolutePathBuf) -> Result<Vec<u8>, FsError> {
        let target = self.locate(path)?;
        let handle = self.open_object(&target)?;
        let stat = rustix::fs::fstat(&handle)?;
        self.refuse_link(&target, &stat)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(not_a_file(&target.shown));
        }
        self.within_size(&target.shown, stat.st_size as u64)?;
        let mut file = reopen(&handle, OFlags::RDONLY)?;
        let mut bytes = Vec::new();
        (&mut file)
            .take(self.max_file_bytes + 1)
            .read_to_end(&mut bytes)?;
        self.within_size(&target.shown, bytes.len() as u64)?;
        Ok(bytes)
    }

    /// `fs/writeFile`: `data` becomes the contents of the file at `path` (created with mode
    /// 0666 less the umask, or truncated; its directory must exist).
    pub fn write_file(&self, path: &AbsolutePathBuf, data: &[u8]) -> Result<(), FsError> {
        self.within_size(path.as_path(), data.len() as u64)?;
        let target = self.locate(path)?;
        let mut file = self.open_for_write(&target)?;
        file.set_len(0)?;
        file.write_all(data)?;
        Ok(())
    }

    /// `fs/getMetadata`: what `path` is (following a symbolic link, except beneath roots,
    /// where a link resolves to nothing) and its times.
    pub fn metadata(&self, path: &AbsolutePathBuf) -> Result<FsGetMetadataResponse, FsError> {
        let target = self.locate(path)?;
        self.guard_name(&target)?;
        let link = target.open(OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC)?;
        let link_meta = File::from(link).metadata()?;
        let is_symlink = link_meta.is_symlink();
        let meta = if is_symlink && !self.confined() {
            let handle = self.open_object(&target)?;
            File::from(handle).metadata()?
        } else {
            link_meta
        };
        let followed = !is_symlink || !self.confined();
        Ok(FsGetMetadataResponse {
            is_directory: followed && meta.is_dir(),
            is_file: followed && meta.is_file(),
            is_symlink,
            created_at_ms: meta.created().ok().map_or(0, unix_ms),
            modified_at_ms: meta.modified().ok().map_or(0, unix_ms),
        })
    }

    /// `fs/readDirectory`: the entries of the directory at `path`, in the directory's order.
    pub fn read_directory(
        &self,
        path: &AbsolutePathBuf,
    ) -> Result<FsReadDirectoryResponse, FsError> {
        let target = self.locate(path)?;
        self.guard_name(&target)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | self.no_follow();
        let dir = target.open(flags).map_err(|e| self.explain(&target, e))?;
        self.guard_real(&dir, &target.shown)?;
        let follow = if self.confined() {
            AtFlags::SYMLINK_NOFOLLOW
        } else {
            AtFlags::empty()
        };
        let mut entries = Vec::new();
        for entry in Dir::read_from(&dir)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let kind = statat(&dir, OsStr::from_bytes(name), follow)
                .map(|stat| FileType::from_raw_mode(stat.st_mode))
                .ok();
            entries.push(FsReadDirectoryEntry {
                file_name: String::from_utf8_lossy(name).into_owned(),
                is_directory: kind == Some(FileType::Directory),
                is_file: kind == Some(FileType::RegularFile),
            });
        }
        Ok(FsReadDirectoryResponse { entries })
    }

    /// `fs/createDirectory`: the directory at `path`, with its missing parents when
    /// `recursive` (an existing directory is then fine).
    pub fn create_directory(&self, path: &AbsolutePathBuf, recursive: bool) -> Result<(), FsError> {
        if recursive {
            let (start, names) = self.start(path)?;
            self.walk(start, &names, path.as_path(), true)?;
            return Ok(());
        }
        let target = self.locate(path)?;
        let Some(name) = &target.name else {
            return Err(io::Error::from(Errno::EXIST).into());
        };
        self.guard_name(&target)?;
        mkdirat(&target.dir, name, Mode::from_raw_mode(0o777))?;
        Ok(())
    }

    /// `fs/watch`'s check of `path`: beneath the roots (an existing part of it walked without
    /// following a link there, the path itself not a link), not beneath `$WEFT_HOME`. A
    /// missing path may be watched: its nearest existing ancestor is checked.
    pub fn check_watch(&self, path: &AbsolutePathBuf) -> Result<(), FsError> {
        let mut existing = path.as_path();
        while existing.symlink_metadata().is_err() {
            match existing.parent() {
                Some(parent) => existing = parent,
                None => break,
            }
        }
        let rest = path
            .as_path()
            .strip_prefix(existing)
            .unwrap_or(Path::new(""));
        let existing = AbsolutePathBuf::new(existing).unwrap_or_else(|| path.clone());
        let target = Target {
            shown: path.as_path().to_path_buf(),
            ..self.locate(&existing)?
        };
        let handle = self.open_object(&target)?;
        self.refuse_link(&target, &rustix::fs::fstat(&handle)?)?;
        self.guard_path(&fd_path(&handle)?.join(rest), &target.shown)
    }

    /// Where `path` is: its directory, opened by walking from its root (or `/`), and its name.
    fn locate(&self, path: &AbsolutePathBuf) -> Result<Target, FsError> {
        let (start, names) = self.start(path)?;
        let shown = path.as_path().to_path_buf();
        let Some((last, parents)) = names.split_last() else {
            return Ok(Target {
                dir: start,
                name: None,
                shown,
            });
        };
        let dir = self.walk(start, parents, path.as_path(), false)?;
        Ok(Target {
            dir,
            name: Some(last.to_os_string()),
            shown,
        })
    }

    /// The handle the walk to `path` starts from (its root's, or `/`'s) and the names below it.
    fn start<'p>(&self, path: &'p AbsolutePathBuf) -> Result<(OwnedFd, Vec<&'p OsStr>), FsError> {
        let path = path.as_path();
        let (start, rest) = match &self.roots {
            None => (Path::new("/"), path.strip_prefix("/").unwrap_or(path)),
            Some(roots) => roots
                .iter()
                .find_map(|root| {
                    [&root.canonical, &root.spelled]
                        .into_iter()
                        .find_map(|base| path.strip_prefix(base).ok())
                        .map(|rest| (root.canonical.as_path(), rest))
                })
                .ok_or_else(|| {
                    FsError::Invalid(format!(
                        "`{}` is outside the [fs] roots this server allows",
                        path.display()
                    ))
                })?,
        };
        let names = rest
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = openat(CWD, start, flags, Mode::empty())?;
        Ok((fd, names))
    }

    /// Open the directories `names` below `dir` one by one (beneath roots without following a
    /// link); `create` makes the missing ones, each checked before it is made.
    fn walk(
        &self,
        mut dir: OwnedFd,
        names: &[&OsStr],
        shown: &Path,
        create: bool,
    ) -> Result<OwnedFd, FsError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | self.no_follow();
        for name in names {
            dir = match openat(&dir, *name, flags, Mode::empty()) {
                Ok(next) => next,
                Err(Errno::NOENT) if create => {
                    self.guard_path(&fd_path(&dir)?.join(name), shown)?;
                    match mkdirat(&dir, *name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    openat(&dir, *name, flags, Mode::empty())?
                }
                Err(e) if self.confined() && is_link(&dir, name) => {
                    return Err(link_refused(shown, e));
                }
                Err(e) => return Err(e.into()),
            };
        }
        self.guard_real(&dir, shown)?;
        Ok(dir)
    }

    /// `O_NOFOLLOW` beneath roots.
    fn no_follow(&self) -> OFlags {
        if self.confined() {
            OFlags::NOFOLLOW
        } else {
            OFlags::empty()
        }
    }

    /// The object at `target` opened `O_PATH` (following a link only without roots), checked
    /// by its real path.
    fn open_object(&self, target: &Target) -> Result<OwnedFd, FsError> {
        self.guard_name(target)?;
        let handle = target
            .open(OFlags::PATH | OFlags::CLOEXEC | self.no_follow())
            .map_err(|e| self.explain(target, e))?;
        self.guard_real(&handle, &target.shown)?;
        Ok(handle)
    }

    /// The regular file at `target` opened for writing: an existing one (checked by type and
    /// real path) reopened through its handle, a new one created `O_EXCL | O_NOFOLLOW` (so a
    /// dangling link is never written through).
    fn open_for_write(&self, target: &Target) -> Result<File, FsError> {
        let Some(name) = &target.name else {
            return Err(io::Error::from(Errno::ISDIR).into());
        };
        self.guard_name(target)?;
        match target.open(OFlags::PATH | OFlags::CLOEXEC | self.no_follow()) {
            Ok(handle) => {
                self.guard_real(&handle, &target.shown)?;
                let stat = rustix::fs::fstat(&handle)?;
                self.refuse_link(target, &stat)?;
                match FileType::from_raw_mode(stat.st_mode) {
                    FileType::RegularFile => Ok(reopen(&handle, OFlags::WRONLY)?),
                    FileType::Directory => Err(io::Error::from(Errno::ISDIR).into()),
                    _ => Err(not_a_file(&target.shown)),
                }
            }
            Err(Errno::NOENT) => {
                let flags = OFlags::WRONLY
                    | OFlags::CREATE
                    | OFlags::EXCL
                    | OFlags::NOFOLLOW
                    | OFlags::NONBLOCK
                    | OFlags::CLOEXEC;
                let fd = openat(&target.dir, name, flags, Mode::from_raw_mode(0o666))?;
                Ok(File::from(fd))
            }
            Err(e) => Err(self.explain(target, e)),
        }
    }

    /// Beneath roots, a link found where an object was opened is refused by name.
    fn refuse_link(&self, target: &Target, stat: &rustix::fs::Stat) -> Result<(), FsError> {
        if self.confined() && FileType::from_raw_mode(stat.st_mode) == FileType::Symlink {
            return Err(link_refused(&target.shown, Errno::LOOP));
        }
        Ok(())
    }

    /// An OS error opening `target`, with the reason spelled out when a link beneath the roots
    /// caused it.
    fn explain(&self, target: &Target, errno: Errno) -> FsError {
        match &target.name {
            Some(name) if self.confined() && is_link(&target.dir, name) => {
                link_refused(&target.shown, errno)
            }
            _ => errno.into(),
        }
    }

    /// Refuse `target` when its own name (its directory's real path and its name) lies
    /// beneath `$WEFT_HOME`.
    fn guard_name(&self, target: &Target) -> Result<(), FsError> {
        let real = fd_path(&target.dir)?;
        let real = match &target.name {
            Some(name) => real.join(name),
            None => real,
        };
        self.guard_path(&real, &target.shown)
    }

    /// Refuse an opened object whose real path lies beneath `$WEFT_HOME`.
    fn guard_real(&self, fd: &impl AsFd, shown: &Path) -> Result<(), FsError> {
        self.guard_path(&fd_path(fd)?, shown)
    }

    fn guard_path(&self, real: &Path, shown: &Path) -> Result<(), FsError> {
        if self.homes.iter().any(|home| real.starts_with(home)) {
            return Err(FsError::Invalid(format!(
                "`{}` is inside $WEFT_HOME, which the fs methods never reach",
                shown.display()
            )));
        }
        if real.starts_with(&self.own_proc) {
            return Err(FsError::Invalid(format!(
                "`{}` is the server's own process information, which the fs methods never reach",
                shown.display()
            )));
        }
        Ok(())
    }

    /// Refuse removing or copying a directory that holds `$WEFT_HOME`.
    fn guard_holder(&self, real: &Path, shown: &Path, what: &str) -> Result<(), FsError> {
        if self.homes.iter().any(|home| home.starts_with(real)) {
            return Err(FsError::Invalid(format!(
                "fs/{what} refuses `{}`: it contains $WEFT_HOME",
                shown.display()
            )));
        }
        Ok(())
    }

    fn within_size(&self, shown: &Path, size: u64) -> Result<(), FsError> {
        if size > self.max_file_bytes {
            return Err(FsError::Invalid(format!(
                "`{}` is larger than limits.max_fs_file_bytes ({} bytes)",
                shown.display(),
                self.max_file_bytes
            )));
        }
        Ok(())
    }
}

impl Target {
    /// `openat` of the target (a fresh handle to `dir` itself when it has no name).
    fn open(&self, flags: OFlags) -> Result<OwnedFd, Errno> {
        match &self.name {
            Some(name) => openat(&self.dir, name, flags, Mode::empty()),
            None => openat(&self.dir, ".", flags & !OFlags::NOFOLLOW, Mode::empty()),
        }
    }
}

/// The path as [`AbsolutePathBuf`] normalizes it (for configured paths).
fn normalized(path: &Path) -> PathBuf {
    AbsolutePathBuf::new(path).map_or_else(|| path.to_path_buf(), AbsolutePathBuf::into_path_buf)
}

/// The real path of an open handle, as the kernel knows it.
fn fd_path(fd: &impl AsFd) -> io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd()))
}

/// A new open file description of the object `handle` (an `O_PATH` handle) refers to, for
/// reading or writing: the same object, whatever its name now points to.
fn reopen(handle: &OwnedFd, access: OFlags) -> io::Result<File> {
    let path = format!("/proc/self/fd/{}", handle.as_raw_fd());
    let flags = access | OFlags::NONBLOCK | OFlags::CLOEXEC;
    Ok(File::from(openat(
        CWD,
        path.as_str(),
        flags,
        Mode::empty(),
    )?))
}

/// Whether `name` in `dir` is a symbolic link.
fn is_link(dir: &OwnedFd, name: &OsStr) -> bool {
    statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink)
}

fn link_refused(shown: &Path, errno: Errno) -> FsError {
    FsError::Invalid(format!(
        "`{}` goes through a symbolic link, and links are not followed beneath the [fs] roots \
         ({})",
        shown.display(),
        io::Error::from(errno)
    ))
}

fn not_a_file(shown: &Path) -> FsError {
    FsError::Invalid(format!("path `{}` is not a file", shown.display()))
}

fn unix_ms(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
