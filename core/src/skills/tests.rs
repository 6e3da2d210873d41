use std::path::Path;
use std::time::Duration;

use weft_protocol::skills_api::SkillScope;

use super::*;

/// The default limits: 1 MiB files, and time enough.
fn limits() -> ScanLimits {
    ScanLimits::new(1024 * 1024, Duration::from_secs(60))
}

fn skill(dir: &Path, front: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), format!("---\n{front}\n---\nbody\n")).unwrap();
}

struct Layout {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Layout {
    /// The reference's test layout: a git workspace with repo skills at two levels, user
    /// skills in both user roots, and two broken files.
    fn new() -> Layout {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(ws.join("sub/deeper")).unwrap();
        let weft = root.join("weft/skills");
        for (dir, front) in [
            (
                ws.join(".codex/skills/dotcodex"),
                "name: dotcodex-skill\ndescription: d1",
            ),
            (
                ws.join(".agents/skills/ws"),
                "name: ws-agents-skill\ndescription: d2",
            ),
            (
                ws.join("sub/.agents/skills/s"),
                "name: sub-skill\ndescription: d3",
            ),
            (
                weft.join("group/nested"),
                "name: nested-skill\ndescription: >\n  folded\n  text",
            ),
            (weft.join("noname"), "description: only desc"),
            (weft.join(".system/hidden"), "name: hidden\ndescription: h"),
            (
                root.join("home/.agents/skills/h"),
                "name: home-agent-skill\ndescription: d4\nmetadata:\n  short-description: short",
            ),
        ] {
            skill(&dir, front);
        }
        std::fs::create_dir_all(weft.join("bad")).unwrap();
        std::fs::write(weft.join("bad/SKILL.md"), "no front matter\n").unwrap();
        skill(&weft.join("nodesc"), "name: nodesc");
        skill(&weft.join("yaml"), "name: [unclosed");
        Layout { _tmp: tmp, root }
    }

    fn skills(&self) -> Skills {
        Skills::new(self.root.join("weft"), Some(self.root.join("home")))
    }
}

#[test]
fn finds_repo_then_user_skills_sorted_by_name() {
    let layout = Layout::new();
    let outcome = layout
        .skills()
        .list(&layout.root.join("ws/sub/deeper"), false, &limits());
    let names: Vec<(&str, SkillScope)> = outcome
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.scope))
        .collect();
    assert_eq!(
        names,
        vec![
            ("dotcodex-skill", SkillScope::Repo),
            ("sub-skill", SkillScope::Repo),
            ("ws-agents-skill", SkillScope::Repo),
            ("home-agent-skill", SkillScope::User),
            ("nested-skill", SkillScope::User),
            ("noname", SkillScope::User),
        ]
    );
    let nested = &outcome.skills[4];
    assert_eq!(nested.description, "folded text");
    assert!(nested.path.ends_with("weft/skills/group/nested/SKILL.md"));
    assert!(nested.enabled);
    assert_eq!(
        outcome.skills[3].short_description.as_deref(),
        Some("short")
    );
    let mut errors: Vec<(String, String)> = outcome
        .errors
        .iter()
        .map(|e| {
            let dir = Path::new(&e.path).parent().unwrap().file_name().unwrap();
            (dir.to_string_lossy().into_owned(), e.message.clone())
        })
        .collect();
    errors.sort();
    assert_eq!(
        errors[0],
        (
            "bad".into(),
            "missing YAML frontmatter delimited by ---".into()
        )
    );
    assert_eq!(
        errors[1],
        ("nodesc".into(), "missing field `description`".into())
    );
    assert_eq!(errors[2].0, "yaml");
    assert!(errors[2].1.starts_with("invalid YAML: "), "{:?}", errors[2]);
}

#[test]
fn outside_a_repository_only_the_cwd_and_user_roots_count() {
    let layout = Layout::new();
    let outcome = layout
        .skills()
        .list(Path::new("/nonexistent/x"), false, &limits());
    assert!(outcome.skills.iter().all(|s| s.scope == SkillScope::User));
    assert_eq!(outcome.skills.len(), 3);
}

#[test]
fn results_are_cached_until_force_reload() {
    let layout = Layout::new();
    let skills = layout.skills();
    let cwd = layout.root.join("ws");
    assert_eq!(skills.list(&cwd, false, &limits()).skills.len(), 5);
    skill(
        &layout.root.join("ws/.agents/skills/late"),
        "name: late\ndescription: l",
    );
    assert_eq!(skills.list(&cwd, false, &limits()).skills.len(), 5);
    assert_eq!(skills.list(&cwd, true, &limits()).skills.len(), 6);
    assert_eq!(skills.list(&cwd, false, &limits()).skills.len(), 6);
}

#[test]
fn interface_and_dependencies_come_from_openai_yaml() {
    let layout = Layout::new();
    let dir = layout.root.join("weft/skills/noname");
    std::fs::create_dir_all(dir.join("agents")).unwrap();
    std::fs::write(
        dir.join("agents/openai.yaml"),
        "interface:\n  display_name: No Name\n  icon_small: ./assets/s.svg\n  icon_large: ../x.png\n  brand_color: '#A1B2C3'\ndependencies:\n  tools:\n    - type: mcp\n      value: srv\n    - value: missing-type\n",
    )
    .unwrap();
    let outcome = layout
        .skills()
        .list(Path::new("/nonexistent"), true, &limits());
    let skill = outcome.skills.iter().find(|s| s.name == "noname").unwrap();
    let interface = skill.interface.as_ref().unwrap();
    assert_eq!(interface.display_name.as_deref(), Some("No Name"));
    assert_eq!(
        interface.icon_small.as_deref(),
        Some(dir.join("assets/s.svg").display().to_string().as_str())
    );
    assert_eq!(interface.icon_large, None);
    assert_eq!(interface.brand_color.as_deref(), Some("#A1B2C3"));
    let tools = &skill.dependencies.as_ref().unwrap().tools;
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].kind, "mcp");
}

/// Make a FIFO at `path`.
fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The errors of an outcome whose path ends with `suffix`.
fn errors_for<'a>(outcome: &'a SkillsOutcome, suffix: &str) -> Vec<&'a str> {
    outcome
        .errors
        .iter()
        .filter(|e| e.path.ends_with(suffix))
        .map(|e| e.message.as_str())
        .collect()
}

/// Issue 24 §6: an `agents/openai.yaml` that is a symlink to `/dev/zero` or a FIFO, a
/// `SKILL.md` that is a FIFO and a sparse 1 GiB `SKILL.md` are reported, never read; the
/// skills beside them still load.
#[test]
fn hostile_skill_files_are_reported_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let skills_root = root.join("weft/skills");
    skill(&skills_root.join("zero"), "name: zero\ndescription: z");
    std::fs::create_dir_all(skills_root.join("zero/agents")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", skills_root.join("zero/agents/openai.yaml")).unwrap();
    skill(&skills_root.join("pipe"), "name: pipe\ndescription: p");
    std::fs::create_dir_all(skills_root.join("pipe/agents")).unwrap();
    mkfifo(&skills_root.join("pipe/agents/openai.yaml"));
    std::fs::create_dir_all(skills_root.join("fifo")).unwrap();
    mkfifo(&skills_root.join("fifo/SKILL.md"));
    std::fs::create_dir_all(skills_root.join("sparse")).unwrap();
    let sparse = std::fs::File::create(skills_root.join("sparse/SKILL.md")).unwrap();
    sparse.set_len(1 << 30).unwrap();
    skill(&skills_root.join("fine"), "name: fine\ndescription: f");

    let skills = Skills::new(root.join("weft"), None);
    let outcome = skills.list(Path::new("/nonexistent"), false, &limits());
    let names: Vec<&str> = outcome.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fine", "pipe", "zero"]);
    assert!(!outcome.incomplete);
    let not_regular = "failed to read file: not a regular file";
    for (file, error) in [
        (
            "zero/agents/openai.yaml",
            format!("{not_regular} (a character device)"),
        ),
        ("pipe/agents/openai.yaml", format!("{not_regular} (a FIFO)")),
        ("fifo/SKILL.md", format!("{not_regular} (a FIFO)")),
        (
            "sparse/SKILL.md",
            "failed to read file: larger than 1048576 bytes (limits.max_skill_file_bytes)".into(),
        ),
    ] {
        assert_eq!(errors_for(&outcome, file), [error.as_str()], "{file}");
    }
    assert_eq!(outcome.errors.len(), 4, "{:?}", outcome.errors);
}

#[test]
fn files_over_the_limit_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let dir = root.join("weft/skills/big");
    skill(&dir, "name: big\ndescription: a description long enough");
    std::fs::create_dir_all(dir.join("agents")).unwrap();
    std::fs::write(dir.join("agents/openai.yaml"), "interface: {}\n").unwrap();
    let skills = Skills::new(root.join("weft"), None);
    let small = ScanLimits::new(16, Duration::from_secs(60));
    let outcome = skills.list(Path::new("/nonexistent"), false, &small);
    assert!(outcome.skills.is_empty());
    assert_eq!(
        errors_for(&outcome, "big/SKILL.md"),
        ["failed to read file: larger than 16 bytes (limits.max_skill_file_bytes)"]
    );
    // The front matter fits; the metadata file beside it does not.
    let fits = ScanLimits::new(64, Duration::from_secs(60));
    std::fs::write(dir.join("agents/openai.yaml"), "x".repeat(65)).unwrap();
    let outcome = skills.list(Path::new("/nonexistent"), true, &fits);
    assert_eq!(outcome.skills.len(), 1, "{:?}", outcome.errors);
    assert_eq!(
        errors_for(&outcome, "big/agents/openai.yaml"),
        ["failed to read file: larger than 64 bytes (limits.max_skill_file_bytes)"]
    );
}

/// A file that grows past the limit after it was checked stops at the limit (`take()`).
#[test]
fn reads_stop_at_the_limit() {
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let err = read::read_at_most(zero, 4096).unwrap_err();
    assert!(
        matches!(err, read::ReadError::TooLarge { max: 4096 }),
        "{err}"
    );
}

/// A scan out of time lists what it found by then, names where it stopped, and is not cached.
#[test]
fn a_scan_out_of_time_stops_and_is_not_cached() {
    let layout = Layout::new();
    let skills = layout.skills();
    let cwd = layout.root.join("ws");
    let expired = ScanLimits::new(1024 * 1024, Duration::ZERO);
    let outcome = skills.list(&cwd, false, &expired);
    assert!(outcome.incomplete);
    assert!(outcome.skills.is_empty());
    assert_eq!(outcome.errors.len(), 1, "{:?}", outcome.errors);
    assert_eq!(
        outcome.errors[0].message,
        "skills scan stopped after 0 s (limits.skills_scan_timeout_secs); skills not reached by \
         then are not listed"
    );
    assert_eq!(
        outcome.errors[0].path,
        cwd.join(".codex/skills").display().to_string()
    );
    assert_eq!(
        skills.list(&cwd, false, &limits()).skills.len(),
        5,
        "not cached"
    );
}

#[test]
fn project_dirs_run_from_the_git_root_to_the_cwd() {
    let layout = Layout::new();
    let ws = layout.root.join("ws");
    assert_eq!(
        project_dirs(&ws.join("sub/deeper")),
        vec![ws.clone(), ws.join("sub"), ws.join("sub/deeper")]
    );
    assert_eq!(project_dirs(&layout.root), vec![layout.root.clone()]);
}
