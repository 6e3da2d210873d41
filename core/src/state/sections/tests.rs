use super::*;
use crate::state::ThreadRow;

fn row(id: &ThreadId) -> ThreadRow {
    let thread = weft_protocol::Thread {
        cwd: "/w".into(),
        model_provider: "p".into(),
        ..crate::wire_thread::base(id.clone(), weft_protocol::SessionSource::Vscode, 1)
    };
    ThreadRow::from_thread(&thread, std::path::Path::new("/r.jsonl"), false)
}

#[tokio::test]
async fn sections_order_moves_and_deletes() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    let (a, b, c) = (
        crate::time::new_thread_id(),
        crate::time::new_thread_id(),
        crate::time::new_thread_id(),
    );
    for id in [&a, &b, &c] {
        db.upsert(&row(id)).await.unwrap();
    }
    let (listed, next) = db.list_sections(None, 10).await.unwrap();
    assert_eq!(
        (listed.len(), listed[0].id.as_str(), next),
        (1, PINNED_SECTION_ID, None)
    );
    let work = db.create_section("Work", None, 10).await.unwrap();
    assert!(matches!(
        db.create_section("x", None, 2).await,
        Err(SectionError::TooMany(2))
    ));
    db.move_to_section(&a, Some(&work.id), None, 5)
        .await
        .unwrap();
    db.move_to_section(&b, Some(&work.id), None, 6)
        .await
        .unwrap();
    db.move_to_section(&c, Some(&work.id), Some(&a), 7)
        .await
        .unwrap();
    // Within its section a thread keeps the time it entered.
    db.move_to_section(&a, Some(&work.id), None, 9)
        .await
        .unwrap();
    let order: Vec<String> =
        sqlx::query_scalar("SELECT thread_id FROM thread_section_members ORDER BY position")
            .fetch_all(db.pool().await.unwrap())
            .await
            .unwrap();
    assert_eq!(order, [c.to_string(), b.to_string(), a.to_string()]);
    let (of, _) = db.decorations(std::slice::from_ref(&a)).await.unwrap();
    assert_eq!(of[a.as_str()].1, 5);
    assert!(matches!(
        db.move_to_section(&a, Some(&work.id), Some(&crate::time::new_thread_id()), 1)
            .await,
        Err(SectionError::BeforeNotInSection { .. })
    ));
    assert!(matches!(
        db.move_to_section(&crate::time::new_thread_id(), None, None, 1)
            .await,
        Err(SectionError::ThreadNotFound(_))
    ));
    let (page, next) = db.list_sections(None, 1).await.unwrap();
    assert_eq!(next.as_deref(), Some(PINNED_SECTION_ID));
    let (rest, _) = db.list_sections(next.as_deref(), 5).await.unwrap();
    assert_eq!((page.len(), rest[0].id.clone()), (1, work.id.clone()));
    db.delete_section(&work.id).await.unwrap();
    assert!(
        db.decorations(&[a.clone(), b.clone()])
            .await
            .unwrap()
            .0
            .is_empty()
    );
    assert!(matches!(
        db.delete_section(&work.id).await,
        Err(SectionError::NotFound(_))
    ));
    db.set_git_info(
        &a,
        &GitInfo {
            branch: Some("main".into()),
            ..GitInfo::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        db.decorations(std::slice::from_ref(&a))
            .await
            .unwrap()
            .1
            .len(),
        1
    );
    assert_eq!(
        db.delete_threads(std::slice::from_ref(&a)).await.unwrap(),
        vec![a.clone()]
    );
    assert!(
        db.decorations(std::slice::from_ref(&a))
            .await
            .unwrap()
            .1
            .is_empty()
    );
    assert!(db.get(&a).await.unwrap().is_none());
}

#[tokio::test]
async fn concurrent_moves_all_land_in_order() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    let ids: Vec<ThreadId> = (0..12).map(|_| crate::time::new_thread_id()).collect();
    for id in &ids {
        db.upsert(&row(id)).await.unwrap();
    }
    let section = db.create_section("S", None, 10).await.unwrap();
    let moves = ids
        .iter()
        .map(|id| db.move_to_section(id, Some(&section.id), None, 1));
    for result in futures::future::join_all(moves).await {
        result.unwrap();
    }
    let positions: Vec<i64> =
        sqlx::query_scalar("SELECT position FROM thread_section_members ORDER BY position")
            .fetch_all(db.pool().await.unwrap())
            .await
            .unwrap();
    assert_eq!(positions, (0..12).collect::<Vec<i64>>());
}
