//! The search index: it only narrows the `LIKE`, so results are those of the `LIKE` alone.

use weft_protocol::ThreadId;

use super::super::tests::row;
use super::super::{ListQuery, StateDb};
use super::{SEARCH_CANDIDATES, fts_phrase};

async fn search(db: &StateDb, term: &str) -> Vec<String> {
    let page = db
        .list(&ListQuery {
            search_term: Some(term.into()),
            limit: 5,
            ..ListQuery::default()
        })
        .await
        .unwrap();
    page.rows.into_iter().map(|r| r.id.into_string()).collect()
}

#[tokio::test]
async fn search_follows_renames_previews_and_deletes() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    let mut a = row(1, 100);
    a.name = Some("say \"hi\" to the parser".into());
    db.upsert(&a).await.unwrap();
    db.upsert(&row(2, 200)).await.unwrap();
    assert_eq!(search(&db, "\"hi\"").await, ["thread-0001"]);
    assert_eq!(search(&db, "parser").await, ["thread-0001"]);
    assert!(search(&db, "Parser").await.is_empty(), "case-sensitive");
    assert_eq!(
        search(&db, "pr").await.len(),
        2,
        "short terms: the LIKE alone"
    );

    db.set_name(&a.id, Some("lexer")).await.unwrap();
    assert!(search(&db, "parser").await.is_empty());
    assert_eq!(search(&db, "lexer").await, ["thread-0001"]);
    db.touch(&ThreadId::from("thread-0002"), 300, Some("a new preview"))
        .await
        .unwrap();
    assert_eq!(search(&db, "new prev").await, ["thread-0002"]);
    assert!(search(&db, "preview 2").await.is_empty());
    db.delete(&a.id).await.unwrap();
    assert!(search(&db, "lexer").await.is_empty());
    db.close().await;
}

#[tokio::test]
async fn a_common_term_walks_the_sort_order() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    let count = usize::try_from(SEARCH_CANDIDATES).unwrap() + 1;
    for n in 0..count {
        db.upsert(&row(n, i64::try_from(n).unwrap())).await.unwrap();
    }
    assert!(!db.few_search_matches("preview").await.unwrap());
    assert!(db.few_search_matches("preview 7").await.unwrap());
    // Newest first either way.
    assert_eq!(
        search(&db, "preview").await,
        [
            "thread-2000",
            "thread-1999",
            "thread-1998",
            "thread-1997",
            "thread-1996"
        ]
    );
    assert_eq!(
        search(&db, "preview 7").await,
        [
            "thread-0799",
            "thread-0798",
            "thread-0797",
            "thread-0796",
            "thread-0795"
        ]
    );
    db.close().await;
}

#[test]
fn phrases_quote_their_quotes() {
    assert_eq!(fts_phrase("a\"b"), "\"a\"\"b\"");
}

/// Every filter and sort key clients use is served by an index: no shape scans the table, and
/// only the few-candidate shapes (a selective search, an agent tree) sort.
#[tokio::test]
async fn every_page_shape_is_served_by_an_index() {
    use super::super::{Lineage, ListSortKey};
    use weft_protocol::SortDirection;

    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    for n in 0..50 {
        db.upsert(&row(n, i64::try_from(n).unwrap())).await.unwrap();
    }
    let plan = |query: ListQuery| {
        let db = db.clone();
        async move { db.list_plan(&query).await.unwrap().join(" | ") }
    };
    for (key, index) in [
        (ListSortKey::CreatedAt, "threads_archived_created"),
        (ListSortKey::UpdatedAt, "threads_archived_updated"),
        (ListSortKey::RecencyAt, "threads_archived_recency"),
    ] {
        for direction in [SortDirection::Desc, SortDirection::Asc] {
            for cursor in [None, Some("5:thread-0005".to_string())] {
                let got = plan(ListQuery {
                    sort_key: key,
                    direction,
                    cursor,
                    ..ListQuery::default()
                })
                .await;
                assert!(got.contains(&format!("USING INDEX {index} ")), "{got}");
                assert!(!got.contains("TEMP B-TREE"), "{got}");
            }
        }
    }
    let one = |v: &str| Some(vec![v.to_string()]);
    let shapes = [
        (
            ListQuery {
                cwd: one("/work/a"),
                ..ListQuery::default()
            },
            "threads_cwd_created",
            false,
        ),
        (
            ListQuery {
                cwd: one("/work/a"),
                sort_key: ListSortKey::UpdatedAt,
                model_providers: one("openai"),
                ..ListQuery::default()
            },
            "threads_cwd_updated",
            false,
        ),
        (
            ListQuery {
                model_providers: one("openai"),
                sort_key: ListSortKey::RecencyAt,
                archived: true,
                ..ListQuery::default()
            },
            "threads_provider_recency",
            false,
        ),
        (
            ListQuery {
                lineage: Some(Lineage::Parent("thread-0001".into())),
                ..ListQuery::default()
            },
            "threads_parent_created",
            false,
        ),
        (
            ListQuery {
                lineage: Some(Lineage::Ancestor("thread-0001".into())),
                ..ListQuery::default()
            },
            "threads_parent",
            true,
        ),
        (
            ListQuery {
                search_term: Some("preview 4".into()),
                ..ListQuery::default()
            },
            "VIRTUAL TABLE",
            true,
        ),
    ];
    for (query, index, sorts) in shapes {
        let got = plan(query.clone()).await;
        assert!(got.contains(index), "{query:?}: {got}");
        assert_eq!(got.contains("TEMP B-TREE"), sorts, "{query:?}: {got}");
        assert!(
            !got.contains("SCAN threads ") && !got.ends_with("SCAN threads"),
            "{query:?}: {got}"
        );
    }
    db.close().await;
}

/// Issue 24 §7: a term with a NUL (or any control character) is refused before SQLite sees
/// it; it would otherwise fail to parse as an FTS5 query (`unterminated string`) or, cut
/// short, match every thread.
#[tokio::test]
async fn a_search_term_with_a_control_character_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    for n in 1..=3 {
        db.upsert(&row(n, 100 * n as i64)).await.unwrap();
    }
    for (term, code) in [
        ("plain\u{0}NOPE", "U+0000"),
        ("\u{0}", "U+0000"),
        ("tab\there", "U+0009"),
        ("\u{7f}", "U+007F"),
    ] {
        let err = db
            .list(&ListQuery {
                search_term: Some(term.into()),
                ..ListQuery::default()
            })
            .await
            .unwrap_err();
        assert!(
            matches!(err, super::super::StateError::InvalidSearchTerm(_)),
            "{term:?}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("invalid searchTerm: control character {code} is not allowed")
        );
    }
    assert!(super::check_search_term("plain ünïcode \"quotes\" %_\\").is_ok());
    db.close().await;
}
