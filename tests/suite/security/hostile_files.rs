//! Hostile files in a skill folder (issue 24 §6): `skills/list` reads only regular files, each
//! up to `[limits] max_skill_file_bytes`, and reports the rest as errors in its answer. A
//! cloned repository decides what its `.agents/skills` hold, so none of this may hang the
//! daemon or make it hold a file's worth of memory.

use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{Value, json};
use weft_test_support::Transport;

use crate::client_surface::{Surface, write_skill};

/// A field of `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`).
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The messages `entry` reports for the file at `path`.
fn errors_for(entry: &Value, path: &Path) -> Vec<String> {
    let path = path.display().to_string();
    entry["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter(|e| e["path"] == path.as_str())
        .map(|e| e["message"].as_str().expect("message").to_owned())
        .collect()
}

/// `agents/openai.yaml` linked to `/dev/zero` and one that is a FIFO, a `SKILL.md` that is a
/// FIFO and a sparse 1 GiB `SKILL.md`: the answer comes within the client's usual timeout, the
/// good skills are listed, each hostile file is an error naming it, and the daemon's memory
/// stays small.
#[tokio::test]
async fn skills_list_reports_hostile_files_without_reading_them() {
    let mut s = Surface::start(Transport::Stdio, "", "", &[]).await;
    let skills = s.ws().join(".agents/skills");
    write_skill(
        &skills.join("zero"),
        "name: zero\ndescription: metadata is /dev/zero",
    );
    std::fs::create_dir_all(skills.join("zero/agents")).unwrap();
    let zero_yaml = skills.join("zero/agents/openai.yaml");
    symlink("/dev/zero", &zero_yaml).unwrap();
    write_skill(
        &skills.join("pipe"),
        "name: pipe\ndescription: metadata is a FIFO",
    );
    std::fs::create_dir_all(skills.join("pipe/agents")).unwrap();
    let pipe_yaml = skills.join("pipe/agents/openai.yaml");
    mkfifo(&pipe_yaml);
    std::fs::create_dir_all(skills.join("fifo")).unwrap();
    let fifo_skill = skills.join("fifo/SKILL.md");
    mkfifo(&fifo_skill);
    std::fs::create_dir_all(skills.join("sparse")).unwrap();
    let sparse_skill = skills.join("sparse/SKILL.md");
    std::fs::File::create(&sparse_skill)
        .and_then(|f| f.set_len(1 << 30))
        .expect("a sparse 1 GiB SKILL.md");
    write_skill(
        &skills.join("fine"),
        "name: fine\ndescription: an ordinary skill",
    );

    let pid = s.daemon.pid();
    let rss_before = status_kib(pid, "VmRSS");
    let cwd = s.ws().display().to_string();
    let answer = s
        .client
        .request("skills/list", json!({"cwds": [cwd], "forceReload": true}))
        .await
        .expect("skills/list answers");
    let peak = status_kib(pid, "VmHWM");
    let entry = &answer["data"][0];
    let names: Vec<&str> = entry["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|skill| skill["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["fine", "pipe", "zero"], "{entry}");
    for (path, error) in [
        (&zero_yaml, "not a regular file (a character device)"),
        (&pipe_yaml, "not a regular file (a FIFO)"),
        (&fifo_skill, "not a regular file (a FIFO)"),
        (
            &sparse_skill,
            "larger than 1048576 bytes (limits.max_skill_file_bytes)",
        ),
    ] {
        assert_eq!(
            errors_for(entry, path),
            [format!("failed to read file: {error}")]
        );
    }
    assert_eq!(entry["errors"].as_array().map(Vec::len), Some(4), "{entry}");
    // A generous bound: reading any of these files whole would add about 1 GiB.
    let grown_mib = peak.saturating_sub(rss_before) / 1024;
    assert!(
        grown_mib < 128,
        "skills/list grew the daemon by {grown_mib} MiB (VmRSS {rss_before} KiB before, \
         VmHWM {peak} KiB after)"
    );

    // The daemon still answers, and the cached answer is the same.
    let again = s
        .client
        .request("skills/list", json!({"cwds": [cwd]}))
        .await
        .expect("skills/list answers from the cache");
    assert_eq!(again, answer);
}

/// `[limits] max_skill_file_bytes` is the configured number: a `SKILL.md` over it is an error.
#[tokio::test]
async fn the_skill_file_limit_comes_from_config() {
    let mut s = Surface::start(
        Transport::Stdio,
        "",
        "[limits]\nmax_skill_file_bytes = 64\n",
        &[],
    )
    .await;
    let skills = s.ws().join(".agents/skills");
    write_skill(&skills.join("short"), "name: short\ndescription: s");
    write_skill(
        &skills.join("long"),
        &format!("name: long\ndescription: {}", "d".repeat(80)),
    );
    let cwd = s.ws().display().to_string();
    let answer = s
        .client
        .request("skills/list", json!({"cwds": [cwd]}))
        .await
        .expect("skills/list answers");
    let entry = &answer["data"][0];
    assert_eq!(entry["skills"][0]["name"], "short", "{entry}");
    assert_eq!(entry["skills"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        errors_for(entry, &skills.join("long/SKILL.md")),
        ["failed to read file: larger than 64 bytes (limits.max_skill_file_bytes)"]
    );
}
