//! Importing Claude Code's set-up into Weft's (`externalAgentConfig/*`, docs/protocol.md §7.39).
//!
//! Detection looks in the user's home (`~/.claude/`, `~/.claude.json`) and in the repositories
//! of the cwds a client names (`<repo>/.claude/`, `<repo>/CLAUDE.md`), and lists what Weft has
//! an equivalent for and does not have yet:
//!
//! | item | home | repository |
//! | --- | --- | --- |
//! | `CONFIG` | `~/.claude/settings.json` `env`, `sandbox.enabled` → `$WEFT_HOME/config.toml` | — |
//! | `MCP_SERVER_CONFIG` | `~/.claude.json` `mcpServers` → `[mcp_servers.*]` | — |
//! | `HOOKS` | `Stop` command hooks → `[[hooks.stop]]` | — |
//! | `SKILLS` | `~/.claude/skills/*` → `~/.agents/skills/` | `.claude/skills/*` → `.agents/skills/` |
//! | `COMMANDS` | `~/.claude/commands/*.md` → `~/.agents/skills/source-command-*` | the same under the repository |
//! | `SUBAGENTS` | `~/.claude/agents/*.md` → `[agents.NAME]` roles | — |
//! | `AGENTS_MD` | — | `CLAUDE.md` (or `.claude/CLAUDE.md`) → `AGENTS.md` |
//! | `SESSIONS` | `~/.claude/projects/*/*.jsonl` → stored threads ([`session_import`]) | — |
//!
//! Weft reads no project-level `config.toml` and no user-level `AGENTS.md`, and has no plugins
//! and no memory pipeline: those items are never detected. Importing an item again imports only
//! what is still missing; a config write goes through the checked, comment-keeping, atomic
//! writer ([`crate::config::write`]).

pub mod detect;
mod files;
pub mod history;
pub mod import;
pub mod session_import;
pub mod sessions;
mod settings;

use std::path::{Path, PathBuf};

/// Where the other agent's set-up and Weft's live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Homes {
    /// `$WEFT_HOME`.
    pub weft_home: PathBuf,
    /// `$HOME` (no home-scoped items without it).
    pub user_home: Option<PathBuf>,
    /// The user's `config.toml` (the daemon's user config layer).
    pub config_file: PathBuf,
}

impl Homes {
    /// The homes of a daemon: `weft_home`, its user config file and `$HOME`.
    pub fn from_env(weft_home: PathBuf, config_file: PathBuf) -> Homes {
        let user_home = std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from);
        Homes {
            weft_home,
            user_home,
            config_file,
        }
    }

    /// `~/.claude`.
    fn claude_home(&self) -> Option<PathBuf> {
        self.user_home.as_ref().map(|home| home.join(".claude"))
    }

    /// `~/.agents/skills`, the user skills root Weft shares with other agents.
    fn user_skills(&self) -> Option<PathBuf> {
        self.user_home
            .as_ref()
            .map(|home| home.join(".agents").join("skills"))
    }

    /// The user's `config.toml`.
    fn weft_config(&self) -> PathBuf {
        self.config_file.clone()
    }
}

/// The repository a cwd belongs to: the nearest ancestor (the cwd included; a file's folder for
/// a file) holding a `.git` entry, else the cwd itself; `None` for an empty or missing path.
pub fn repo_root(cwd: &Path) -> Option<PathBuf> {
    if cwd.as_os_str().is_empty() {
        return None;
    }
    let mut dir = std::path::absolute(cwd).ok()?;
    if !dir.exists() {
        return None;
    }
    if dir.is_file() {
        dir = dir.parent()?.to_path_buf();
    }
    let root = dir
        .ancestors()
        .find(|candidate| candidate.join(".git").exists())
        .unwrap_or(&dir)
        .to_path_buf();
    Some(root)
}

/// A path as the wire shows it.
fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests;
