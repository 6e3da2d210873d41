//! File work of an import: the other agent's name in copied instructions replaced by the one
//! the reference writes, skill folders copied, slash commands turned into skills.

use std::io;
use std::path::{Path, PathBuf};

/// Prefix of the skill a slash command becomes.
pub const COMMAND_SKILL_PREFIX: &str = "source-command-";

/// Whether a command file uses arguments, which a skill has no way to take (such commands are
/// left alone, as the reference leaves them).
fn takes_arguments(text: &str) -> bool {
    text.contains("$ARGUMENTS")
}

/// `text` with `CLAUDE.md` as `AGENTS.md` and Claude Code's names as `Codex` (the reference's
/// wording, so a file imported by either agent reads the same), matched case-insensitively
/// as whole words.
pub fn rewrite_terms(text: &str) -> String {
    let mut out = replace_words(text, "claude.md", "AGENTS.md");
    for name in [
        "claude code",
        "claude-code",
        "claude_code",
        "claudecode",
        "claude",
    ] {
        out = replace_words(&out, name, "Codex");
    }
    out
}

/// Every whole-word, ASCII-case-insensitive occurrence of `needle` replaced by `with`.
fn replace_words(text: &str, needle: &str, with: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = lower[from..].find(needle) {
        let start = from + found;
        let end = start + needle.len();
        let alone =
            (start == 0 || !word(bytes[start - 1])) && (end == bytes.len() || !word(bytes[end]));
        if alone {
            out.push_str(&text[copied..start]);
            out.push_str(with);
            copied = end;
            from = end;
        } else {
            from = start + 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether `path` is a file with more than whitespace in it.
pub fn has_text(path: &Path) -> bool {
    path.is_file() && std::fs::read_to_string(path).is_ok_and(|text| !text.trim().is_empty())
}

/// Whether `path` is absent or a whitespace-only file.
pub fn missing_or_blank(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Err(_) => true,
        Ok(meta) if meta.is_file() => {
            std::fs::read_to_string(path).is_ok_and(|text| text.trim().is_empty())
        }
        Ok(_) => false,
    }
}

/// Names of the folders directly in `dir` (symbolic links not followed), sorted.
pub fn folder_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .filter_map(|entry| entry.file_name().into_string().ok())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// Copy the folder `from` to `to` (which must not exist): folders and regular files, each
/// `SKILL.md` with [`rewrite_terms`] applied; symbolic links are not copied.
pub fn copy_skill(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_skill(&entry.path(), &target)?;
        } else if kind.is_file() {
            if entry.file_name().eq_ignore_ascii_case("SKILL.md") {
                let text = std::fs::read_to_string(entry.path())?;
                std::fs::write(&target, rewrite_terms(&text))?;
            } else {
                std::fs::copy(entry.path(), &target)?;
            }
        }
    }
    Ok(())
}

/// A slash command found in a commands folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The command's file.
    pub path: PathBuf,
    /// The skill it becomes (`source-command-<file stem>`).
    pub skill: String,
}

/// The commands in `dir` (its `*.md` files) that can become skills, sorted by skill name.
pub fn commands(dir: &Path) -> Vec<Command> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<Command> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .filter_map(|entry| {
            let path = entry.path();
            if path.extension().and_then(|ext| ext.to_str()) != Some("md") {
                return None;
            }
            let stem = path.file_stem()?.to_str()?.to_owned();
            let text = std::fs::read_to_string(&path).ok()?;
            if stem.is_empty() || takes_arguments(&text) {
                return None;
            }
            Some(Command {
                path,
                skill: format!("{COMMAND_SKILL_PREFIX}{stem}"),
            })
        })
        .collect();
    found.sort_by(|a, b| a.skill.cmp(&b.skill));
    found
}

/// The `SKILL.md` a command file becomes: its `description` (or a default), the body as the
/// template with [`rewrite_terms`] applied.
pub fn command_skill(command: &Command, text: &str) -> String {
    let name = &command.skill;
    let original = &name[COMMAND_SKILL_PREFIX.len()..];
    let (description, body) = split_front_matter(text);
    let description =
        description.unwrap_or_else(|| format!("Migrated source command `{original}`"));
    let quote = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
    format!(
        "---\nname: {}\ndescription: {}\n---\n\n# {name}\n\nUse this skill when the user asks to \
         run the migrated source command `{original}`.\n\n## Command Template\n\n{}",
        quote(name),
        quote(&rewrite_terms(&description)),
        rewrite_terms(body.trim_start_matches('\n')),
    )
}

/// A markdown file's front-matter `description` (if any) and the text after the front matter.
fn split_front_matter(text: &str) -> (Option<String>, &str) {
    let (header, body) = front_matter(text);
    (header.and_then(|header| field(header, "description")), body)
}

/// A markdown file's front matter (between `---` lines at its top), if any, and the rest.
fn front_matter(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return (None, text);
    };
    let Some(end) = rest.find("\n---") else {
        return (None, text);
    };
    let after = &rest[end + 4..];
    (
        Some(&rest[..end]),
        after.strip_prefix('\n').unwrap_or(after),
    )
}

/// The value of `key: value` in front matter, unquoted; `None` when absent or empty.
fn field(header: &str, key: &str) -> Option<String> {
    header.lines().find_map(|line| {
        let value = line.strip_prefix(key)?.strip_prefix(':')?.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        (!value.is_empty()).then(|| value.to_owned())
    })
}

/// A subagent definition (`agents/*.md`): front-matter `name` (else the file stem) and
/// `description`, the body as its instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subagent {
    /// The role name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Its instructions ([`rewrite_terms`] applied), if any.
    pub instructions: Option<String>,
}

/// The subagents defined in `dir`, sorted by name (the first file wins a name).
pub fn subagents(dir: &Path) -> Vec<Subagent> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .map(|entry| entry.path())
        .filter(|path| path.extension().and_then(|ext| ext.to_str()) == Some("md"))
        .collect();
    paths.sort();
    let mut found: Vec<Subagent> = Vec::new();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let (header, body) = front_matter(&text);
        let name = header
            .and_then(|header| field(header, "name"))
            .or_else(|| path.file_stem()?.to_str().map(str::to_owned));
        let Some(name) = name.filter(|name| !name.trim().is_empty()) else {
            continue;
        };
        if found.iter().any(|agent| agent.name == name) {
            continue;
        }
        let body = body.trim();
        found.push(Subagent {
            name,
            description: header
                .and_then(|header| field(header, "description"))
                .map(|d| rewrite_terms(&d)),
            instructions: (!body.is_empty()).then(|| rewrite_terms(body)),
        });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}
