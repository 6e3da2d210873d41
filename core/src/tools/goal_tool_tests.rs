use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use weft_protocol::{ThreadGoalStatus, ThreadId, ThreadTokenUsage, TokenUsageBreakdown, TurnId};

use super::*;
use crate::state::GoalUpdate;
use crate::tools::context::ToolInput;
use crate::tools::offer::ToolOffer;
use crate::tools::runtime::ToolRuntime;
use crate::tools::tests::{ScriptedSink, plain_turn, tool_call};

/// A call context and what the turn offers.
#[derive(Clone)]
struct TestTurn {
    turn: ToolTurn,
    offer: ToolOffer,
}

struct Fixture {
    _home: tempfile::TempDir,
    db: StateDb,
    sink: Arc<ScriptedSink>,
    totals: Arc<Mutex<ThreadTokenUsage>>,
    turn: TestTurn,
}

impl Fixture {
    async fn new() -> Fixture {
        let home = tempfile::tempdir().unwrap();
        let db = StateDb::open(home.path()).await.unwrap();
        let sink = Arc::new(ScriptedSink::default());
        let totals = Arc::new(Mutex::new(ThreadTokenUsage::default()));
        let goals = GoalTools::On {
            db: db.clone(),
            usage: GoalTurnUsage::new(totals.clone()),
        };
        let turn = turn_with(sink.clone(), goals);
        Fixture {
            _home: home,
            db,
            sink,
            totals,
            turn,
        }
    }

    async fn call(&self, name: &str, args: Value) -> Value {
        let text = self.text(name, &args.to_string()).await;
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }

    async fn create(&self, args: Value) -> Value {
        self.call("create_goal", args).await
    }

    async fn text(&self, name: &str, args: &str) -> String {
        let call = tool_call("call_1", name, ToolInput::Function(args.into()));
        let TestTurn { turn, offer } = self.turn.clone();
        match ToolRuntime::new()
            .tool_set(&offer, &turn)
            .handle(call, turn)
            .await
        {
            crate::model::ResponseItem::FunctionCallOutput {
                output: crate::model::ToolOutput::Text(text),
                ..
            } => text,
            other => panic!("not a text output: {other:?}"),
        }
    }

    /// The model used `n` more tokens.
    fn spend(&self, n: i64) {
        self.totals.lock().total.add(&TokenUsageBreakdown {
            total_tokens: n,
            ..TokenUsageBreakdown::default()
        });
    }

    /// The goals announced so far, with their turn ids.
    fn announced(&self) -> Vec<(Option<TurnId>, ThreadGoalStatus)> {
        self.sink
            .events()
            .into_iter()
            .filter_map(|event| match event {
                ThreadEvent::GoalUpdated { turn_id, goal } => Some((turn_id, goal.status)),
                _ => None,
            })
            .collect()
    }
}

fn turn_with(sink: Arc<ScriptedSink>, goals: GoalTools) -> TestTurn {
    TestTurn {
        turn: plain_turn(sink, "turn-1", CancellationToken::new()),
        offer: ToolOffer {
            goals,
            ..ToolOffer::default()
        },
    }
}

/// A spec without its descriptions: names, types, enums, required lists.
fn shape(mut spec: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("description");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut spec);
    spec
}

#[test]
fn the_specs_have_the_reference_names_and_parameters() {
    let object = |properties: Value, required: Value| {
        json!({"type": "object", "properties": properties, "required": required,
               "additionalProperties": false})
    };
    let function = |name: &str, parameters: Value| json!({"type": "function", "name": name, "strict": false, "parameters": parameters});
    let expected = vec![
        function("get_goal", object(json!({}), json!([]))),
        function(
            "create_goal",
            object(
                json!({"objective": {"type": "string"}, "token_budget": {"type": "integer"}}),
                json!(["objective"]),
            ),
        ),
        function(
            "update_goal",
            object(
                json!({"status": {"type": "string", "enum": ["complete", "blocked", "paused"]}}),
                json!(["status"]),
            ),
        ),
    ];
    let specs = goal_tool_specs();
    assert_eq!(
        specs.iter().cloned().map(shape).collect::<Vec<_>>(),
        expected
    );
    for spec in &specs {
        assert!(
            spec["description"].as_str().is_some_and(|d| d.len() > 40),
            "{spec}"
        );
    }
}

#[tokio::test]
async fn the_specs_are_offered_only_with_goals_on() {
    let f = Fixture::new().await;
    let names = |turn: &TestTurn| -> Vec<String> {
        ToolRuntime::new()
            .tool_set(&turn.offer, &turn.turn)
            .specs()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&f.turn),
        [
            "exec_command",
            "write_stdin",
            "apply_patch",
            "update_plan",
            "get_goal",
            "create_goal",
            "update_goal"
        ]
    );
    for goals in [GoalTools::Off, GoalTools::Ephemeral] {
        let turn = turn_with(f.sink.clone(), goals);
        assert_eq!(
            names(&turn),
            ["exec_command", "write_stdin", "apply_patch", "update_plan"]
        );
    }
}

#[tokio::test]
async fn create_makes_an_active_goal_and_refuses_over_an_unfinished_one() {
    let f = Fixture::new().await;
    assert_eq!(
        f.call("get_goal", json!({})).await,
        json!({"goal": null, "remainingTokens": null})
    );
    f.spend(30);
    let created = f
        .create(json!({"objective": "  Port the parser  ", "token_budget": 500}))
        .await;
    assert_eq!(created["goal"]["objective"], "Port the parser");
    assert_eq!(created["goal"]["status"], "active");
    assert_eq!(created["goal"]["threadId"], "thread");
    assert_eq!(created["goal"]["tokensUsed"], 0);
    assert_eq!(created["remainingTokens"], 500);
    assert!(created.get("completionBudgetReport").is_none());
    assert_eq!(
        f.announced(),
        [(Some(TurnId::from("turn-1")), ThreadGoalStatus::Active)]
    );
    // Reading it back gives the same goal; an empty argument string is no arguments.
    assert_eq!(f.call("get_goal", json!({})).await, created);
    assert_eq!(
        serde_json::from_str::<Value>(&f.text("get_goal", "").await).unwrap(),
        created
    );

    let again = f.create(json!({"objective": "Other"})).await;
    assert_eq!(again, Value::String(UNFINISHED.into()));
    for status in ["paused", "blocked"] {
        f.call("update_goal", json!({"status": status})).await;
        let refused = f.create(json!({"objective": "Other"})).await;
        assert_eq!(refused, Value::String(UNFINISHED.into()), "{status}");
    }
    assert_eq!(
        f.db.goal(&ThreadId::from("thread"))
            .await
            .unwrap()
            .unwrap()
            .objective,
        "Port the parser"
    );
}

#[tokio::test]
async fn create_replaces_a_complete_goal_and_checks_its_arguments() {
    let f = Fixture::new().await;
    for (args, error) in [
        (json!({"objective": "x", "token_budget": 0}), BAD_BUDGET),
        (json!({"objective": "x", "token_budget": -5}), BAD_BUDGET),
        (json!({"objective": "   "}), EMPTY_OBJECTIVE),
    ] {
        assert_eq!(
            f.call("create_goal", args).await,
            Value::String(error.into())
        );
    }
    let extra = f
        .text("create_goal", r#"{"objective":"x","extra":1}"#)
        .await;
    assert!(
        extra.starts_with("failed to parse function arguments:"),
        "{extra}"
    );
    assert!(f.announced().is_empty(), "nothing changed, nothing told");

    f.create(json!({"objective": "First"})).await;
    f.spend(70);
    let complete = f.call("update_goal", json!({"status": "complete"})).await;
    assert_eq!(complete["goal"]["tokensUsed"], 70);
    let replaced = f
        .create(json!({"objective": "Second", "token_budget": 10}))
        .await;
    assert_eq!(replaced["goal"]["objective"], "Second");
    assert_eq!(replaced["goal"]["status"], "active");
    assert_eq!(
        (
            &replaced["goal"]["tokensUsed"],
            &replaced["remainingTokens"]
        ),
        (&json!(0), &json!(10))
    );
}

#[tokio::test]
async fn update_counts_the_turn_and_reports_completion() {
    let f = Fixture::new().await;
    assert_eq!(
        f.call("update_goal", json!({"status": "complete"})).await,
        Value::String(NO_GOAL.into())
    );
    let id = ThreadId::from("thread");
    let update = GoalUpdate {
        objective: Some("Ship it".into()),
        status: None,
        token_budget: Some(1000),
    };
    f.db.set_goal(&id, update, 1).await.unwrap();
    for status in ["active", "budgetLimited", "usageLimited", "done"] {
        assert_eq!(
            f.call("update_goal", json!({"status": status})).await,
            Value::String(BAD_STATUS.into()),
            "{status}"
        );
    }
    let missing = f.text("update_goal", "{}").await;
    assert!(
        missing.starts_with("failed to parse function arguments:"),
        "{missing}"
    );
    // What the turn used before the call is counted to the goal it completes.
    f.spend(240);
    let done = f.call("update_goal", json!({"status": "complete"})).await;
    assert_eq!(done["goal"]["status"], "complete");
    assert_eq!(done["goal"]["tokensUsed"], 240);
    assert_eq!(done["remainingTokens"], 760);
    let report = done["completionBudgetReport"].as_str().unwrap();
    assert!(report.contains("240 of its 1000-token budget"), "{report}");
    assert_eq!(
        f.announced(),
        [(Some(TurnId::from("turn-1")), ThreadGoalStatus::Complete)]
    );
    let paused = f.call("update_goal", json!({"status": "paused"})).await;
    assert_eq!(paused["goal"]["status"], "paused");
    assert!(paused.get("completionBudgetReport").is_none());
}

#[tokio::test]
async fn without_goals_the_tools_are_refused() {
    let f = Fixture::new().await;
    let ephemeral = Fixture {
        turn: turn_with(f.sink.clone(), GoalTools::Ephemeral),
        ..Fixture::new().await
    };
    assert_eq!(
        ephemeral.call("get_goal", json!({})).await,
        Value::String(EPHEMERAL.into())
    );
    let off = Fixture {
        turn: turn_with(f.sink.clone(), GoalTools::Off),
        ..Fixture::new().await
    };
    assert_eq!(
        off.create(json!({"objective": "x"})).await,
        Value::String("unsupported call: create_goal".into())
    );
}
