use std::borrow::Cow;
use std::path::PathBuf;

use weft_protocol::{SessionSource, SortDirection, SubAgentSource};

use super::*;
use crate::state::tests::{open_upgraded, raw_pool};
use crate::state::{GoalUpdate, Lineage, ListQuery, ListSortKey, ThreadRow};

fn row(id: &str, created_at: i64, source: SessionSource) -> ThreadRow {
    ThreadRow {
        id: ThreadId::from(id),
        rollout_path: PathBuf::from(format!("/home/sessions/{id}.jsonl")),
        source,
        preview: String::new(),
        ..crate::state::tests::row(0, created_at)
    }
}

fn spawned_by(parent: &str) -> SessionSource {
    SessionSource::SubAgent(SubAgentSource::ThreadSpawn {
        parent_thread_id: ThreadId::from(parent),
        depth: 1,
        agent_path: None,
        agent_nickname: None,
        agent_role: None,
    })
}

fn query() -> ListQuery {
    ListQuery {
        source_kinds: Some(vec!["vscode".into(), "subAgent".into()]),
        ..ListQuery::default()
    }
}

async fn ids(db: &StateDb, query: ListQuery) -> Vec<String> {
    let page = db.list(&query).await.unwrap();
    page.rows.into_iter().map(|r| r.id.into_string()).collect()
}

/// A page's read states in one statement: each thread's own, the initial one when nobody
/// marked it, keyed by id.
#[tokio::test]
async fn read_states_of_a_page() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    let ids: Vec<ThreadId> = ["t1", "t2", "t3"].into_iter().map(ThreadId::from).collect();
    let turn = TurnId::from("u1");
    let unread = db.mark_turn_unread(&ids[0], &turn).await.unwrap().unwrap();
    let start = db.read_state(&ids[2]).await.unwrap();
    let start = db
        .update_read_state(&ids[2], ThreadReadStateOperation::Unread, &start.revision)
        .await
        .unwrap();
    let states = db.read_states(&ids).await.unwrap();
    let expected: BTreeMap<String, ThreadReadState> = [
        ("t1".to_string(), unread),
        ("t2".to_string(), ThreadReadState::initial(&ids[1])),
        ("t3".to_string(), start),
    ]
    .into();
    assert_eq!(states, expected);
    assert!(db.read_states(&[]).await.unwrap().is_empty());
}

#[tokio::test]
async fn read_state_revisions_guard_updates() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    let id = ThreadId::from("t1");
    let initial = db.read_state(&id).await.unwrap();
    assert_eq!(initial, ThreadReadState::initial(&id));

    let turn = TurnId::from("u1");
    let unread = db.mark_turn_unread(&id, &turn).await.unwrap().unwrap();
    assert_eq!(
        unread.first_unread,
        Some(ThreadUnreadPosition::Turn {
            turn_id: turn.clone()
        })
    );
    assert_ne!(unread.revision, initial.revision);
    // Already unread: the first unread turn stays, nothing changes.
    assert!(
        db.mark_turn_unread(&id, &"u2".into())
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(db.read_state(&id).await.unwrap(), unread);

    // A stale revision is refused with the current state.
    match db
        .update_read_state(&id, ThreadReadStateOperation::Read, &initial.revision)
        .await
    {
        Err(ReadStateError::Conflict(current)) => assert_eq!(current, unread),
        other => panic!("expected a conflict, got {other:?}"),
    }
    let read = db
        .update_read_state(&id, ThreadReadStateOperation::Read, &unread.revision)
        .await
        .unwrap();
    assert_eq!(read.first_unread, None);
    assert_eq!(db.read_state(&id).await.unwrap(), read);
    let again = db
        .update_read_state(&id, ThreadReadStateOperation::Unread, &read.revision)
        .await
        .unwrap();
    assert_eq!(again.first_unread, Some(ThreadUnreadPosition::ThreadStart));
    assert_ne!(again.revision, read.revision);
    // The initial revision of a never-marked thread is accepted.
    let other = ThreadId::from("t2");
    let marked = db
        .update_read_state(
            &other,
            ThreadReadStateOperation::Unread,
            &ThreadReadState::initial(&other).revision,
        )
        .await
        .unwrap();
    assert_eq!(marked.first_unread, Some(ThreadUnreadPosition::ThreadStart));
}

#[tokio::test]
async fn deleting_a_thread_forgets_its_state() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    db.upsert(&row("t1", 10, SessionSource::Vscode))
        .await
        .unwrap();
    let id = ThreadId::from("t1");
    let goal = GoalUpdate {
        objective: Some("Ship it".into()),
        ..GoalUpdate::default()
    };
    db.set_goal(&id, goal, 1).await.unwrap();
    db.mark_turn_unread(&id, &"u".into()).await.unwrap();
    assert!(db.delete(&id).await.unwrap());
    assert_eq!(db.goal(&id).await.unwrap(), None);
    assert_eq!(
        db.read_state(&id).await.unwrap(),
        ThreadReadState::initial(&id)
    );
}

#[tokio::test]
async fn id_lineage_and_nothing_filters() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    for row in [
        row("root", 1, SessionSource::Vscode),
        row("child", 2, spawned_by("root")),
        row("grandchild", 3, spawned_by("child")),
        row("other", 4, SessionSource::Vscode),
    ] {
        db.upsert(&row).await.unwrap();
    }

    assert_eq!(
        ids(&db, query()).await,
        ["other", "grandchild", "child", "root"]
    );
    let only = ListQuery {
        included_ids: Some(vec!["root".into(), "other".into(), "missing".into()]),
        ..query()
    };
    assert_eq!(ids(&db, only).await, ["other", "root"]);
    let none = ListQuery {
        included_ids: Some(Vec::new()),
        ..query()
    };
    assert!(ids(&db, none).await.is_empty());
    let without = ListQuery {
        excluded_ids: vec!["other".into(), "child".into()],
        ..query()
    };
    assert_eq!(ids(&db, without).await, ["grandchild", "root"]);
    let parent = ListQuery {
        lineage: Some(Lineage::Parent("root".into())),
        ..query()
    };
    assert_eq!(ids(&db, parent).await, ["child"]);
    let ancestor = ListQuery {
        lineage: Some(Lineage::Ancestor("root".into())),
        ..query()
    };
    assert_eq!(ids(&db, ancestor).await, ["grandchild", "child"]);
    let nothing = ListQuery {
        lineage: Some(Lineage::Nothing),
        ..query()
    };
    assert!(ids(&db, nothing).await.is_empty());
}

#[tokio::test]
async fn backwards_cursor_pages_back_including_the_first_row() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    for (n, recency) in [(1, 10), (2, 20), (3, 20), (4, 30), (5, 40)] {
        let mut r = row(&format!("t{n}"), n, SessionSource::Vscode);
        r.recency_at = recency;
        db.upsert(&r).await.unwrap();
    }
    let first = db
        .list(&ListQuery {
            limit: 2,
            sort_key: ListSortKey::RecencyAt,
            ..query()
        })
        .await
        .unwrap();
    assert_eq!(ids_of(&first.rows), ["t5", "t4"]);
    assert_eq!(first.backwards_cursor.as_deref(), Some("39"));
    let second = db
        .list(&ListQuery {
            limit: 2,
            sort_key: ListSortKey::RecencyAt,
            cursor: first.next_cursor.clone(),
            ..query()
        })
        .await
        .unwrap();
    assert_eq!(ids_of(&second.rows), ["t3", "t2"]);
    // Back from the second page, ascending: its first row's value and everything newer.
    let back = db
        .list(&ListQuery {
            sort_key: ListSortKey::RecencyAt,
            direction: SortDirection::Asc,
            cursor: second.backwards_cursor.clone(),
            ..query()
        })
        .await
        .unwrap();
    assert_eq!(ids_of(&back.rows), ["t2", "t3", "t4", "t5"]);
    let empty = db
        .list(&ListQuery {
            lineage: Some(Lineage::Nothing),
            ..query()
        })
        .await
        .unwrap();
    assert_eq!((empty.next_cursor, empty.backwards_cursor), (None, None));
}

fn ids_of(rows: &[ThreadRow]) -> Vec<&str> {
    rows.iter().map(|r| r.id.as_str()).collect()
}

/// A DB made by the first migration only is upgraded in place when opened: rows keep their
/// data, get `recency_at = updated_at` and their spawn parent.
#[tokio::test]
async fn an_old_database_upgrades_in_place() {
    let home = tempfile::tempdir().unwrap();
    let pool = raw_pool(home.path()).await;
    let mut migrator = sqlx::migrate!("./migrations");
    migrator.migrations = Cow::Owned(migrator.migrations[..1].to_vec());
    migrator.run(&pool).await.unwrap();
    let source = serde_json::to_string(&spawned_by("root")).unwrap();
    sqlx::query(
        "INSERT INTO threads (id, rollout_path, cwd, model_provider, source, source_json, \
         cli_version, created_at, updated_at) VALUES \
         ('child', '/r.jsonl', '/w', 'openai', 'subAgentThreadSpawn', $1, '0.1.0', 5, 9)",
    )
    .bind(source)
    .execute(&pool)
    .await
    .unwrap();
    let db = open_upgraded(pool, home.path()).await;
    let child = db.get(&ThreadId::from("child")).await.unwrap().unwrap();
    assert_eq!(
        (child.created_at, child.updated_at, child.recency_at),
        (5, 9, 9)
    );
    let parent = ListQuery {
        lineage: Some(Lineage::Parent("root".into())),
        ..query()
    };
    assert_eq!(ids(&db, parent).await, ["child"]);
    assert_eq!(
        db.read_state(&child.id).await.unwrap(),
        ThreadReadState::initial(&child.id)
    );
}
