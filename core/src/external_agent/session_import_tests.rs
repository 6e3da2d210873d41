use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    homes: Homes,
    repo: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let user_home = dir.path().join("home");
    let weft_home = dir.path().join("weft");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&weft_home).unwrap();
    Fixture {
        homes: Homes {
            config_file: weft_home.join("config.toml"),
            weft_home,
            user_home: Some(user_home),
        },
        repo,
        _dir: dir,
    }
}

fn session(fx: &Fixture, name: &str, records: &[Value], age: Duration) -> PathBuf {
    let dir = fx
        .homes
        .claude_home()
        .unwrap()
        .join("projects")
        .join("-repo");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
    path
}

fn talk(cwd: &Path, prompt: &str) -> Vec<Value> {
    vec![
        json!({"type": "user", "cwd": cwd, "timestamp": "2024-01-02T03:04:05Z",
            "message": {"content": prompt}}),
        json!({"type": "assistant", "cwd": cwd, "timestamp": "2024-01-02T03:05:00Z",
            "message": {"content": [{"type": "text", "text": "answer"}]}}),
    ]
}

fn bounds(max_sessions: Option<u32>, max_age_days: Option<u32>) -> SessionBounds {
    SessionBounds::new(max_sessions, max_age_days, &Limits::default())
}

fn now() -> i64 {
    crate::time::now_secs()
}

#[test]
fn bounds_default_to_the_reference_and_are_capped_by_the_limits() {
    let limits = Limits {
        max_external_agent_sessions: 10,
        ..Limits::default()
    };
    let b = SessionBounds::new(None, None, &Limits::default());
    assert_eq!((b.max_sessions, b.max_age_days), (50, 30));
    assert_eq!(
        SessionBounds::new(Some(200), Some(2), &limits).max_sessions,
        10
    );
    assert_eq!(
        SessionBounds::new(Some(3), Some(2), &limits).max_age_days,
        2
    );
}

#[test]
fn recent_sessions_are_listed_newest_first_within_count_and_age() {
    let fx = fixture();
    let day = Duration::from_secs(86_400);
    let old = session(&fx, "old.jsonl", &talk(&fx.repo, "old one"), day * 10);
    let new = session(&fx, "new.jsonl", &talk(&fx.repo, "new one"), day);
    session(&fx, "ancient.jsonl", &talk(&fx.repo, "ancient"), day * 40);
    session(&fx, "notes.txt", &talk(&fx.repo, "not a session"), day);
    let gone = fx.repo.join("gone");
    session(&fx, "gone.jsonl", &talk(&gone, "cwd gone"), day * 2);
    session(
        &fx,
        "no-time.jsonl",
        &[json!({"type": "user", "cwd": fx.repo, "message": {"content": "x"}})],
        day * 3,
    );
    let listed = detect_sessions(&fx.homes, bounds(None, None), now());
    let shown_path = |p: &Path| p.display().to_string();
    assert_eq!(
        listed,
        vec![
            SessionMigration {
                path: shown_path(&new),
                cwd: shown_path(&fx.repo),
                title: Some("new one".into())
            },
            SessionMigration {
                path: shown_path(&old),
                cwd: shown_path(&fx.repo),
                title: Some("old one".into())
            },
        ]
    );
    // As the reference: the newest files are picked first, then those not to offer dropped.
    let one = detect_sessions(&fx.homes, bounds(Some(1), None), now());
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].path, shown_path(&new));
    assert_eq!(
        detect_sessions(&fx.homes, bounds(None, Some(5)), now()).len(),
        1
    );
    assert!(detect_sessions(&fx.homes, bounds(None, Some(0)), now()).is_empty());
    assert!(detect_sessions(&fx.homes, bounds(Some(0), None), now()).is_empty());
    let tiny = SessionBounds {
        max_bytes: 10,
        ..bounds(None, None)
    };
    assert!(detect_sessions(&fx.homes, tiny, now()).is_empty());
}

#[test]
fn an_imported_session_is_offered_again_only_once_it_changes() {
    let fx = fixture();
    let path = session(
        &fx,
        "s.jsonl",
        &talk(&fx.repo, "hello"),
        Duration::from_secs(60),
    );
    let detected = detect_sessions(&fx.homes, bounds(None, None), now());
    assert_eq!(detected.len(), 1);
    let Requested::Import(pending) = prepare(&fx.homes, &detected[0], &detected, 1 << 20) else {
        panic!("expected an import");
    };
    assert_eq!(pending.source, std::fs::canonicalize(&path).unwrap());
    record_import(&fx.homes, ledger_record(&pending, "thread-1")).unwrap();
    assert!(detect_sessions(&fx.homes, bounds(None, None), now()).is_empty());
    assert_eq!(
        prepare(&fx.homes, &detected[0], &[], 1 << 20),
        Requested::AlreadyImported
    );
    let mut records = talk(&fx.repo, "hello");
    records.push(
        json!({"type": "user", "cwd": fx.repo, "timestamp": "2024-01-02T04:00:00Z",
        "message": {"content": "more"}}),
    );
    session(&fx, "s.jsonl", &records, Duration::from_secs(1));
    assert_eq!(
        detect_sessions(&fx.homes, bounds(None, None), now()).len(),
        1
    );
}

#[test]
fn a_session_detect_does_not_offer_is_not_imported() {
    let fx = fixture();
    let stray = SessionMigration {
        path: fx.repo.join("elsewhere.jsonl").display().to_string(),
        cwd: fx.repo.display().to_string(),
        title: None,
    };
    assert_eq!(
        prepare(&fx.homes, &stray, &[], 1 << 20),
        Requested::NotDetected
    );
    let failure = not_detected(&stray.path);
    assert_eq!(failure.failure_stage, "session_missing");
    assert_eq!(
        failure.sub_error_type.as_deref(),
        Some("session_not_detected")
    );
    assert_eq!(
        failure.message,
        format!(
            "external agent session was not detected for import: {}",
            stray.path
        )
    );
}

#[test]
fn a_session_becomes_turns_of_user_prompts_ending_with_the_marker() {
    let fx = fixture();
    let message = |role, text: &str, timestamp| super::super::sessions::Message {
        role,
        text: text.into(),
        timestamp,
    };
    let session = Session {
        cwd: Some(fx.repo.clone()),
        title: Some("t".into()),
        messages: vec![
            message(Role::Assistant, "before any prompt", Some(5)),
            message(Role::User, "first", Some(10)),
            message(Role::Assistant, "a1", Some(12)),
            message(Role::Assistant, "a2", None),
            message(Role::User, "second", Some(20)),
        ],
        sha256: String::new(),
    };
    let thread = imported_thread(&session).unwrap();
    assert_eq!(thread.created_at, 10);
    assert_eq!(thread.name.as_deref(), Some("t"));
    assert_eq!(
        thread.turns,
        vec![
            ImportedTurn {
                user: "first".into(),
                agent: vec!["a1".into(), "a2".into()],
                started_at: 10,
                completed_at: 12,
            },
            ImportedTurn {
                user: "second".into(),
                agent: vec![IMPORTED_MARKER.into()],
                started_at: 20,
                completed_at: 20,
            },
        ]
    );
    let no_prompt = Session {
        messages: vec![message(Role::Assistant, "only", Some(1))],
        ..session.clone()
    };
    assert_eq!(imported_thread(&no_prompt), None);
    let no_cwd = Session {
        cwd: Some(fx.repo.join("missing")),
        ..session
    };
    assert_eq!(imported_thread(&no_cwd), None);
}

#[test]
fn a_ledger_that_does_not_parse_is_not_rewritten() {
    let fx = fixture();
    let ledger = fx.homes.weft_home.join(LEDGER_FILE);
    std::fs::write(&ledger, "{bad").unwrap();
    let record = LedgerRecord {
        source_path: fx.repo.join("s.jsonl"),
        content_sha256: "x".into(),
        imported_thread_id: "t".into(),
        imported_at: 1,
        source_modified_at: None,
        title: None,
    };
    let err = record_import(&fx.homes, record.clone()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), "{bad");
    std::fs::remove_file(&ledger).unwrap();
    record_import(&fx.homes, record.clone()).unwrap();
    record_import(
        &fx.homes,
        LedgerRecord {
            imported_thread_id: "u".into(),
            ..record
        },
    )
    .unwrap();
    let kept = Ledger::load(&fx.homes).records;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].imported_thread_id, "u");
}
