//! Searching the skill roots for `SKILL.md` files.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use weft_protocol::skills_api::{SkillErrorInfo, SkillScope};

use super::SkillsOutcome;
use super::parse::parse_skill_file;
use super::read::ScanLimits;

/// Levels below a root searched.
const MAX_SCAN_DEPTH: usize = 6;
/// Directories searched per root.
const MAX_DIRS_PER_ROOT: usize = 2000;
const SKILL_FILE: &str = "SKILL.md";

/// Every skill under `roots`, sorted (scope, name, path) and each file once. A scan that runs
/// past `limits.deadline` stops there: what it found is listed, with an error naming the root
/// it was searching, and the outcome is marked `incomplete`.
pub(super) fn load(roots: &[(PathBuf, SkillScope)], limits: &ScanLimits) -> SkillsOutcome {
    let mut outcome = SkillsOutcome::default();
    for (root, scope) in roots {
        if !search_root(root, *scope, limits, &mut outcome) {
            outcome.incomplete = true;
            outcome.errors.push(SkillErrorInfo {
                path: root.display().to_string(),
                message: timed_out_message(limits),
            });
            break;
        }
    }
    let mut seen = HashSet::new();
    outcome
        .skills
        .retain(|skill| seen.insert(skill.path.clone()));
    outcome.skills.sort_by(|a, b| {
        a.scope
            .cmp(&b.scope)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.path.cmp(&b.path))
    });
    outcome
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The error of a scan stopped by its deadline.
pub(super) fn timed_out_message(limits: &ScanLimits) -> String {
    format!(
        "skills scan stopped after {} s (limits.skills_scan_timeout_secs); skills not reached \
         by then are not listed",
        limits.timeout.as_secs()
    )
}

/// Search one root; `false` when the deadline stopped it.
fn search_root(
    root: &Path,
    scope: SkillScope,
    limits: &ScanLimits,
    outcome: &mut SkillsOutcome,
) -> bool {
    if limits.expired() {
        return false;
    }
    let root = canonical(root);
    if !root.is_dir() {
        return true;
    }
    let mut visited = HashSet::from([root.clone()]);
    let mut queue = VecDeque::from([(root.clone(), 0usize)]);
    let mut truncated = false;
    while let Some((dir, depth)) = queue.pop_front() {
        if limits.expired() {
            return false;
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) => {
                tracing::debug!(dir = %dir.display(), %err, "cannot read a skills directory");
                continue;
            }
        };
        let mut names: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.file_name())
            .collect();
        names.sort();
        for name in names {
            if limits.expired() {
                return false;
            }
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let path = dir.join(&name);
            // Follows symlinks: a linked skill folder is searched like a real one.
            let Ok(metadata) = std::fs::metadata(&path) else {
                continue;
            };
            if metadata.is_dir() {
                if depth + 1 > MAX_SCAN_DEPTH {
                    continue;
                }
                if visited.len() >= MAX_DIRS_PER_ROOT {
                    truncated = true;
                    continue;
                }
                let resolved = canonical(&path);
                if visited.insert(resolved.clone()) {
                    queue.push_back((resolved, depth + 1));
                }
            } else if name == SKILL_FILE {
                // Whatever it is: a FIFO or a device is reported, never opened.
                match parse_skill_file(&path, scope, limits.max_file_bytes, &mut outcome.errors) {
                    Ok(skill) => outcome.skills.push(skill),
                    Err(err) => outcome.errors.push(SkillErrorInfo {
                        path: path.display().to_string(),
                        message: err.to_string(),
                    }),
                }
            }
        }
    }
    if truncated {
        tracing::warn!(
            root = %root.display(),
            "skills search stopped after {MAX_DIRS_PER_ROOT} directories"
        );
    }
    true
}
