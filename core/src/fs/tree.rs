//! `fs/remove` and `fs/copy`: whole trees, walked through directory handles without following
//! a link inside them (a link is removed or copied as a link), so neither can be led outside
//! what was named (docs/protocol.md §7.31).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{
    AtFlags, Dir, FileType, Mode, OFlags, mkdirat, openat, readlinkat, statat, symlinkat, unlinkat,
};
use rustix::io::Errno;
use weft_protocol::fs_api::AbsolutePathBuf;

use super::{FsAccess, FsError, Target, fd_path};

/// Flags that open a directory inside a tree.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

impl FsAccess {
    /// `fs/remove`: the file, link or directory at `path` (a directory's contents too when
    /// `recursive`); a missing path is fine when `force`.
    pub fn remove(
        &self,
        path: &AbsolutePathBuf,
        recursive: bool,
        force: bool,
    ) -> Result<(), FsError> {
        let target = match self.locate(path) {
            Err(FsError::Io(e)) if force && e.kind() == io::ErrorKind::NotFound => return Ok(()),
            target => target?,
        };
        let Some(name) = &target.name else {
            return Err(FsError::Invalid(format!(
                "fs/remove refuses `{}`: it is a root of the file system or of [fs] roots",
                target.shown.display()
            )));
        };
        self.guard_name(&target)?;
        let real = fd_path(&target.dir)?.join(name);
        self.guard_holder(&real, &target.shown, "remove")?;
        let stat = match statat(&target.dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Err(Errno::NOENT) if force => return Ok(()),
            stat => stat?,
        };
        if FileType::from_raw_mode(stat.st_mode) == FileType::Directory {
            if recursive {
                remove_tree(&target.dir, name)?;
            } else {
                unlinkat(&target.dir, name, AtFlags::REMOVEDIR)?;
            }
        } else {
            unlinkat(&target.dir, name, AtFlags::empty())?;
        }
        Ok(())
    }

    /// `fs/copy`: a regular file, a link (as a link) or, when `recursive`, a directory tree
    /// (its FIFOs, sockets and devices left out) from `source` to `destination`.
    pub fn copy(
        &self,
        source: &AbsolutePathBuf,
        destination: &AbsolutePathBuf,
        recursive: bool,
    ) -> Result<(), FsError> {
        let from = self.locate(source)?;
        self.guard_name(&from)?;
        let stat = match &from.name {
            Some(name) => statat(&from.dir, name, AtFlags::SYMLINK_NOFOLLOW)?,
            None => rustix::fs::fstat(&from.dir)?,
        };
        let to = self.locate(destination)?;
        let Some(to_name) = to.name.clone() else {
            return Err(io::Error::from(Errno::EXIST).into());
        };
        self.guard_name(&to)?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => {
                if !recursive {
                    return Err(FsError::Invalid(
                        "fs/copy requires recursive: true when sourcePath is a directory".into(),
                    ));
                }
                let source_dir = from.open(dir_flags())?;
                let source_real = fd_path(&source_dir)?;
                self.guard_holder(&source_real, &from.shown, "copy")?;
                let destination_real = fd_path(&to.dir)?.join(&to_name);
                if destination_real.starts_with(&source_real) {
                    return Err(FsError::Invalid(
                        "fs/copy cannot copy a directory to itself or one of its descendants"
                            .into(),
                    ));
                }
                copy_tree(&source_dir, &to.dir, &to_name)
            }
            FileType::Symlink => {
                let name = from.name.as_deref().unwrap_or(OsStr::new("."));
                copy_link(&from.dir, name, &to.dir, &to_name)
            }
            FileType::RegularFile => {
                let mut input = self.open_source_file(&from)?;
                let mut output = self.open_for_write(&to)?;
                output.set_len(0)?;
                io::copy(&mut input, &mut output)?;
                Ok(())
            }
            _ => Err(FsError::Invalid(
                "fs/copy only supports regular files, directories, and symlinks".into(),
            )),
        }
    }

    /// The regular file `target` names, opened for reading without following a link.
    fn open_source_file(&self, target: &Target) -> Result<File, FsError> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let file = File::from(target.open(flags)?);
        self.guard_real(&file, &target.shown)?;
        if !file.metadata()?.is_file() {
            return Err(super::not_a_file(&target.shown));
        }
        Ok(file)
    }
}

/// The names in a directory (without `.` and `..`).
fn names(dir: &OwnedFd) -> Result<Vec<OsString>, FsError> {
    let mut names = Vec::new();
    for entry in Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push(OsStr::from_bytes(name).to_os_string());
        }
    }
    Ok(names)
}

/// Remove directory `name` of `parent` and everything in it, links as links.
fn remove_tree(parent: &OwnedFd, name: &OsStr) -> Result<(), FsError> {
    let dir = openat(parent, name, dir_flags(), Mode::empty())?;
    for entry in names(&dir)? {
        let stat = match statat(&dir, &entry, AtFlags::SYMLINK_NOFOLLOW) {
            Err(Errno::NOENT) => continue,
            stat => stat?,
        };
        if FileType::from_raw_mode(stat.st_mode) == FileType::Directory {
            remove_tree(&dir, &entry)?;
        } else {
            match unlinkat(&dir, &entry, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    unlinkat(parent, name, AtFlags::REMOVEDIR)?;
    Ok(())
}

/// Copy the tree of `source` into directory `name` of `parent` (made if missing).
fn copy_tree(source: &OwnedFd, parent: &OwnedFd, name: &OsStr) -> Result<(), FsError> {
    match mkdirat(parent, name, Mode::from_raw_mode(0o777)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    let destination = openat(parent, name, dir_flags(), Mode::empty())?;
    for entry in names(source)? {
        let Ok(stat) = statat(source, &entry, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => {
                let child = openat(source, &entry, dir_flags(), Mode::empty())?;
                copy_tree(&child, &destination, &entry)?;
            }
            FileType::RegularFile => {
                let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                let mut input = File::from(openat(source, &entry, flags, Mode::empty())?);
                let flags = OFlags::WRONLY
                    | OFlags::CREATE
                    | OFlags::TRUNC
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC;
                let mut output = File::from(openat(
                    &destination,
                    &entry,
                    flags,
                    Mode::from_raw_mode(0o666),
                )?);
                io::copy(&mut input, &mut output)?;
            }
            FileType::Symlink => copy_link(source, &entry, &destination, &entry)?,
            // FIFOs, sockets and devices are left out of a tree's copy, as in the reference.
            _ => {}
        }
    }
    Ok(())
}

/// Make `to_name` in `to_dir` a link with the same target as `name` in `dir`.
fn copy_link(
    dir: &OwnedFd,
    name: &OsStr,
    to_dir: &OwnedFd,
    to_name: &OsStr,
) -> Result<(), FsError> {
    let target = readlinkat(dir, name, Vec::new())?;
    symlinkat(target.as_c_str(), to_dir, to_name)?;
    Ok(())
}
