//! `[[skills.config]]`: the skills a user switched off, by `SKILL.md` path or by name, as the
//! reference writes them (`path = "…"` or `name = "…"`, `enabled = false`); switching one on
//! again removes its entry (docs/protocol.md §7.34). `skills/list` reports a skill an entry
//! names as `enabled: false`.

use std::path::{Path, PathBuf};

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

/// What an entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillSelector {
    /// A `SKILL.md`, resolved (symlinks and `..` taken out) when it exists.
    Path(PathBuf),
    /// A skill's name.
    Name(String),
}

impl SkillSelector {
    /// A path selector, resolved as the entries are compared.
    pub fn path(path: &Path) -> SkillSelector {
        SkillSelector::Path(resolved(path))
    }
}

fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn selector_of(table: &Table) -> Option<SkillSelector> {
    let path = table
        .get("path")
        .and_then(Item::as_str)
        .map(|path| SkillSelector::path(Path::new(path)));
    let name = table
        .get("name")
        .and_then(Item::as_str)
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| SkillSelector::Name(name.to_string()));
    match (path, name) {
        (Some(selector), None) | (None, Some(selector)) => Some(selector),
        _ => None,
    }
}

/// Switch the skill `selector` names off (an entry with `enabled = false`) or on (its entry
/// removed, and `[skills]` with it when nothing is left).
pub fn set_skill_enabled(doc: &mut DocumentMut, selector: &SkillSelector, enabled: bool) {
    let root = doc.as_table_mut();
    if !root.contains_key("skills") {
        if enabled {
            return;
        }
        let mut skills = Table::new();
        skills.set_implicit(true);
        root.insert("skills", Item::Table(skills));
    }
    let Some(skills) = root.get_mut("skills") else {
        return;
    };
    if !skills.is_table() {
        if enabled {
            return;
        }
        let mut table = Table::new();
        table.set_implicit(true);
        *skills = Item::Table(table);
    }
    let Some(skills) = skills.as_table_mut() else {
        return;
    };
    if !matches!(skills.get("config"), Some(Item::ArrayOfTables(_))) {
        if enabled {
            return;
        }
        skills.insert("config", Item::ArrayOfTables(ArrayOfTables::new()));
    }
    let Some(Item::ArrayOfTables(entries)) = skills.get_mut("config") else {
        return;
    };
    let existing = entries
        .iter()
        .position(|entry| selector_of(entry).as_ref() == Some(selector));
    match (enabled, existing) {
        (true, Some(index)) => {
            entries.remove(index);
            if entries.is_empty() {
                skills.remove("config");
                if skills.is_empty() {
                    root.remove("skills");
                }
            }
        }
        (true, None) => {}
        (false, Some(index)) => {
            if let Some(entry) = entries.get_mut(index) {
                entry["enabled"] = value(false);
            }
        }
        (false, None) => {
            let mut entry = Table::new();
            match selector {
                SkillSelector::Path(path) => {
                    entry["path"] = value(path.display().to_string());
                }
                SkillSelector::Name(name) => entry["name"] = value(name.clone()),
            }
            entry["enabled"] = value(false);
            entries.push(entry);
        }
    }
}

/// The skills switched off in a config table (`[[skills.config]]` entries with `enabled =
/// false`).
pub fn disabled_skills(config: &toml::Table) -> Vec<SkillSelector> {
    let Some(entries) = config
        .get("skills")
        .and_then(|skills| skills.get("config"))
        .and_then(toml::Value::as_array)
    else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(toml::Value::as_table)
        .filter(|entry| entry.get("enabled").and_then(toml::Value::as_bool) == Some(false))
        .filter_map(|entry| {
            let path = entry.get("path").and_then(toml::Value::as_str);
            let name = entry
                .get("name")
                .and_then(toml::Value::as_str)
                .map(str::trim)
                .filter(|name| !name.is_empty());
            match (path, name) {
                (Some(path), None) => Some(SkillSelector::path(Path::new(path))),
                (None, Some(name)) => Some(SkillSelector::Name(name.to_string())),
                _ => None,
            }
        })
        .collect()
}

/// Whether a skill (its `SKILL.md` and name) is switched off by one of `disabled`.
pub fn is_disabled(disabled: &[SkillSelector], path: &Path, name: &str) -> bool {
    disabled.iter().any(|selector| match selector {
        SkillSelector::Path(off) => *off == resolved(path),
        SkillSelector::Name(off) => off == name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switching_off_and_on_writes_and_removes_entries() {
        let mut doc: DocumentMut = "# mine\nmodel = \"m\"\n".parse().unwrap();
        let by_path = SkillSelector::Path(PathBuf::from("/nowhere/a/SKILL.md"));
        let by_name = SkillSelector::Name("b".into());
        set_skill_enabled(&mut doc, &by_path, false);
        set_skill_enabled(&mut doc, &by_name, false);
        set_skill_enabled(&mut doc, &by_name, false);
        let text = doc.to_string();
        assert_eq!(
            text,
            "# mine\nmodel = \"m\"\n\n[[skills.config]]\npath = \"/nowhere/a/SKILL.md\"\nenabled = false\n\n[[skills.config]]\nname = \"b\"\nenabled = false\n"
        );
        let table: toml::Table = text.parse().unwrap();
        let disabled = disabled_skills(&table);
        assert_eq!(disabled, [by_path.clone(), by_name.clone()]);
        assert!(is_disabled(
            &disabled,
            Path::new("/nowhere/a/SKILL.md"),
            "a"
        ));
        assert!(is_disabled(&disabled, Path::new("/x/SKILL.md"), "b"));
        assert!(!is_disabled(&disabled, Path::new("/x/SKILL.md"), "c"));
        set_skill_enabled(&mut doc, &by_path, true);
        set_skill_enabled(&mut doc, &by_name, true);
        assert_eq!(doc.to_string(), "# mine\nmodel = \"m\"\n");
        // Switching on what is not off changes nothing.
        set_skill_enabled(&mut doc, &by_name, true);
        assert_eq!(doc.to_string(), "# mine\nmodel = \"m\"\n");
    }
}
