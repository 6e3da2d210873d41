//! Verify-then-write: [`plan_patch`] computes every file's new contents without touching the
//! disk; [`apply_plan`] writes them.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use super::contents::derive_new_contents;
use super::diff::{git_file_diff, unified_hunks};
use super::error::PatchError;
use super::files::{AmbientFiles, PatchFiles};
use super::parser::{FileOp, parse_patch};
use super::paths::{absolute_cwd, normalize_lexically, path_is_writable};

/// Lines of context in the `diff` of a `fileChange` update (the reference uses 1).
const FILE_CHANGE_CONTEXT: usize = 1;

/// The kind of one file change (mirrors the protocol's `PatchChangeKind`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// A new file (or an existing one overwritten by `*** Add File`).
    Add,
    /// A deleted file.
    Delete,
    /// A modified file, renamed to `move_path` (absolute) when set.
    Update {
        /// Absolute destination of a rename.
        move_path: Option<PathBuf>,
    },
}

/// One file operation of a verified patch, ready for a `fileChange` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Absolute (lexically normalised) path of the file; the source for a rename.
    pub path: PathBuf,
    /// The path as written in the patch.
    pub display_path: String,
    /// Add / Delete / Update{move_path}.
    pub kind: ChangeKind,
    /// The destination as written in the patch, for a rename.
    pub move_display_path: Option<String>,
    /// Contents of `path` before this operation (`None`: did not exist). For a deleted file
    /// that is not UTF-8 this is a lossy rendering.
    pub old_content: Option<String>,
    /// Contents after this operation at `path`, or at the destination of a rename
    /// (`None` for a delete).
    pub new_content: Option<String>,
    /// Previous contents of a rename's destination, when it existed and was overwritten.
    pub overwritten_move_content: Option<String>,
    /// The `diff` of the protocol's `FileUpdateChange`: the new content for an add, the old
    /// content for a delete, unified-diff hunks (1 line of context, no `---`/`+++`) for an
    /// update, followed by `\n\nMoved to: <abs path>` for a rename.
    pub diff: String,
    /// A git-style diff of this operation (`diff --git a/x b/x` …), paths relative to the
    /// patch's cwd when under it. Empty when the operation changes nothing.
    pub git_diff: String,
}

impl FileChange {
    /// The protocol shape (`FileUpdateChange`) of this change.
    pub fn to_protocol(&self) -> weft_protocol::FileUpdateChange {
        let kind = match &self.kind {
            ChangeKind::Add => weft_protocol::PatchChangeKind::Add,
            ChangeKind::Delete => weft_protocol::PatchChangeKind::Delete,
            ChangeKind::Update { move_path } => weft_protocol::PatchChangeKind::Update {
                move_path: move_path.as_ref().map(|p| p.to_string_lossy().into_owned()),
            },
        };
        weft_protocol::FileUpdateChange {
            path: self.path.to_string_lossy().into_owned(),
            kind,
            diff: self.diff.clone(),
        }
    }
}

#[derive(Debug, Clone)]
enum Step {
    Write {
        path: PathBuf,
        contents: Vec<u8>,
        /// Copy permissions from this file (the source of a rename) after writing.
        permissions_from: Option<PathBuf>,
    },
    Remove {
        path: PathBuf,
    },
}

/// A verified patch: every file's new contents, computed without writing anything.
#[derive(Debug, Clone)]
pub struct PatchPlan {
    cwd: PathBuf,
    changes: Vec<FileChange>,
    steps: Vec<Step>,
    /// Disk state of every touched path when it was read (`None`: absent).
    baseline: Vec<(PathBuf, Option<Vec<u8>>)>,
    summary: Summary,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Summary {
    added: Vec<String>,
    modified: Vec<String>,
    deleted: Vec<String>,
}

impl Summary {
    fn text(&self) -> String {
        let mut out = String::from("Success. Updated the following files:\n");
        for (tag, paths) in [
            ("A", &self.added),
            ("M", &self.modified),
            ("D", &self.deleted),
        ] {
            for p in paths {
                out.push_str(tag);
                out.push(' ');
                out.push_str(p);
                out.push('\n');
            }
        }
        out
    }
}

impl PatchPlan {
    /// The absolute directory relative paths were resolved against.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// One change per file operation, in patch order.
    pub fn changes(&self) -> &[FileChange] {
        &self.changes
    }

    /// The changes in the protocol's `FileUpdateChange` shape, for the `fileChange` item.
    pub fn protocol_changes(&self) -> Vec<weft_protocol::FileUpdateChange> {
        self.changes.iter().map(FileChange::to_protocol).collect()
    }

    /// Every absolute path this plan writes or removes, deduplicated, in first-use order.
    pub fn written_paths(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for step in &self.steps {
            let p = match step {
                Step::Write { path, .. } | Step::Remove { path } => path,
            };
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
        out
    }

    /// The git-style diffs of all changes, concatenated (for `turn/diff/updated` when the
    /// turn has a single patch; use [`super::TurnDiffTracker`] to aggregate a turn).
    pub fn git_diff(&self) -> String {
        self.changes.iter().map(|c| c.git_diff.as_str()).collect()
    }

    /// The text the model receives once [`apply_plan`] has succeeded.
    pub fn success_text(&self) -> String {
        self.summary.text()
    }
}

/// What [`apply_plan`] did. Paths are as written in the patch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyOutcome {
    /// `*** Add File` paths.
    pub added: Vec<String>,
    /// `*** Update File` paths (the destination for a rename).
    pub modified: Vec<String>,
    /// `*** Delete File` paths.
    pub deleted: Vec<String>,
}

impl ApplyOutcome {
    /// `Success. Updated the following files:\nA <path>\nM <path>\nD <path>\n` — added,
    /// then modified (renames under their destination), then deleted.
    pub fn success_text(&self) -> String {
        Summary {
            added: self.added.clone(),
            modified: self.modified.clone(),
            deleted: self.deleted.clone(),
        }
        .text()
    }
}

/// Parses `patch`, resolves its paths against `cwd`, reads every file it touches, verifies
/// every chunk, checks every written path with `can_write`, and computes the new contents.
/// Writes nothing.
///
/// `can_write` is called with each absolute, lexically normalised target path and, when
/// symlinks make it differ, with the path they resolve to; both must be allowed. Operations
/// apply in order against a virtual view of the files, so later operations on the same path
/// see the effect of earlier ones. Files are read by path as they are ([`AmbientFiles`]).
pub fn plan_patch(
    patch: &str,
    cwd: &Path,
    can_write: &dyn Fn(&Path) -> bool,
) -> Result<PatchPlan, PatchError> {
    plan_patch_with(patch, cwd, can_write, &AmbientFiles)
}

/// [`plan_patch`], reading files through `files`.
pub fn plan_patch_with(
    patch: &str,
    cwd: &Path,
    can_write: &dyn Fn(&Path) -> bool,
    files: &dyn PatchFiles,
) -> Result<PatchPlan, PatchError> {
    let parsed = parse_patch(patch)?;
    if parsed.ops.is_empty() {
        return Err(PatchError::Empty);
    }
    let cwd = absolute_cwd(cwd)?;
    let mut planner = Planner {
        cwd: &cwd,
        can_write,
        files,
        state: HashMap::new(),
        baseline: Vec::new(),
        changes: Vec::new(),
        steps: Vec::new(),
        summary: Summary::default(),
    };
    for op in &parsed.ops {
        planner.plan_op(op)?;
    }
    let Planner {
        changes,
        steps,
        baseline,
        summary,
        ..
    } = planner;
    Ok(PatchPlan {
        cwd,
        changes,
        steps,
        baseline,
        summary,
    })
}

/// Writes a verified plan: adds, updates, renames (write the destination, then remove the
/// source) and deletes, in patch order, creating parent directories as needed.
///
/// Before writing anything it re-reads every touched path and fails with
/// [`PatchError::Stale`] if one changed since [`plan_patch`]. An I/O error part-way returns
/// [`PatchError::Write`]; operations before it stay applied (there is no rollback). Files are
/// written by path as they are ([`AmbientFiles`]).
pub fn apply_plan(plan: &PatchPlan) -> Result<ApplyOutcome, PatchError> {
    apply_plan_with(plan, &AmbientFiles)
}

/// [`apply_plan`] through `files`; every written path passes [`PatchFiles::check_write`]
/// before anything is written ([`PatchError::NotWritable`] otherwise).
pub fn apply_plan_with(
    plan: &PatchPlan,
    files: &dyn PatchFiles,
) -> Result<ApplyOutcome, PatchError> {
    for (path, expected) in &plan.baseline {
        // A path that cannot be read as it was (now a directory, a symlink where none may be
        // followed, …) changed too.
        let unchanged = match files.read(path) {
            Ok(current) => *expected == current,
            Err(_) => false,
        };
        if !unchanged {
            return Err(PatchError::Stale { path: path.clone() });
        }
    }
    for path in plan.written_paths() {
        if files.check_write(&path).is_err() {
            return Err(PatchError::NotWritable { path });
        }
    }
    for step in &plan.steps {
        match step {
            Step::Write {
                path,
                contents,
                permissions_from,
            } => {
                files.write(path, contents, permissions_from.as_deref())?;
            }
            Step::Remove { path } => files.remove(path)?,
        }
    }
    Ok(ApplyOutcome {
        added: plan.summary.added.clone(),
        modified: plan.summary.modified.clone(),
        deleted: plan.summary.deleted.clone(),
    })
}

struct Planner<'a> {
    cwd: &'a Path,
    can_write: &'a dyn Fn(&Path) -> bool,
    files: &'a dyn PatchFiles,
    /// Virtual contents of every touched path after the operations planned so far.
    state: HashMap<PathBuf, Option<Vec<u8>>>,
    baseline: Vec<(PathBuf, Option<Vec<u8>>)>,
    changes: Vec<FileChange>,
    steps: Vec<Step>,
    summary: Summary,
}

fn not_found() -> io::Error {
    io::Error::from_raw_os_error(2)
}

impl Planner<'_> {
    fn resolve(&self, written: &str) -> PathBuf {
        let p = Path::new(written);
        if p.is_absolute() {
            normalize_lexically(p)
        } else {
            normalize_lexically(&self.cwd.join(p))
        }
    }

    fn check_writable(&self, path: &Path) -> Result<(), PatchError> {
        if path_is_writable(path, self.can_write) {
            Ok(())
        } else {
            Err(PatchError::NotWritable {
                path: path.to_path_buf(),
            })
        }
    }

    /// Current (virtual) contents of `path`; reads the disk the first time.
    fn read(&mut self, path: &Path, context: &str) -> Result<Option<Vec<u8>>, PatchError> {
        if let Some(state) = self.state.get(path) {
            return Ok(state.clone());
        }
        let read_err = |source| PatchError::Read {
            context: format!("{context} {}", path.display()),
            source,
        };
        let disk = self.files.read(path).map_err(read_err)?;
        self.baseline.push((path.to_path_buf(), disk.clone()));
        self.state.insert(path.to_path_buf(), disk.clone());
        Ok(disk)
    }

    fn display(&self, path: &Path) -> String {
        let shown = path.strip_prefix(self.cwd).unwrap_or(path);
        shown.to_string_lossy().replace('\\', "/")
    }

    /// Plan writing `contents` to `path` (with the permissions of `permissions_from`): the
    /// step, and the file as the later operations see it.
    fn write(&mut self, path: &Path, contents: &str, permissions_from: Option<PathBuf>) {
        let contents = contents.as_bytes().to_vec();
        self.state
            .insert(path.to_path_buf(), Some(contents.clone()));
        self.steps.push(Step::Write {
            path: path.to_path_buf(),
            contents,
            permissions_from,
        });
    }

    /// Plan removing `path`: the step, and the file gone for the later operations.
    fn remove(&mut self, path: &Path) {
        self.state.insert(path.to_path_buf(), None);
        self.steps.push(Step::Remove {
            path: path.to_path_buf(),
        });
    }

    fn plan_op(&mut self, op: &FileOp) -> Result<(), PatchError> {
        match op {
            FileOp::Add { path, contents, .. } => {
                let abs = self.resolve(path);
                self.check_writable(&abs)?;
                let before = self.read(&abs, "Failed to write file")?;
                let old_content = before.map(|b| String::from_utf8_lossy(&b).into_owned());
                let shown = self.display(&abs);
                let git_diff =
                    git_file_diff(&shown, old_content.as_deref(), &shown, Some(contents))
                        .unwrap_or_default();
                self.write(&abs, contents, None);
                self.summary.added.push(path.clone());
                self.changes.push(FileChange {
                    path: abs,
                    display_path: path.clone(),
                    kind: ChangeKind::Add,
                    move_display_path: None,
                    old_content,
                    new_content: Some(contents.clone()),
                    overwritten_move_content: None,
                    diff: contents.clone(),
                    git_diff,
                });
            }
            FileOp::Delete { path, .. } => {
                let abs = self.resolve(path);
                self.check_writable(&abs)?;
                let Some(before) = self.read(&abs, "Failed to read")? else {
                    return Err(PatchError::Read {
                        context: format!("Failed to read {}", abs.display()),
                        source: not_found(),
                    });
                };
                let old = String::from_utf8_lossy(&before).into_owned();
                let shown = self.display(&abs);
                let git_diff = git_file_diff(&shown, Some(&old), &shown, None).unwrap_or_default();
                self.remove(&abs);
                self.summary.deleted.push(path.clone());
                self.changes.push(FileChange {
                    path: abs,
                    display_path: path.clone(),
                    kind: ChangeKind::Delete,
                    move_display_path: None,
                    old_content: Some(old.clone()),
                    new_content: None,
                    overwritten_move_content: None,
                    diff: old,
                    git_diff,
                });
            }
            FileOp::Update {
                path,
                move_path,
                chunks,
                ..
            } => {
                let abs = self.resolve(path);
                let context = "Failed to read file to update";
                let Some(bytes) = self.read(&abs, context)? else {
                    return Err(PatchError::Read {
                        context: format!("{context} {}", abs.display()),
                        source: not_found(),
                    });
                };
                let original = String::from_utf8(bytes).map_err(|_| PatchError::Read {
                    context: format!("{context} {}", abs.display()),
                    source: io::Error::new(
                        io::ErrorKind::InvalidData,
                        "stream did not contain valid UTF-8",
                    ),
                })?;
                let new = derive_new_contents(&abs, &original, chunks)?;
                self.check_writable(&abs)?;
                let dest = move_path
                    .as_ref()
                    .map(|m| (self.resolve(m), m.clone()))
                    .filter(|(d, _)| *d != abs);
                let src_shown = self.display(&abs);
                match &dest {
                    Some((dest_abs, dest_written)) => {
                        self.check_writable(dest_abs)?;
                        let overwritten = self
                            .read(dest_abs, "Failed to write file")?
                            .map(|b| String::from_utf8_lossy(&b).into_owned());
                        self.write(dest_abs, &new, Some(abs.clone()));
                        self.remove(&abs);
                        self.summary.modified.push(dest_written.clone());
                        let hunks = unified_hunks(&original, &new, FILE_CHANGE_CONTEXT);
                        let dest_shown = self.display(dest_abs);
                        let git_diff =
                            git_file_diff(&src_shown, Some(&original), &dest_shown, Some(&new))
                                .unwrap_or_default();
                        self.changes.push(FileChange {
                            path: abs,
                            display_path: path.clone(),
                            kind: ChangeKind::Update {
                                move_path: Some(dest_abs.clone()),
                            },
                            move_display_path: Some(dest_written.clone()),
                            old_content: Some(original),
                            new_content: Some(new),
                            overwritten_move_content: overwritten,
                            diff: format!("{hunks}\n\nMoved to: {}", dest_abs.display()),
                            git_diff,
                        });
                    }
                    None => {
                        self.write(&abs, &new, None);
                        self.summary.modified.push(path.clone());
                        let git_diff =
                            git_file_diff(&src_shown, Some(&original), &src_shown, Some(&new))
                                .unwrap_or_default();
                        self.changes.push(FileChange {
                            path: abs,
                            display_path: path.clone(),
                            kind: ChangeKind::Update { move_path: None },
                            move_display_path: None,
                            diff: unified_hunks(&original, &new, FILE_CHANGE_CONTEXT),
                            old_content: Some(original),
                            new_content: Some(new),
                            overwritten_move_content: None,
                            git_diff,
                        });
                    }
                }
            }
        }
        Ok(())
    }
}
