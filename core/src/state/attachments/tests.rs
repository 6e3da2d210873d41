use serde_json::json;
use weft_protocol::ThreadId;

use super::*;
use crate::state::tests::row;

const LIMITS: AttachmentLimits = AttachmentLimits {
    payload_bytes: 64,
    per_thread: 3,
};

async fn db_with(threads: &[usize]) -> (tempfile::TempDir, StateDb, Vec<ThreadId>) {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    let mut ids = Vec::new();
    for &n in threads {
        let row = row(n, 100 + n as i64);
        db.upsert(&row).await.unwrap();
        ids.push(row.id);
    }
    (home, db, ids)
}

async fn add(db: &StateDb, id: &ThreadId, key: &str, payload: Value, now: i64) -> Added {
    db.add_attachment(id, "pr", key, &payload, LIMITS, now)
        .await
        .unwrap()
}

#[tokio::test]
async fn an_identity_is_added_once_and_keeps_its_first_payload() {
    let (_home, db, ids) = db_with(&[1]).await;
    let Added::Created(first) = add(&db, &ids[0], "k", json!({"n": 1}), 10).await else {
        panic!("not created");
    };
    let again = add(&db, &ids[0], "k", json!({"n": 2}), 11).await;
    assert_eq!(again, Added::Existing(first.clone()));
    assert_eq!(first.payload, json!({"n": 1}));
    let removed = db.remove_attachment(&ids[0], "pr", "k").await.unwrap();
    assert_eq!(removed, Some(first));
    assert_eq!(
        db.remove_attachment(&ids[0], "pr", "k").await.unwrap(),
        None
    );
}

#[tokio::test]
async fn bounds_and_unknown_threads_are_refused() {
    let (_home, db, ids) = db_with(&[1]).await;
    let big = json!("x".repeat(64));
    let err = db
        .add_attachment(&ids[0], "pr", "k", &big, LIMITS, 1)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "attachment payload must not exceed 64 bytes"
    );
    for (ty, key, text) in [
        (" ", "k", "attachmentType must not be empty"),
        ("pr", "", "identityKey must not be empty"),
    ] {
        let err = db
            .add_attachment(&ids[0], ty, key, &json!(1), LIMITS, 1)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), text);
    }
    let long = "k".repeat(MAX_ATTACHMENT_IDENTITY_KEY_BYTES + 1);
    assert!(check_identity("pr", &long).is_err());
    let missing = ThreadId::from("nope");
    let err = db
        .add_attachment(&missing, "pr", "k", &json!(1), LIMITS, 1)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "thread not found: nope");
    assert!(matches!(
        db.remove_attachment(&missing, "pr", "k").await,
        Err(AttachmentError::ThreadNotFound(_))
    ));
    for key in ["a", "b", "c"] {
        add(&db, &ids[0], key, json!(key), 1).await;
    }
    let err = db
        .add_attachment(&ids[0], "pr", "d", &json!(1), LIMITS, 1)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "thread attachment identity count exceeds 3"
    );
    // An identity it holds is still found when the thread is full.
    assert!(matches!(
        add(&db, &ids[0], "a", json!(0), 2).await,
        Added::Existing(_)
    ));
}

#[tokio::test]
async fn pages_are_oldest_first_and_cursors_belong_to_their_query() {
    let (_home, db, ids) = db_with(&[1, 2]).await;
    for (key, now) in [("c", 5), ("a", 5), ("b", 7)] {
        add(&db, &ids[0], key, json!(key), now).await;
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = db
            .list_attachments(&ids[0], cursor.as_deref(), 2)
            .await
            .unwrap();
        seen.extend(
            page.data
                .iter()
                .map(|a| (a.created_at, a.identity_key.clone())),
        );
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[2], (7, "b".to_string()));
    let first = db.list_attachments(&ids[0], None, 1).await.unwrap();
    let cursor = first.next_cursor.unwrap();
    let err = db
        .list_attachments(&ids[1], Some(&cursor), 1)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid pagination cursor");
    assert!(db.list_attachments(&ids[0], Some("x"), 1).await.is_err());
    let none = db
        .list_attachments(&ThreadId::from("nope"), None, 5)
        .await
        .unwrap();
    assert_eq!(
        none,
        Page {
            data: vec![],
            next_cursor: None
        }
    );
}

#[tokio::test]
async fn owners_are_found_by_identity_with_the_archived_filter() {
    let (home, db, ids) = db_with(&[1, 2, 3]).await;
    for id in &ids[..2] {
        add(&db, id, "shared", json!(1), 1).await;
    }
    add(&db, &ids[2], "other", json!(1), 1).await;
    db.set_archived(&ids[1], true, &home.path().join("x.jsonl"))
        .await
        .unwrap();
    let all = db
        .attachment_owners("pr", "shared", None, None, 1)
        .await
        .unwrap();
    assert_eq!(all.data.len(), 1);
    let rest = db
        .attachment_owners("pr", "shared", None, all.next_cursor.as_deref(), 1)
        .await
        .unwrap();
    assert_eq!(rest.next_cursor, None);
    let owners: Vec<_> = all.data.iter().chain(&rest.data).cloned().collect();
    assert_eq!(
        owners,
        vec![
            ThreadAttachmentOwner {
                thread_id: ids[0].clone(),
                archived: false
            },
            ThreadAttachmentOwner {
                thread_id: ids[1].clone(),
                archived: true
            },
        ]
    );
    let live = db
        .attachment_owners("pr", "shared", Some(false), None, 10)
        .await
        .unwrap();
    assert_eq!(live.data, owners[..1]);
    let archived = db
        .attachment_owners("pr", "shared", Some(true), None, 10)
        .await
        .unwrap();
    assert_eq!(archived.data, owners[1..]);
    let err = db
        .attachment_owners("pr", "shared", Some(true), all.next_cursor.as_deref(), 10)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid pagination cursor");
}

#[tokio::test]
async fn attachments_go_with_their_thread() {
    let (_home, db, ids) = db_with(&[1, 2]).await;
    add(&db, &ids[0], "k", json!(1), 1).await;
    add(&db, &ids[1], "k", json!(1), 1).await;
    add(&db, &ids[1], "j", json!(1), 1).await;
    assert!(db.delete(&ids[0]).await.unwrap());
    let owners = db
        .attachment_owners("pr", "k", None, None, 10)
        .await
        .unwrap();
    assert_eq!(owners.data.len(), 1);
    assert_eq!(delete_for_thread(&db, &ids[1]).await.unwrap(), 2);
    let left = db.list_attachments(&ids[1], None, 10).await.unwrap();
    assert!(left.data.is_empty());
    assert_eq!(page_size(None), 25);
    assert_eq!(page_size(Some(0)), 1);
    assert_eq!(page_size(Some(1000)), 100);
}

#[tokio::test]
async fn a_fork_gets_copies_with_new_ids() {
    let (_home, db, ids) = db_with(&[1, 2]).await;
    let Added::Created(first) = add(&db, &ids[0], "k", json!({"n": 1}), 1).await else {
        panic!("not created");
    };
    add(&db, &ids[0], "j", json!(2), 2).await;
    assert_eq!(copy_to_fork(&db, &ids[0], &ids[1], 9).await.unwrap(), 2);
    let copied = db.list_attachments(&ids[1], None, 10).await.unwrap().data;
    assert_eq!(copied.len(), 2);
    assert_eq!(copied[0].payload, first.payload);
    assert_ne!(copied[0].id, first.id);
    assert_eq!(copied[0].created_at, 9);
    let unstored = ThreadId::from("ephemeral");
    assert_eq!(copy_to_fork(&db, &ids[0], &unstored, 9).await.unwrap(), 0);
}
