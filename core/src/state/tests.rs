use std::collections::HashSet;
use std::path::{Path, PathBuf};

use weft_protocol::{
    ReasoningEffort, SessionSource, SortDirection, SubAgentSource, ThreadId, ThreadStatus, TurnId,
    TurnStatus,
};

use super::list::{escape_like, expand_source_kinds};
use super::*;
use crate::rollout::tests::user_item;
use crate::rollout::{RolloutRecord, RolloutWriter, SessionMeta, archive};

pub(super) fn row(n: usize, created_at: i64) -> ThreadRow {
    ThreadRow {
        id: ThreadId::from(format!("thread-{n:04}")),
        rollout_path: PathBuf::from(format!("/home/sessions/t{n}.jsonl")),
        cwd: "/work/a".into(),
        model: Some("gpt-test".into()),
        model_provider: "openai".into(),
        reasoning_effort: Some(ReasoningEffort::new("low")),
        source: SessionSource::Vscode,
        originator: Some("client".into()),
        cli_version: "0.1.0".into(),
        thread_source: None,
        preview: format!("preview {n}"),
        name: None,
        created_at,
        updated_at: created_at,
        archived: false,
        forked_from_id: None,
        recency_at: created_at,
        agent_closed: false,
    }
}

async fn open(home: &Path) -> StateDb {
    StateDb::open(home).await.unwrap()
}

fn ids(rows: &[ThreadRow]) -> Vec<&str> {
    rows.iter().map(|r| r.id.as_str()).collect()
}

async fn list_ids(db: &StateDb, query: ListQuery) -> Vec<String> {
    let (rows, next) = db.list(&query).await.unwrap().into_pair();
    assert_eq!(next, None, "fits in one page");
    rows.into_iter().map(|r| r.id.into_string()).collect()
}

#[tokio::test]
async fn upsert_get_and_updates() {
    let home = tempfile::tempdir().unwrap();
    let db = open(home.path()).await;
    assert!(db.path().ends_with(STATE_DB_FILE));
    let mut thread = row(1, 100);
    thread.source = SessionSource::Custom("bot".into());
    thread.forked_from_id = Some(ThreadId::from("thread-0000"));
    db.upsert(&thread).await.unwrap();
    assert_eq!(db.get(&thread.id).await.unwrap(), Some(thread.clone()));
    assert_eq!(db.get(&ThreadId::from("nope")).await.unwrap(), None);

    assert!(db.set_name(&thread.id, Some("named")).await.unwrap());
    assert!(
        !db.set_name(&ThreadId::from("nope"), Some("x"))
            .await
            .unwrap()
    );
    assert!(db.touch(&thread.id, 150, Some("hello")).await.unwrap());
    assert!(
        db.touch(&thread.id, 120, None).await.unwrap(),
        "never backwards"
    );
    let archived_path = PathBuf::from("/home/archived_sessions/t1.jsonl");
    assert!(
        db.set_archived(&thread.id, true, &archived_path)
            .await
            .unwrap()
    );
    let got = db.get(&thread.id).await.unwrap().unwrap();
    assert_eq!(got.name.as_deref(), Some("named"));
    assert_eq!(got.preview, "hello");
    assert_eq!(got.updated_at, 150);
    assert!(got.archived);
    assert_eq!(got.rollout_path, archived_path);

    // Upsert replaces everything.
    db.upsert(&thread).await.unwrap();
    assert_eq!(db.get(&thread.id).await.unwrap(), Some(thread.clone()));

    let wire = thread.to_thread(ThreadStatus::NotLoaded);
    assert_eq!(wire.source, SessionSource::Custom("bot".into()));
    assert_eq!(wire.path.as_deref(), Some("/home/sessions/t1.jsonl"));
    assert_eq!(wire.session_id, "thread-0001");
    assert_eq!(
        ThreadRow::from_thread(&wire, &thread.rollout_path, false),
        thread
    );

    assert!(db.delete(&thread.id).await.unwrap());
    assert!(!db.delete(&thread.id).await.unwrap());
    db.close().await;
}

#[tokio::test]
async fn list_filters() {
    let home = tempfile::tempdir().unwrap();
    let db = open(home.path()).await;
    let mut rows: Vec<ThreadRow> = (0..8).map(|n| row(n, 1000 + n as i64)).collect();
    rows[1].model_provider = "mock".into();
    rows[2].source = SessionSource::Cli;
    rows[3].source = SessionSource::Exec;
    rows[4].source = SessionSource::SubAgent(SubAgentSource::Review);
    rows[5].archived = true;
    rows[6].cwd = "/work/b".into();
    rows[7].name = Some("Fix 100%_done bug".into());
    rows[0].preview = "Refactor the parser".into();
    for r in &rows {
        db.upsert(r).await.unwrap();
    }
    let q = ListQuery::default;

    // Default: non-archived, interactive (cli + vscode), newest first.
    assert_eq!(
        list_ids(&db, q()).await,
        [
            "thread-0007",
            "thread-0006",
            "thread-0002",
            "thread-0001",
            "thread-0000"
        ]
    );
    // Each filter alone: (case, query, expected ids).
    let single: [(&str, ListQuery, &[&str]); 6] = [
        (
            "exec + subAgent",
            ListQuery {
                source_kinds: Some(vec!["exec".into(), "subAgent".into()]),
                ..q()
            },
            &["thread-0004", "thread-0003"],
        ),
        (
            "subAgentReview",
            ListQuery {
                source_kinds: Some(vec!["subAgentReview".into()]),
                ..q()
            },
            &["thread-0004"],
        ),
        (
            "provider mock",
            ListQuery {
                model_providers: Some(vec!["mock".into()]),
                ..q()
            },
            &["thread-0001"],
        ),
        (
            "archived",
            ListQuery {
                archived: true,
                ..q()
            },
            &["thread-0005"],
        ),
        (
            "cwd",
            ListQuery {
                cwd: Some(vec!["/work/b".into(), "/elsewhere".into()]),
                ..q()
            },
            &["thread-0006"],
        ),
        (
            "filters combine",
            ListQuery {
                source_kinds: Some(vec!["cli".into(), "vscode".into(), "exec".into()]),
                model_providers: Some(vec!["openai".into()]),
                cwd: Some(vec!["/work/a".into()]),
                search_term: Some("preview".into()),
                ..q()
            },
            &["thread-0007", "thread-0003", "thread-0002"],
        ),
    ];
    for (case, query, expected) in single {
        assert_eq!(list_ids(&db, query).await, expected, "{case}");
    }
    // An empty filter list does not filter.
    let empty = [
        (
            "empty = interactive",
            ListQuery {
                source_kinds: Some(vec![]),
                ..q()
            },
        ),
        (
            "empty = all providers",
            ListQuery {
                model_providers: Some(vec![]),
                ..q()
            },
        ),
    ];
    for (case, query) in empty {
        assert_eq!(list_ids(&db, query).await.len(), 5, "{case}");
    }
    // Search: name or preview, case-sensitive, LIKE wildcards escaped.
    let search = |term: &str| ListQuery {
        search_term: Some(term.into()),
        ..q()
    };
    assert_eq!(list_ids(&db, search("parser")).await, ["thread-0000"]);
    assert!(list_ids(&db, search("PARSER")).await.is_empty());
    assert_eq!(list_ids(&db, search("100%_d")).await, ["thread-0007"]);
    assert!(list_ids(&db, search("1_0")).await.is_empty());
    assert!(list_ids(&db, search("%")).await.len() == 1);
    assert_eq!(list_ids(&db, search("preview 2")).await, ["thread-0002"]);
    db.close().await;
}

#[tokio::test]
async fn pagination_is_stable_with_no_duplicates_or_gaps() {
    let home = tempfile::tempdir().unwrap();
    let db = open(home.path()).await;
    // 250 rows, three per second (ties on the sort value), updated in reverse order.
    let mut all = Vec::new();
    for n in 0..250 {
        let mut r = row(n, 10_000 + (n / 3) as i64);
        r.updated_at = 50_000 - (n / 4) as i64;
        r.recency_at = 20_000 + (n % 9) as i64;
        db.upsert(&r).await.unwrap();
        all.push(r);
    }
    // Every sort key, each both ways.
    let keys = [
        ListSortKey::CreatedAt,
        ListSortKey::UpdatedAt,
        ListSortKey::RecencyAt,
    ];
    let orders = keys.into_iter().flat_map(|key| {
        [SortDirection::Desc, SortDirection::Asc].map(|direction| (key, direction))
    });
    for (sort_key, direction) in orders {
        let key = |r: &ThreadRow| {
            let value = match sort_key {
                ListSortKey::CreatedAt => r.created_at,
                ListSortKey::UpdatedAt => r.updated_at,
                ListSortKey::RecencyAt => r.recency_at,
                // Not among the keys walked here (sections have their own test).
                ListSortKey::SectionPosition => unreachable!(),
            };
            (value, r.id.to_string())
        };
        let mut expected = all.clone();
        expected.sort_by_key(key);
        if direction == SortDirection::Desc {
            expected.reverse();
        }
        let mut seen = Vec::new();
        let mut cursor = None;
        let mut pages = 0;
        loop {
            let (page, next) = db
                .list(&ListQuery {
                    limit: 7,
                    cursor: cursor.clone(),
                    sort_key,
                    direction,
                    ..ListQuery::default()
                })
                .await
                .unwrap()
                .into_pair();
            pages += 1;
            assert!(page.len() <= 7);
            seen.extend(page);
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(pages, 36, "{sort_key:?} {direction:?}");
        assert_eq!(ids(&seen), ids(&expected), "{sort_key:?} {direction:?}");
    }

    // Rows inserted between pages (newer ones) neither repeat nor shift later pages.
    let (first, next) = db
        .list(&ListQuery {
            limit: 100,
            ..ListQuery::default()
        })
        .await
        .unwrap()
        .into_pair();
    for n in 250..260 {
        db.upsert(&row(n, 99_999)).await.unwrap();
    }
    let mut seen: Vec<String> = first.iter().map(|r| r.id.to_string()).collect();
    let mut cursor = next;
    while let Some(c) = cursor {
        let (page, next) = db
            .list(&ListQuery {
                limit: 100,
                cursor: Some(c),
                ..ListQuery::default()
            })
            .await
            .unwrap()
            .into_pair();
        seen.extend(page.iter().map(|r| r.id.to_string()));
        cursor = next;
    }
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(seen.len(), 250);
    assert_eq!(unique.len(), 250);

    // Limits: 0 = default, huge = capped.
    let (page, _) = db.list(&ListQuery::default()).await.unwrap().into_pair();
    assert_eq!(page.len(), DEFAULT_LIST_LIMIT as usize);
    let (page, next) = db
        .list(&ListQuery {
            limit: u32::MAX,
            ..ListQuery::default()
        })
        .await
        .unwrap()
        .into_pair();
    assert_eq!((page.len(), next), (260, None));

    for bad in ["", "abc", "x:thread-1", "12:"] {
        let query = ListQuery {
            cursor: Some(bad.into()),
            ..ListQuery::default()
        };
        let err = db.list(&query).await.unwrap_err();
        assert!(matches!(err, StateError::InvalidCursor(_)), "{bad}: {err}");
    }
    db.close().await;
}

fn meta(id: &ThreadId, created_at: i64, provider: &str) -> SessionMeta {
    SessionMeta {
        cwd: "/work/a".into(),
        model_provider: provider.into(),
        originator: None,
        developer_instructions: None,
        reasoning_effort: None,
        ..crate::rollout::tests::meta(id, created_at)
    }
}

/// A rollout with one user message; returns its path.
pub(super) async fn write_rollout(home: &Path, n: i64, name: Option<&str>) -> (ThreadId, PathBuf) {
    let id = ThreadId::from(format!("0190a0b0-0000-7000-8000-{n:012}"));
    let writer = RolloutWriter::create(home, meta(&id, 1_700_000_000 + n, "openai"))
        .await
        .unwrap();
    let turn = TurnId::from(format!("turn-{n}"));
    writer.append(RolloutRecord::ItemCompleted {
        turn_id: turn.clone(),
        item: user_item("u", &format!("hello {n}")),
    });
    writer.append(RolloutRecord::TurnEnded {
        turn_id: turn,
        status: TurnStatus::Completed,
        error: None,
        completed_at: 0,
        duration_ms: None,
    });
    if let Some(name) = name {
        writer.append(RolloutRecord::ThreadNameSet { name: name.into() });
    }
    let path = writer.path().to_path_buf();
    writer.close().await.unwrap();
    (id, path)
}

/// A bare connection to the state DB file under `home` (no migration run), to build a DB as an
/// older daemon left it.
pub(super) async fn raw_pool(home: &Path) -> sqlx::SqlitePool {
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(home.join(STATE_DB_FILE))
        .create_if_missing(true);
    sqlx::SqlitePool::connect_with(options).await.unwrap()
}

/// Closes the old daemon's connection and opens the DB as this daemon does (migrating it).
pub(super) async fn open_upgraded(old: sqlx::SqlitePool, home: &Path) -> StateDb {
    old.close().await;
    StateDb::open(home).await.unwrap()
}

pub(super) fn remove_db(home: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(home.join(format!("{STATE_DB_FILE}{suffix}")));
    }
}

#[tokio::test]
async fn rebuild_from_rollouts_after_the_db_is_deleted() {
    let home = tempfile::tempdir().unwrap();
    let (id1, _) = write_rollout(home.path(), 1, Some("first")).await;
    let (id2, path2) = write_rollout(home.path(), 2, None).await;
    let (id3, _) = write_rollout(home.path(), 3, None).await;
    let archived2 = archive(home.path(), &path2).unwrap();
    // A corrupt rollout and a stray file: skipped, never stop the scan.
    let corrupt = home
        .path()
        .join("sessions/2023/11/14/rollout-2023-11-14T22-13-20-0190a0b0-0000-7000-8000-999999999999.jsonl");
    std::fs::create_dir_all(corrupt.parent().unwrap()).unwrap();
    std::fs::write(&corrupt, "{ this is not json\n").unwrap();
    std::fs::write(home.path().join("sessions/README"), "x").unwrap();

    let (db, report) = StateDb::open_and_catch_up(home.path()).await.unwrap();
    let report = report.unwrap();
    assert_eq!(report.indexed, 3);
    assert_eq!(report.removed, 0);
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].0, corrupt);
    assert!(
        report.skipped[0].1.contains("no valid session header"),
        "{:?}",
        report.skipped
    );

    let (rows, _) = db.list(&ListQuery::default()).await.unwrap().into_pair();
    assert_eq!(ids(&rows), [id3.as_str(), id1.as_str()]);
    let first = db.get(&id1).await.unwrap().unwrap();
    assert_eq!(first.name.as_deref(), Some("first"));
    assert_eq!(first.preview, "hello 1");
    assert_eq!(first.created_at, 1_700_000_001);
    assert!(first.updated_at >= first.created_at);
    let second = db.get(&id2).await.unwrap().unwrap();
    assert!(second.archived);
    assert_eq!(second.rollout_path, archived2);
    db.close().await;
    drop(db);

    // Delete the DB: it is rebuilt with the same rows.
    remove_db(home.path());
    let (db, report) = StateDb::open_and_catch_up(home.path()).await.unwrap();
    assert_eq!(report.map(|r| r.indexed), Some(3));
    assert_eq!(db.get(&id1).await.unwrap(), Some(first));
    let (archived, _) = db
        .list(&ListQuery {
            archived: true,
            ..ListQuery::default()
        })
        .await
        .unwrap()
        .into_pair();
    assert_eq!(ids(&archived), [id2.as_str()]);

    // A row whose rollout is gone is dropped by the next rebuild.
    std::fs::remove_file(&archived2).unwrap();
    let report = db.rebuild_from_rollouts(home.path()).await.unwrap();
    assert_eq!((report.indexed, report.removed), (2, 1));
    assert_eq!(db.get(&id2).await.unwrap(), None);
    db.close().await;
}

#[test]
fn source_kinds() {
    assert_eq!(source_kind(&SessionSource::Vscode), "vscode");
    assert_eq!(source_kind(&SessionSource::Cli), "cli");
    assert_eq!(source_kind(&SessionSource::AppServer), "appServer");
    assert_eq!(source_kind(&SessionSource::Custom("x".into())), "unknown");
    assert_eq!(
        source_kind(&SessionSource::SubAgent(SubAgentSource::Other("g".into()))),
        "subAgentOther"
    );
    assert_eq!(
        expand_source_kinds(Some(&["subAgent".to_string(), "cli".to_string()])),
        [
            "cli",
            "subAgentCompact",
            "subAgentOther",
            "subAgentReview",
            "subAgentThreadSpawn"
        ]
    );
    assert_eq!(expand_source_kinds(None), INTERACTIVE_SOURCE_KINDS);
    assert_eq!(escape_like(r"a%b_c\d"), r"a\%b\_c\\d");
}

/// Issue 24 §7: the database's own text (here a parser message) is not in the error's text,
/// which is what a client is answered; the source keeps it for the log.
#[tokio::test]
async fn database_error_text_stays_out_of_the_message() {
    let home = tempfile::tempdir().unwrap();
    let db = open(home.path()).await;
    let raw = sqlx::query("SELECT * FROM threads_search WHERE threads_search MATCH '\"plain'")
        .fetch_all(db.pool().await.unwrap())
        .await
        .unwrap_err();
    let detail = raw.to_string();
    assert!(detail.contains("unterminated string"), "{detail}");
    let err = StateError::from(raw);
    let core = crate::thread::CoreError::from(err);
    let message = core.to_string();
    assert_eq!(
        message,
        "the thread index (state DB) failed; the daemon's log has the details"
    );
    let mut chain = Vec::new();
    let mut next = std::error::Error::source(&core);
    while let Some(source) = next {
        chain.push(source.to_string());
        next = source.source();
    }
    assert!(
        chain.iter().any(|s| s.contains("unterminated string")),
        "{chain:?}"
    );
    db.close().await;
}
