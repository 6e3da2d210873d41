//! The walk, the ranking and the session flow on real trees.

use std::fs;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::*;

fn touch(root: &Path, path: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, "x").unwrap();
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(".git")).unwrap();
    fs::write(dir.path().join(".gitignore"), "ignored_dir/\n*.log\n").unwrap();
    for path in [
        "src/main.rs",
        "src/widgets/button.rs",
        "src/widgets/mod.rs",
        "ignored_dir/main_ignored.rs",
        "app.log",
        "README.md",
        ".hidden/secret_main.txt",
        "Makefile",
    ] {
        touch(dir.path(), path);
    }
    dir
}

fn search(query: &str, root: &Path) -> Vec<(String, u32)> {
    let snapshot = run(
        query,
        vec![root.to_path_buf()],
        FileSearchConfig::default(),
        &AtomicBool::new(false),
    )
    .unwrap();
    snapshot
        .matches
        .into_iter()
        .map(|m| (m.path, m.score))
        .collect()
}

#[test]
fn gitignore_is_honoured_and_ranking_is_the_references() {
    let dir = tree();
    assert_eq!(
        search("main", dir.path()),
        [
            ("src/main.rs".to_owned(), 65645),
            (".hidden/secret_main.txt".to_owned(), 65640)
        ]
    );
    let wid: Vec<String> = search("wid", dir.path()).into_iter().map(|m| m.0).collect();
    assert_eq!(
        wid,
        ["src/widgets", "src/widgets/button.rs", "src/widgets/mod.rs"]
    );
    assert!(search("log", dir.path()).is_empty());
    assert!(search("", dir.path()).is_empty());
}

#[test]
fn no_roots_is_an_error_and_missing_roots_find_nothing() {
    let err = run(
        "x",
        vec![],
        FileSearchConfig::default(),
        &AtomicBool::new(false),
    );
    assert_eq!(
        err.unwrap_err(),
        "at least one search directory is required"
    );
    assert!(search("x", Path::new("/nonexistent/zz")).is_empty());
    assert!(search("x", Path::new("relative")).is_empty());
}

#[test]
fn the_entry_budget_and_the_result_limit_hold() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..300 {
        touch(dir.path(), &format!("f{i:03}.txt"));
    }
    let config = FileSearchConfig {
        max_entries: 100,
        max_results: 7,
        ..FileSearchConfig::default()
    };
    let snapshot = run(
        "f",
        vec![dir.path().to_path_buf()],
        config,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(snapshot.matches.len(), 7);
    assert_eq!(snapshot.scanned, 100);
    assert!(!snapshot.walk_complete);
}

#[test]
fn symlinks_outside_the_roots_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    touch(&workspace, "inside/inside-target.txt");
    touch(dir.path(), "outside/outside-target.txt");
    std::os::unix::fs::symlink(workspace.join("inside"), workspace.join("inside-link")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside"), workspace.join("outside-link")).unwrap();
    let inside: Vec<String> = search("inside-target", &workspace)
        .into_iter()
        .map(|m| m.0)
        .collect();
    assert!(
        inside.contains(&"inside-link/inside-target.txt".to_owned()),
        "{inside:?}"
    );
    assert!(search("outside-target", &workspace).is_empty());
}

#[test]
fn cancellation_stops_a_run() {
    let dir = tempfile::tempdir().unwrap();
    touch(dir.path(), "a.txt");
    let cancel = AtomicBool::new(true);
    let started = Instant::now();
    let snapshot = run(
        "a",
        vec![dir.path().to_path_buf()],
        FileSearchConfig::default(),
        &cancel,
    )
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(snapshot.query, "a");
}

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<(String, usize, bool)>>,
    wake: Condvar,
}

impl Reporter for Recorder {
    fn update(&self, snapshot: Snapshot) {
        self.events
            .lock()
            .push((snapshot.query, snapshot.matches.len(), false));
        self.wake.notify_all();
    }

    fn complete(&self, query: &str) {
        self.events.lock().push((query.to_owned(), 0, true));
        self.wake.notify_all();
    }
}

impl Recorder {
    fn wait_completed(&self, query: &str) -> Vec<(String, usize, bool)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut events = self.events.lock();
        while !events.iter().any(|e| e.2 && e.0 == query) {
            assert!(
                Instant::now() < deadline,
                "no completion for {query}: {events:?}"
            );
            self.wake.wait_for(&mut events, Duration::from_millis(50));
        }
        events.clone()
    }
}

#[test]
fn a_session_reports_the_latest_query_and_completes() {
    let dir = tree();
    let recorder = Arc::new(Recorder::default());
    let session = Session::start(
        vec![dir.path().to_path_buf()],
        FileSearchConfig::default(),
        recorder.clone(),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(recorder.events.lock().is_empty(), "nothing before a query");
    session.update_query("m");
    session.update_query("ma");
    session.update_query("mai");
    let events = recorder.wait_completed("mai");
    let last_update = events.iter().rev().find(|e| !e.2).unwrap();
    assert_eq!(last_update.0, "mai");
    assert!(last_update.1 >= 3, "{events:?}");
    // Once a newer query is reported, no older one follows.
    let first_mai = events.iter().position(|e| e.0 == "mai").unwrap();
    assert!(
        events[first_mai..].iter().all(|e| e.0 == "mai"),
        "{events:?}"
    );

    session.update_query("");
    let events = recorder.wait_completed("");
    assert!(events.contains(&(String::new(), 0, false)), "{events:?}");
    drop(session);
}
