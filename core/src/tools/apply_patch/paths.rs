//! Paths of a patch: resolved against the working directory without touching the disk
//! ([`normalize_lexically`]), through symlinks ([`resolve_symlinks`]), and checked against the
//! caller's `can_write` both ways ([`path_is_writable`]).

use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

use super::error::PatchError;

/// True when `can_write` allows `path` both as given and as its symlinks resolve.
pub fn path_is_writable(path: &Path, can_write: &dyn Fn(&Path) -> bool) -> bool {
    if !can_write(path) {
        return false;
    }
    let real = resolve_symlinks(path);
    real == path || can_write(&real)
}

pub(super) fn absolute_cwd(cwd: &Path) -> Result<PathBuf, PatchError> {
    if cwd.is_absolute() {
        return Ok(normalize_lexically(cwd));
    }
    let here = std::env::current_dir().map_err(|source| PatchError::Read {
        context: "Failed to resolve the working directory".to_string(),
        source,
    })?;
    Ok(normalize_lexically(&here.join(cwd)))
}

/// Removes `.` and resolves `..` without touching the filesystem (`..` never climbs above
/// the root).
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// Resolves symlinks along an absolute path, including dangling ones and components that
/// do not exist yet (those are kept as they are). Bounded to 40 link hops.
pub(crate) fn resolve_symlinks(path: &Path) -> PathBuf {
    enum Part {
        Root(OsString),
        Parent,
        Name(OsString),
    }
    fn parts(p: &Path) -> Vec<Part> {
        p.components()
            .filter_map(|c| match c {
                Component::Prefix(_) | Component::RootDir => {
                    Some(Part::Root(c.as_os_str().to_owned()))
                }
                Component::CurDir => None,
                Component::ParentDir => Some(Part::Parent),
                Component::Normal(n) => Some(Part::Name(n.to_owned())),
            })
            .collect()
    }
    let mut stack: Vec<Part> = parts(path).into_iter().rev().collect();
    let mut out = PathBuf::new();
    let mut hops = 0;
    while let Some(part) = stack.pop() {
        match part {
            Part::Root(root) => out.push(root),
            Part::Parent => {
                out.pop();
            }
            Part::Name(name) => {
                let candidate = out.join(&name);
                if hops < 40
                    && fs::symlink_metadata(&candidate).is_ok_and(|m| m.file_type().is_symlink())
                    && let Ok(target) = fs::read_link(&candidate)
                {
                    hops += 1;
                    stack.extend(parts(&target).into_iter().rev());
                    continue;
                }
                out = candidate;
            }
        }
    }
    out
}
