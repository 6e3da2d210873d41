//! The turn's aggregate diff for `turn/diff/updated`: the net change of every file that
//! successfully applied patches touched during the turn, relative to its state when the turn
//! first touched it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::diff::git_file_diff;
use super::plan::{ChangeKind, PatchPlan};

/// Accumulates applied patches of one turn.
#[derive(Debug, Clone, Default)]
pub struct TurnDiffTracker {
    display_root: Option<PathBuf>,
    /// Contents when the turn first touched the path (`None`: absent).
    baseline: HashMap<PathBuf, Option<String>>,
    /// Contents now (`None`: absent).
    current: HashMap<PathBuf, Option<String>>,
    /// For a renamed file: current path → the path it had at the start of the turn.
    origin: HashMap<PathBuf, PathBuf>,
}

impl TurnDiffTracker {
    /// A tracker whose diff shows paths relative to `display_root` (e.g. the thread's cwd
    /// or repository root) when they are under it, absolute otherwise.
    pub fn new(display_root: Option<PathBuf>) -> Self {
        TurnDiffTracker {
            display_root,
            ..Self::default()
        }
    }

    /// Records a plan that [`super::apply_plan`] applied successfully.
    pub fn track(&mut self, plan: &PatchPlan) {
        for change in plan.changes() {
            match &change.kind {
                ChangeKind::Add | ChangeKind::Delete => {
                    self.note_baseline(&change.path, change.old_content.clone());
                    self.origin.remove(&change.path);
                    self.current
                        .insert(change.path.clone(), change.new_content.clone());
                }
                ChangeKind::Update { move_path: None } => {
                    self.note_baseline(&change.path, change.old_content.clone());
                    self.current
                        .insert(change.path.clone(), change.new_content.clone());
                }
                ChangeKind::Update {
                    move_path: Some(dest),
                } => {
                    self.note_baseline(&change.path, change.old_content.clone());
                    self.note_baseline(dest, change.overwritten_move_content.clone());
                    let origin = self
                        .origin
                        .remove(&change.path)
                        .unwrap_or_else(|| change.path.clone());
                    self.current.insert(change.path.clone(), None);
                    self.current
                        .insert(dest.clone(), change.new_content.clone());
                    self.origin.remove(dest);
                    if *dest != origin {
                        self.origin.insert(dest.clone(), origin);
                    }
                }
            }
        }
    }

    fn note_baseline(&mut self, path: &Path, content: Option<String>) {
        self.baseline.entry(path.to_path_buf()).or_insert(content);
    }

    fn display(&self, path: &Path) -> String {
        let shown = self
            .display_root
            .as_deref()
            .and_then(|root| path.strip_prefix(root).ok())
            .unwrap_or(path);
        shown.to_string_lossy().replace('\\', "/")
    }

    fn baseline_of(&self, path: &Path) -> Option<&str> {
        self.baseline.get(path).and_then(|c| c.as_deref())
    }

    fn current_of(&self, path: &Path) -> Option<&str> {
        match self.current.get(path) {
            Some(c) => c.as_deref(),
            None => self.baseline_of(path),
        }
    }

    /// The whole turn's git-style diff so far (`diff --git a/x b/x` …), files sorted by
    /// display path; `None` when the net change is empty.
    pub fn unified_diff(&self) -> Option<String> {
        // A rename is shown as one diff when the origin is gone, the destination is new.
        let renames: HashMap<&PathBuf, &PathBuf> = self
            .origin
            .iter()
            .filter(|(dest, origin)| {
                self.current_of(origin).is_none()
                    && self.baseline_of(origin).is_some()
                    && self.baseline_of(dest).is_none()
                    && self.current_of(dest).is_some()
            })
            .map(|(dest, origin)| (origin, dest))
            .collect();
        let destinations: HashSet<&PathBuf> = renames.values().copied().collect();
        let mut paths: Vec<&PathBuf> = self.baseline.keys().collect();
        paths.sort_by_key(|p| self.display(p));
        let mut out = String::new();
        for path in paths {
            if destinations.contains(path) {
                continue;
            }
            let right_path = renames.get(path).copied().unwrap_or(path);
            let diff = git_file_diff(
                &self.display(path),
                self.baseline_of(path),
                &self.display(right_path),
                self.current_of(right_path),
            );
            if let Some(diff) = diff {
                out.push_str(&diff);
                if !out.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        (!out.is_empty()).then_some(out)
    }
}
