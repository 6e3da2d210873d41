//! File operations confined beneath one directory handle, following no symbolic link.
//!
//! A [`Beneath`] holds an open file descriptor of a writable root. Every operation walks its
//! relative path one component at a time with `openat(2)` and `O_NOFOLLOW`, so the path that
//! was checked is the path that is used: a component swapped for a symlink (or anything but a
//! directory) between a check and the operation makes the operation fail instead of landing
//! where the link points. This is what `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` does,
//! written with plain `openat`, which every kernel and libc has.
//!
//! Files are opened `O_NONBLOCK` (a FIFO cannot hang the daemon) and must turn out to be
//! regular files (checked on the opened descriptor).

use std::ffi::OsStr;
use std::fs::{File, Permissions};
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{AtFlags, CWD, Mode, OFlags, mkdirat, openat, unlinkat};

/// A directory that operations stay beneath.
#[derive(Debug)]
pub struct Beneath {
    root: OwnedFd,
}

/// Flags for opening a directory while walking.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

impl Beneath {
    /// Opens `root` (an absolute, canonical directory; a symlink there is refused).
    pub fn open(root: &Path) -> io::Result<Beneath> {
        let root = openat(CWD, root, dir_flags(), Mode::empty()).map_err(|e| {
            io::Error::new(
                io::Error::from(e).kind(),
                format!("cannot open the writable root {}: {e}", root.display()),
            )
        })?;
        Ok(Beneath { root })
    }

    /// The contents of the regular file at `relative`; `None` when it (or a parent) does not
    /// exist. A directory is an `IsADirectory` error, any other non-regular file or a
    /// symlink anywhere on the way an error too.
    pub fn read(&self, relative: &Path) -> io::Result<Option<Vec<u8>>> {
        let (names, last) = split(relative)?;
        let Some(parent) = self.walk(&names, false)? else {
            return Ok(None);
        };
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = match openat(&parent, last, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(explain(e, relative)),
        };
        let mut file = File::from(fd);
        regular(&file, relative)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    /// The permissions of the regular file at `relative` (not following a symlink).
    pub fn permissions(&self, relative: &Path) -> io::Result<Permissions> {
        let (names, last) = split(relative)?;
        let parent = self
            .walk(&names, false)?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let file = File::from(
            openat(&parent, last, flags, Mode::empty()).map_err(|e| explain(e, relative))?,
        );
        regular(&file, relative)?;
        Ok(file.metadata()?.permissions())
    }

    /// Writes `contents` to `relative` (created with mode 0666 less the umask, or truncated),
    /// creating missing parent directories; `permissions` are applied after writing.
    pub fn write(
        &self,
        relative: &Path,
        contents: &[u8],
        permissions: Option<Permissions>,
    ) -> io::Result<()> {
        let (names, last) = split(relative)?;
        let parent = self
            .walk(&names, true)?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = openat(&parent, last, flags, Mode::from_raw_mode(0o666))
            .map_err(|e| explain(e, relative))?;
        let mut file = File::from(fd);
        regular(&file, relative)?;
        file.set_len(0)?;
        file.write_all(contents)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        Ok(())
    }

    /// Removes the file (or symlink, which is not followed) at `relative`.
    pub fn remove(&self, relative: &Path) -> io::Result<()> {
        let (names, last) = split(relative)?;
        let parent = self
            .walk(&names, false)?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        unlinkat(&parent, last, AtFlags::empty()).map_err(|e| explain(e, relative))
    }

    /// Opens the directory `names` beneath the root, one component at a time without following
    /// symlinks; creates missing ones when `create`. `None`: one is missing (and not created).
    fn walk(&self, names: &[&OsStr], create: bool) -> io::Result<Option<OwnedFd>> {
        let mut dir = rustix::io::dup(&self.root)?;
        for (depth, name) in names.iter().enumerate() {
            let shown = || names[..=depth].iter().collect::<std::path::PathBuf>();
            dir = match openat(&dir, *name, dir_flags(), Mode::empty()) {
                Ok(next) => next,
                Err(rustix::io::Errno::NOENT) if create => {
                    match mkdirat(&dir, *name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(explain(e, &shown())),
                    }
                    openat(&dir, *name, dir_flags(), Mode::empty())
                        .map_err(|e| explain(e, &shown()))?
                }
                Err(rustix::io::Errno::NOENT) => return Ok(None),
                Err(e) => return Err(explain(e, &shown())),
            };
        }
        Ok(Some(dir))
    }
}

/// The directory names and the file name of a relative path made of plain names only.
fn split(relative: &Path) -> io::Result<(Vec<&OsStr>, &OsStr)> {
    let mut names = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => names.push(name),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("not a plain relative path: {}", relative.display()),
                ));
            }
        }
    }
    let last = names.pop().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "an empty path names no file")
    })?;
    Ok((names, last))
}

/// Refuses anything but a regular file (directories as `IsADirectory`).
fn regular(file: &File, relative: &Path) -> io::Result<()> {
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        Ok(())
    } else if kind.is_dir() {
        Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "Is a directory",
        ))
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", relative.display()),
        ))
    }
}

/// An OS error with the reason spelled out where `O_NOFOLLOW` caused it.
fn explain(errno: rustix::io::Errno, at: &Path) -> io::Error {
    let error = io::Error::from(errno);
    if errno == rustix::io::Errno::LOOP || errno == rustix::io::Errno::NOTDIR {
        io::Error::new(
            error.kind(),
            format!(
                "{} is a symbolic link or not a directory, and symbolic links are not followed \
                 inside the sandbox's writable roots ({error})",
                at.display()
            ),
        )
    } else {
        error
    }
}
