use weft_protocol::{ThreadGoal, ThreadGoalStatus, ThreadId};

use super::*;

async fn db() -> (tempfile::TempDir, StateDb) {
    let home = tempfile::tempdir().unwrap();
    let db = StateDb::open(home.path()).await.unwrap();
    (home, db)
}

/// A goal set by a client: `objective`, `status`, `budget`.
async fn set(
    db: &StateDb,
    id: &ThreadId,
    objective: &str,
    status: ThreadGoalStatus,
    budget: Option<i64>,
) -> ThreadGoal {
    let update = GoalUpdate {
        objective: Some(objective.into()),
        status: Some(status),
        token_budget: budget,
    };
    db.set_goal(id, update, 100).await.unwrap().goal
}

/// Marks the goal of `id` (it has one): `status`, with `tokens` and `seconds` of usage at `now`.
async fn mark(
    db: &StateDb,
    id: &ThreadId,
    status: ThreadGoalStatus,
    tokens: i64,
    seconds: i64,
    now: i64,
) -> ThreadGoal {
    db.mark_goal(id, status, tokens, seconds, now)
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn goals_are_created_updated_replaced_and_cleared() {
    let (_home, db) = db().await;
    let id = ThreadId::from("t1");
    assert_eq!(db.goal(&id).await.unwrap(), None);
    let status_only = GoalUpdate {
        status: Some(ThreadGoalStatus::Paused),
        ..GoalUpdate::default()
    };
    match db.set_goal(&id, status_only.clone(), 100).await {
        Err(err @ GoalError::NoGoal(_)) => assert_eq!(
            err.to_string(),
            "cannot update goal for thread t1: no goal exists"
        ),
        other => panic!("expected NoGoal, got {other:?}"),
    }
    let blank = GoalUpdate {
        objective: Some("  ".into()),
        ..GoalUpdate::default()
    };
    assert!(matches!(
        db.set_goal(&id, blank, 100).await,
        Err(GoalError::EmptyObjective)
    ));

    let created = db
        .set_goal(
            &id,
            GoalUpdate {
                objective: Some("Ship it".into()),
                ..GoalUpdate::default()
            },
            100,
        )
        .await
        .unwrap()
        .goal;
    assert_eq!(created.status, ThreadGoalStatus::Active);
    assert_eq!((created.created_at, created.updated_at), (100, 100));
    assert_eq!(created.token_budget, None);

    let set = db.set_goal(&id, status_only, 105).await.unwrap();
    assert_eq!(set.previous.as_ref(), Some(&created));
    let paused = set.goal;
    assert_eq!(paused.status, ThreadGoalStatus::Paused);
    assert_eq!((paused.created_at, paused.updated_at), (100, 105));
    let budget = db
        .set_goal(
            &id,
            GoalUpdate {
                token_budget: Some(1000),
                ..GoalUpdate::default()
            },
            106,
        )
        .await
        .unwrap()
        .goal;
    assert_eq!(budget.token_budget, Some(1000));
    assert_eq!(budget.status, ThreadGoalStatus::Paused);
    assert_eq!(db.goal(&id).await.unwrap(), Some(budget));

    let replaced = db
        .set_goal(
            &id,
            GoalUpdate {
                objective: Some("Again".into()),
                status: Some(ThreadGoalStatus::Complete),
                token_budget: None,
            },
            110,
        )
        .await
        .unwrap()
        .goal;
    assert_eq!(replaced.objective, "Again");
    assert_eq!(replaced.status, ThreadGoalStatus::Complete);
    assert_eq!((replaced.created_at, replaced.token_budget), (110, None));

    assert!(db.clear_goal(&id).await.unwrap());
    assert!(!db.clear_goal(&id).await.unwrap());
    assert_eq!(db.goal(&id).await.unwrap(), None);
}

#[tokio::test]
async fn the_model_creates_a_goal_only_over_none_or_a_complete_one() {
    let (_home, db) = db().await;
    let id = ThreadId::from("t1");
    let created = db
        .create_goal_unless_unfinished(&id, "Write the docs", Some(500), 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(created.status, ThreadGoalStatus::Active);
    assert_eq!(created.token_budget, Some(500));
    assert_eq!(db.goal(&id).await.unwrap(), Some(created.clone()));
    for status in [
        ThreadGoalStatus::Active,
        ThreadGoalStatus::Paused,
        ThreadGoalStatus::Blocked,
        ThreadGoalStatus::BudgetLimited,
        ThreadGoalStatus::UsageLimited,
    ] {
        let unfinished = set(&db, &id, "Old", status, None).await;
        assert_eq!(
            db.create_goal_unless_unfinished(&id, "New", None, 20)
                .await
                .unwrap(),
            None,
            "{status:?}"
        );
        assert_eq!(db.goal(&id).await.unwrap(), Some(unfinished));
    }
    set(&db, &id, "Done", ThreadGoalStatus::Complete, Some(9)).await;
    let replaced = db
        .create_goal_unless_unfinished(&id, "Next", None, 30)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            replaced.objective.as_str(),
            replaced.status,
            replaced.token_budget
        ),
        ("Next", ThreadGoalStatus::Active, None)
    );
    assert_eq!((replaced.tokens_used, replaced.created_at), (0, 30));
    assert_eq!(db.goal(&id).await.unwrap(), Some(replaced));
}

#[tokio::test]
async fn accounting_adds_usage_to_an_active_goal_until_its_budget() {
    let (_home, db) = db().await;
    let id = ThreadId::from("t1");
    assert_eq!(db.account_goal(&id, 10, 1, false, 5).await.unwrap(), None);
    set(&db, &id, "Ship", ThreadGoalStatus::Active, Some(1000)).await;
    // 110 tokens a turn: the tenth turn reaches the budget (1100 >= 1000).
    for turn in 1..=9 {
        let goal = db
            .account_goal(&id, 110, 2, false, 200)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(goal.status, ThreadGoalStatus::Active, "turn {turn}");
        assert_eq!(goal.tokens_used, 110 * turn);
        assert_eq!(goal.time_used_seconds, 2 * turn);
    }
    // The budget takes precedence over a pause.
    let limited = db
        .account_goal(&id, 110, 2, true, 300)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(limited.status, ThreadGoalStatus::BudgetLimited);
    assert_eq!((limited.tokens_used, limited.updated_at), (1100, 300));
    // Not active any more: nothing is counted.
    assert_eq!(
        db.account_goal(&id, 110, 2, false, 400).await.unwrap(),
        None
    );
    assert_eq!(db.goal(&id).await.unwrap(), Some(limited));

    set(&db, &id, "Unbounded", ThreadGoalStatus::Active, None).await;
    let paused = db
        .account_goal(&id, 50, 0, true, 500)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (paused.status, paused.tokens_used),
        (ThreadGoalStatus::Paused, 50)
    );
}

#[tokio::test]
async fn marking_a_goal_counts_only_active_usage_and_respects_the_budget() {
    let (_home, db) = db().await;
    let id = ThreadId::from("t1");
    assert_eq!(
        db.mark_goal(&id, ThreadGoalStatus::Complete, 1, 1, 1)
            .await
            .unwrap(),
        None
    );
    set(&db, &id, "Ship", ThreadGoalStatus::Active, Some(100)).await;
    let complete = mark(&db, &id, ThreadGoalStatus::Complete, 150, 3, 7).await;
    // Complete stays complete even past the budget; the usage is counted.
    assert_eq!(
        (
            complete.status,
            complete.tokens_used,
            complete.time_used_seconds
        ),
        (ThreadGoalStatus::Complete, 150, 3)
    );
    // A goal that is not active gets no usage added.
    let blocked = mark(&db, &id, ThreadGoalStatus::Blocked, 40, 1, 8).await;
    assert_eq!(
        (blocked.status, blocked.tokens_used),
        (ThreadGoalStatus::Blocked, 150)
    );

    set(&db, &id, "Again", ThreadGoalStatus::Active, Some(100)).await;
    let paused = mark(&db, &id, ThreadGoalStatus::Paused, 30, 0, 9).await;
    assert_eq!(
        (paused.status, paused.tokens_used),
        (ThreadGoalStatus::Paused, 30)
    );
    set(&db, &id, "Third", ThreadGoalStatus::Active, Some(100)).await;
    // Pausing while the usage reaches the budget: the budget wins.
    let limited = mark(&db, &id, ThreadGoalStatus::Paused, 100, 0, 9).await;
    assert_eq!(limited.status, ThreadGoalStatus::BudgetLimited);
}

#[tokio::test]
async fn an_indexed_goal_tells_a_thread_without_one_from_no_thread() {
    let (_home, db) = db().await;
    let row = crate::state::tests::row(1, 100);
    assert_eq!(db.indexed_goal(&row.id).await.unwrap(), None);
    db.upsert(&row).await.unwrap();
    assert_eq!(db.indexed_goal(&row.id).await.unwrap(), Some(None));
    let goal = set(&db, &row.id, "ship it", ThreadGoalStatus::Active, None).await;
    assert_eq!(db.indexed_goal(&row.id).await.unwrap(), Some(Some(goal)));
}
