//! How a patch reads and writes files: [`AmbientFiles`] by path as given (no confinement),
//! [`SandboxFiles`] through a [`Beneath`] handle of the writable root for every path the
//! sandbox allows, so the sandbox's check and the write are one operation.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::error::PatchError;
use crate::sandbox::{Beneath, SandboxSpec, WriteAccess};

/// File access for [`super::plan_patch_with`] and [`super::apply_plan_with`].
pub trait PatchFiles: Send + Sync {
    /// The contents of the file at the absolute `path`; `None` when it does not exist; an
    /// `IsADirectory` error for a directory.
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>>;
    /// Whether `path` may be written (checked for every path before anything is written).
    fn check_write(&self, path: &Path) -> io::Result<()>;
    /// Writes `contents` to `path`, creating parent directories; then copies the permissions
    /// of `permissions_from` (best effort).
    fn write(
        &self,
        path: &Path,
        contents: &[u8],
        permissions_from: Option<&Path>,
    ) -> Result<(), PatchError>;
    /// Removes the file at `path`.
    fn remove(&self, path: &Path) -> Result<(), PatchError>;
}

/// Paths used as they are, symlinks followed (`danger-full-access`, and the paths a user
/// approved outside the writable roots).
#[derive(Debug, Clone, Copy, Default)]
pub struct AmbientFiles;

impl PatchFiles for AmbientFiles {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        match fs::metadata(path) {
            // A path under a file does not exist either.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
            Ok(meta) if meta.is_dir() => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "Is a directory",
            )),
            Ok(_) => fs::read(path).map(Some),
        }
    }

    fn check_write(&self, _path: &Path) -> io::Result<()> {
        Ok(())
    }

    fn write(
        &self,
        path: &Path,
        contents: &[u8],
        permissions_from: Option<&Path>,
    ) -> Result<(), PatchError> {
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            fs::create_dir_all(parent).map_err(|source| PatchError::Write {
                context: format!("Failed to create parent directories for {}", path.display()),
                source,
            })?;
        }
        fs::write(path, contents).map_err(|source| write_error(path, source))?;
        if let Some(src) = permissions_from
            && let Ok(meta) = fs::metadata(src)
        {
            // Best effort: a rename keeps the source's mode (e.g. the executable bit).
            let _ = fs::set_permissions(path, meta.permissions());
        }
        Ok(())
    }

    fn remove(&self, path: &Path) -> Result<(), PatchError> {
        fs::remove_file(path).map_err(|source| remove_error(path, source))
    }
}

/// Files under a sandbox: a path the sandbox allows is read and written only beneath its
/// writable root, following no symlink ([`SandboxSpec::write_access`], [`Beneath`]). A path it
/// does not allow is read as it is (reading is not confined) and written only when it is one
/// of `approved` (the user accepted writing it), as it is.
#[derive(Debug, Clone)]
pub struct SandboxFiles {
    spec: SandboxSpec,
    approved: Vec<PathBuf>,
}

impl SandboxFiles {
    /// Access under `spec`, with `approved` paths (as the plan names them) written as they are.
    pub fn new(spec: SandboxSpec, approved: Vec<PathBuf>) -> SandboxFiles {
        SandboxFiles { spec, approved }
    }

    fn denied(path: &Path) -> io::Error {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is outside the sandbox's writable roots or protected",
                path.display()
            ),
        )
    }
}

impl PatchFiles for SandboxFiles {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        match self.spec.write_access(path) {
            WriteAccess::Beneath { root, relative } => Beneath::open(&root)?.read(&relative),
            WriteAccess::Anywhere | WriteAccess::Denied => AmbientFiles.read(path),
        }
    }

    fn check_write(&self, path: &Path) -> io::Result<()> {
        match self.spec.write_access(path) {
            WriteAccess::Anywhere | WriteAccess::Beneath { .. } => Ok(()),
            WriteAccess::Denied if self.approved.iter().any(|p| p == path) => Ok(()),
            WriteAccess::Denied => Err(Self::denied(path)),
        }
    }

    fn write(
        &self,
        path: &Path,
        contents: &[u8],
        permissions_from: Option<&Path>,
    ) -> Result<(), PatchError> {
        match self.spec.write_access(path) {
            WriteAccess::Anywhere => AmbientFiles.write(path, contents, permissions_from),
            WriteAccess::Beneath { root, relative } => {
                let permissions =
                    permissions_from.and_then(|src| match self.spec.write_access(src) {
                        WriteAccess::Beneath { root, relative } => Beneath::open(&root)
                            .and_then(|b| b.permissions(&relative))
                            .ok(),
                        _ => fs::metadata(src).ok().map(|m| m.permissions()),
                    });
                Beneath::open(&root)
                    .and_then(|b| b.write(&relative, contents, permissions))
                    .map_err(|source| write_error(path, source))
            }
            WriteAccess::Denied if self.approved.iter().any(|p| p == path) => {
                AmbientFiles.write(path, contents, permissions_from)
            }
            WriteAccess::Denied => Err(write_error(path, Self::denied(path))),
        }
    }

    fn remove(&self, path: &Path) -> Result<(), PatchError> {
        match self.spec.entry_access(path) {
            WriteAccess::Anywhere => AmbientFiles.remove(path),
            WriteAccess::Beneath { root, relative } => Beneath::open(&root)
                .and_then(|b| b.remove(&relative))
                .map_err(|source| remove_error(path, source)),
            WriteAccess::Denied if self.approved.iter().any(|p| p == path) => {
                AmbientFiles.remove(path)
            }
            WriteAccess::Denied => Err(remove_error(path, Self::denied(path))),
        }
    }
}

fn write_error(path: &Path, source: io::Error) -> PatchError {
    PatchError::Write {
        context: format!("Failed to write file {}", path.display()),
        source,
    }
}

fn remove_error(path: &Path, source: io::Error) -> PatchError {
    PatchError::Write {
        context: format!("Failed to delete file {}", path.display()),
        source,
    }
}
