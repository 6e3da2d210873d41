//! Reading one `SKILL.md`: its YAML front matter, and the optional `agents/openai.yaml`
//! beside it (how clients show the skill, the tools it needs). Limits and error texts are the
//! reference's.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use weft_protocol::skills_api::{
    SkillDependencies, SkillErrorInfo, SkillInterface, SkillMetadata, SkillScope,
    SkillToolDependency,
};

use super::read::{ReadError, read_capped};

const MAX_NAME_LEN: usize = 64;
const MAX_DESCRIPTION_LEN: usize = 1024;

/// Why a `SKILL.md` could not be loaded (the texts are the reference's).
#[derive(Debug, thiserror::Error)]
pub(super) enum SkillParseError {
    #[error("failed to read file: {0}")]
    Read(#[from] ReadError),
    #[error("missing YAML frontmatter delimited by ---")]
    MissingFrontmatter,
    #[error("invalid YAML: {0}")]
    InvalidYaml(#[from] serde_yaml::Error),
    #[error("missing field `{0}`")]
    MissingField(&'static str),
    #[error("invalid {field}: {reason}")]
    InvalidField { field: &'static str, reason: String },
}

#[derive(Debug, Deserialize)]
struct Frontmatter {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    metadata: FrontmatterMetadata,
}

#[derive(Debug, Default, Deserialize)]
struct FrontmatterMetadata {
    #[serde(default, rename = "short-description")]
    short_description: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct MetadataFile {
    #[serde(default)]
    interface: Option<InterfaceYaml>,
    #[serde(default)]
    dependencies: Option<DependenciesYaml>,
}

#[derive(Debug, Default, Deserialize)]
struct InterfaceYaml {
    display_name: Option<String>,
    short_description: Option<String>,
    icon_small: Option<PathBuf>,
    icon_large: Option<PathBuf>,
    brand_color: Option<String>,
    default_prompt: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct DependenciesYaml {
    #[serde(default)]
    tools: Vec<ToolYaml>,
}

#[derive(Debug, Default, Deserialize)]
struct ToolYaml {
    #[serde(rename = "type")]
    kind: Option<String>,
    value: Option<String>,
    description: Option<String>,
    transport: Option<String>,
    command: Option<String>,
    url: Option<String>,
}

/// Loads the skill whose `SKILL.md` is at `path`, reading files of at most `max_bytes`. An
/// `agents/openai.yaml` beside it that cannot be read is added to `errors` (the skill is
/// loaded without it).
pub(super) fn parse_skill_file(
    path: &Path,
    scope: SkillScope,
    max_bytes: u64,
    errors: &mut Vec<SkillErrorInfo>,
) -> Result<SkillMetadata, SkillParseError> {
    let contents = read_capped(path, max_bytes)?;
    let frontmatter = extract_frontmatter(&contents).ok_or(SkillParseError::MissingFrontmatter)?;
    let parsed: Frontmatter = serde_yaml::from_str(&frontmatter)?;
    let name = parsed
        .name
        .as_deref()
        .map(single_line)
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| default_name(path));
    let description = parsed
        .description
        .as_deref()
        .map(single_line)
        .unwrap_or_default();
    let short_description = parsed
        .metadata
        .short_description
        .as_deref()
        .map(single_line)
        .filter(|value| !value.is_empty());
    validate_len(&name, MAX_NAME_LEN, "name")?;
    validate_len(&description, MAX_DESCRIPTION_LEN, "description")?;
    if let Some(short) = &short_description {
        validate_len(short, MAX_DESCRIPTION_LEN, "metadata.short-description")?;
    }
    let skill_dir = path.parent().unwrap_or(Path::new("/"));
    let metadata = read_metadata_file(skill_dir, max_bytes, errors);
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(SkillMetadata {
        name,
        description,
        short_description,
        interface: metadata
            .interface
            .and_then(|interface| resolve_interface(interface, skill_dir)),
        dependencies: metadata.dependencies.and_then(resolve_dependencies),
        path: resolved.display().to_string(),
        scope,
        enabled: true,
        plugin_id: None,
    })
}

/// The text between a first line `---` and the next `---` line.
fn extract_frontmatter(contents: &str) -> Option<String> {
    let mut lines = contents.lines();
    if lines.next().map(str::trim) != Some("---") {
        return None;
    }
    let mut body = Vec::new();
    for line in lines {
        if line.trim() == "---" {
            return (!body.is_empty()).then(|| body.join("\n"));
        }
        body.push(line);
    }
    None
}

fn single_line(raw: &str) -> String {
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The skill folder's name.
fn default_name(path: &Path) -> String {
    path.parent()
        .and_then(Path::file_name)
        .map(|name| single_line(&name.to_string_lossy()))
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "skill".to_string())
}

fn validate_len(value: &str, max: usize, field: &'static str) -> Result<(), SkillParseError> {
    if value.is_empty() {
        return Err(SkillParseError::MissingField(field));
    }
    if value.chars().count() > max {
        return Err(SkillParseError::InvalidField {
            field,
            reason: format!("exceeds maximum length of {max} characters"),
        });
    }
    Ok(())
}

/// `agents/openai.yaml`; optional: a missing file or invalid YAML is ignored (the latter
/// logged), a file that cannot be read (not a regular file, too large, unreadable) is reported
/// in `errors`.
fn read_metadata_file(
    skill_dir: &Path,
    max_bytes: u64,
    errors: &mut Vec<SkillErrorInfo>,
) -> MetadataFile {
    let path = skill_dir.join("agents").join("openai.yaml");
    let contents = match read_capped(&path, max_bytes) {
        Ok(contents) => contents,
        Err(err) if err.is_not_found() => return MetadataFile::default(),
        Err(err) => {
            errors.push(SkillErrorInfo {
                path: path.display().to_string(),
                message: SkillParseError::Read(err).to_string(),
            });
            return MetadataFile::default();
        }
    };
    serde_yaml::from_str(&contents).unwrap_or_else(|err| {
        tracing::warn!(path = %path.display(), %err, "ignoring an invalid skill metadata file");
        MetadataFile::default()
    })
}

fn optional(value: Option<String>, max: usize) -> Option<String> {
    let value = single_line(&value?);
    (!value.is_empty() && value.chars().count() <= max).then_some(value)
}

fn resolve_interface(interface: InterfaceYaml, skill_dir: &Path) -> Option<SkillInterface> {
    let brand_color = interface.brand_color.and_then(|color| {
        let color = color.trim().to_string();
        let hex = color.len() == 7
            && color.starts_with('#')
            && color[1..].chars().all(|c| c.is_ascii_hexdigit());
        hex.then_some(color)
    });
    let resolved = SkillInterface {
        display_name: optional(interface.display_name, MAX_NAME_LEN),
        short_description: optional(interface.short_description, MAX_DESCRIPTION_LEN),
        icon_small: interface.icon_small.and_then(|p| asset_path(skill_dir, &p)),
        icon_large: interface.icon_large.and_then(|p| asset_path(skill_dir, &p)),
        icon_small_url: None,
        icon_large_url: None,
        brand_color,
        default_prompt: optional(interface.default_prompt, MAX_DESCRIPTION_LEN),
    };
    (resolved != SkillInterface::default()).then_some(resolved)
}

/// An icon must be a relative path under the skill's `assets/`.
fn asset_path(skill_dir: &Path, path: &Path) -> Option<String> {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::Normal(part) => normalized.push(part),
            _ => return None,
        }
    }
    let under_assets = normalized
        .components()
        .next()
        .is_some_and(|first| first.as_os_str() == "assets");
    under_assets.then(|| skill_dir.join(normalized).display().to_string())
}

fn resolve_dependencies(dependencies: DependenciesYaml) -> Option<SkillDependencies> {
    let tools: Vec<SkillToolDependency> = dependencies
        .tools
        .into_iter()
        .filter_map(|tool| {
            Some(SkillToolDependency {
                kind: optional(tool.kind, MAX_NAME_LEN)?,
                value: optional(tool.value, MAX_DESCRIPTION_LEN)?,
                description: optional(tool.description, MAX_DESCRIPTION_LEN),
                transport: optional(tool.transport, MAX_NAME_LEN),
                command: optional(tool.command, MAX_DESCRIPTION_LEN),
                url: optional(tool.url, MAX_DESCRIPTION_LEN),
            })
        })
        .collect();
    (!tools.is_empty()).then_some(SkillDependencies { tools })
}
