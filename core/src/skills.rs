//! Skills: `SKILL.md` files (YAML front matter with `name` and `description`) found the way
//! the reference finds them, for `skills/list` (docs/protocol.md §7.23).
//!
//! Roots, for a cwd:
//! - **repo**: `.codex/skills` and `.agents/skills` in every directory from the project root
//!   (the nearest ancestor of the cwd holding `.git`; the cwd itself when there is none) down
//!   to the cwd;
//! - **user**: `$WEFT_HOME/skills` (as the reference reads `$CODEX_HOME/skills`) and
//!   `~/.agents/skills`, then the extra roots a client set with `skills/extraRoots/set` (for
//!   the daemon's life, every cwd).
//!
//! Each root is searched breadth-first, at most 6 levels deep and 2000 directories, skipping
//! names that start with `.` and following symlinked directories. Skills are sorted repo scope
//! first, then by name and path; a file reached twice is listed once. A `SKILL.md` that cannot
//! be loaded is reported as an error with its path, and so is an `agents/openai.yaml` that
//! cannot be read. Only regular files up to `[limits] max_skill_file_bytes` are read, and the
//! whole scan stops at `[limits] skills_scan_timeout_secs` (`read.rs`). Results are cached per
//! cwd until `forceReload`; a scan cut short by its deadline is not cached.

mod parse;
mod read;
mod scan;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use weft_protocol::skills_api::{SkillErrorInfo, SkillMetadata, SkillScope};

pub use read::ScanLimits;

/// What one cwd sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillsOutcome {
    /// The skills, sorted.
    pub skills: Vec<SkillMetadata>,
    /// The files that could not be loaded (and the root a scan out of time stopped in).
    pub errors: Vec<SkillErrorInfo>,
    /// The scan ran out of time: `skills` may miss some.
    pub incomplete: bool,
}

/// Finds skills and caches them per cwd.
#[derive(Debug)]
pub struct Skills {
    weft_home: PathBuf,
    user_home: Option<PathBuf>,
    /// The roots `skills/extraRoots/set` added (user scope).
    extra_roots: Mutex<Vec<PathBuf>>,
    cache: Mutex<HashMap<PathBuf, Arc<SkillsOutcome>>>,
}

impl Skills {
    /// Skills of a daemon whose home is `weft_home`, for a user whose home directory is
    /// `user_home` (`$HOME`).
    pub fn new(weft_home: PathBuf, user_home: Option<PathBuf>) -> Skills {
        Skills {
            weft_home,
            user_home,
            extra_roots: Mutex::new(Vec::new()),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Replace the extra roots (each holds skill directories, as `$WEFT_HOME/skills` does);
    /// every cwd's cached skills are dropped, so the next list sees the new roots.
    pub fn set_extra_roots(&self, roots: Vec<PathBuf>) {
        *self.extra_roots.lock() = roots;
        self.cache.lock().clear();
    }

    /// The skills seen from `cwd` (absolute): from the cache unless `force_reload` or not yet
    /// scanned, within `limits`. Reads the disk: call it off the async runtime's workers.
    pub fn list(&self, cwd: &Path, force_reload: bool, limits: &ScanLimits) -> Arc<SkillsOutcome> {
        if !force_reload && let Some(cached) = self.cache.lock().get(cwd) {
            return cached.clone();
        }
        let outcome = Arc::new(scan::load(&self.roots(cwd), limits));
        if !outcome.incomplete {
            self.cache.lock().insert(cwd.to_path_buf(), outcome.clone());
        }
        outcome
    }

    /// What a scan that did not come back by its deadline answers for `cwd` (a read blocked
    /// in the kernel, which no deadline check can interrupt): no skills, one error.
    pub fn timed_out(cwd: &Path, limits: &ScanLimits) -> SkillsOutcome {
        SkillsOutcome {
            skills: Vec::new(),
            errors: vec![SkillErrorInfo {
                path: cwd.display().to_string(),
                message: scan::timed_out_message(limits),
            }],
            incomplete: true,
        }
    }

    /// The roots searched for `cwd`, in the order the reference searches them.
    pub fn roots(&self, cwd: &Path) -> Vec<(PathBuf, SkillScope)> {
        let mut roots = Vec::new();
        for dir in project_dirs(cwd) {
            for folder in [".codex", ".agents"] {
                roots.push((dir.join(folder).join("skills"), SkillScope::Repo));
            }
        }
        roots.push((self.weft_home.join("skills"), SkillScope::User));
        if let Some(home) = &self.user_home {
            roots.push((home.join(".agents").join("skills"), SkillScope::User));
        }
        for root in self.extra_roots.lock().iter() {
            roots.push((root.clone(), SkillScope::User));
        }
        let mut seen = Vec::new();
        roots.retain(|(path, _)| {
            let new = !seen.contains(path);
            seen.push(path.clone());
            new
        });
        roots
    }
}

/// The directories from the project root down to `cwd`.
fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let root = cwd
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .unwrap_or(cwd);
    let mut dirs: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|dir| *dir != root)
        .map(Path::to_path_buf)
        .collect();
    dirs.push(root.to_path_buf());
    dirs.reverse();
    dirs
}

#[cfg(test)]
mod tests;
