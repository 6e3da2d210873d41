//! Rollout files: the writer's lock, archiving, finding and listing, dated paths, ephemeral
//! threads.

use super::*;

#[tokio::test]
async fn a_second_writer_is_refused_while_the_first_holds_the_lock() {
    let home = tempfile::tempdir().unwrap();
    let (writer, _) = new_writer(home.path()).await;
    let path = writer.path().to_path_buf();

    let err = RolloutWriter::resume(&path).await.unwrap_err();
    assert!(matches!(err, RolloutError::Locked { .. }), "{err}");
    assert!(
        err.to_string().contains("locked by another writer"),
        "{err}"
    );
    let err = archive(home.path(), &path).unwrap_err();
    assert!(matches!(err, RolloutError::Locked { .. }), "{err}");
    // Reading is always allowed.
    read_rollout(&path).unwrap();

    // A clone shares the same writer; the lock goes with the last owner.
    let clone = writer.clone();
    clone.append(RolloutRecord::ThreadNameSet { name: "x".into() });
    writer.close().await.unwrap();
    assert!(matches!(
        clone.flush(false).await.unwrap_err(),
        RolloutError::Closed { .. }
    ));
    clone.append(RolloutRecord::ThreadNameSet {
        name: "dropped".into(),
    });
    let second = RolloutWriter::resume(&path).await.unwrap();
    second.close().await.unwrap();
    assert_eq!(read_rollout(&path).unwrap().name.as_deref(), Some("x"));
}

#[tokio::test]
async fn archive_and_unarchive_move_the_file() {
    let home = tempfile::tempdir().unwrap();
    let (path, id) = closed_rollout(home.path()).await;

    let archived = archive(home.path(), &path).unwrap();
    assert!(!path.exists() && archived.exists());
    assert_eq!(
        archived
            .strip_prefix(home.path().join(ARCHIVED_SESSIONS_DIR))
            .unwrap(),
        path.strip_prefix(home.path().join(SESSIONS_DIR)).unwrap()
    );
    let found = find_rollout(home.path(), &id).unwrap().unwrap();
    assert_eq!(
        found,
        FoundRollout {
            path: archived.clone(),
            archived: true
        }
    );
    assert!(matches!(
        archive(home.path(), &archived).unwrap_err(),
        RolloutError::NotUnder { .. }
    ));
    read_rollout(&archived).unwrap();

    let back = unarchive(home.path(), &archived).unwrap();
    assert_eq!(back, path);
    assert!(!archived.exists());
    let found = find_rollout(home.path(), &id).unwrap().unwrap();
    assert!(!found.archived);
    assert!(matches!(
        unarchive(home.path(), &back).unwrap_err(),
        RolloutError::NotUnder { .. }
    ));
    assert_eq!(find_rollout(home.path(), &new_thread_id()).unwrap(), None);
}

#[tokio::test]
async fn find_and_list_walk_both_trees() {
    let home = tempfile::tempdir().unwrap();
    // A non-UUIDv7 id (no fast path) and one created on an odd date.
    let odd = ThreadId::from("not-a-uuid");
    let writer = RolloutWriter::create(home.path(), meta(&odd, 86_400 * 3))
        .await
        .unwrap();
    let odd_path = writer.path().to_path_buf();
    writer.close().await.unwrap();
    assert!(odd_path.ends_with("sessions/1970/01/04/rollout-1970-01-04T00-00-00-not-a-uuid.jsonl"));
    let (path, id) = closed_rollout(home.path()).await;
    let moved = archive(home.path(), &path).unwrap();
    std::fs::write(home.path().join(SESSIONS_DIR).join("notes.txt"), "x").unwrap();

    assert_eq!(
        find_rollout(home.path(), &odd).unwrap().unwrap().path,
        odd_path
    );
    assert_eq!(find_rollout(home.path(), &id).unwrap().unwrap().path, moved);
    let all = list_rollouts(home.path()).unwrap();
    assert_eq!(
        all,
        vec![
            FoundRollout {
                path: odd_path,
                archived: false
            },
            FoundRollout {
                path: moved,
                archived: true
            },
        ]
    );
    assert!(
        list_rollouts(&home.path().join("nowhere"))
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn ephemeral_threads_get_no_rollout() {
    let home = tempfile::tempdir().unwrap();
    let mut header = meta(&new_thread_id(), now_secs());
    header.ephemeral = true;
    assert!(matches!(
        RolloutWriter::create(home.path(), header)
            .await
            .unwrap_err(),
        RolloutError::Ephemeral(_)
    ));
    assert!(!home.path().join(SESSIONS_DIR).exists());
}

#[test]
fn rollout_paths_use_utc_dates() {
    let home = Path::new("/h");
    let id = ThreadId::from("0190a0b0-0000-7000-8000-000000000000");
    // 2024-02-29T23:59:59Z
    assert_eq!(
        rollout_path(home, 1_709_251_199, &id),
        PathBuf::from(
            "/h/sessions/2024/02/29/rollout-2024-02-29T23-59-59-0190a0b0-0000-7000-8000-000000000000.jsonl"
        )
    );
    assert_eq!(utc_parts(0), ((1970, 1, 1), (0, 0, 0)));
    assert_eq!(utc_parts(951_782_400), ((2000, 2, 29), (0, 0, 0)));
    assert_eq!(utc_parts(-1), ((1969, 12, 31), (23, 59, 59)));
    assert_eq!(utc_parts(4_102_444_800), ((2100, 1, 1), (0, 0, 0)));
}
