//! Issue 24, items 1 and 2 (docs/mcp.md §5, "A server's own questions"): a server's question
//! reaches only the thread whose call asked it, or nobody; the questions a call leaves open
//! are withdrawn when it ends, and one call may hold only so many. Driven with
//! `tests/mcp/servers/weft_edge_server.py` over stdio, two WebSocket clients each running a
//! thread on the daemon's one pool.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::mcp::toml_string;
use weft_test_support::{Client, Transport, mcp_servers};

use super::{
    ELICITATION, Harness, Setup, answer, completed_item, event_lines, namespaced_call,
    read_through_turn_completed, serve_http, start_thread, wait_startup,
};
use crate::agents::experimental_init;
use crate::turns::turn_start_params;

/// The edge server's script.
pub fn edge_server() -> PathBuf {
    mcp_servers()
        .test_server
        .with_file_name("weft_edge_server.py")
}

/// A daemon on WebSocket with the edge server as `edge` (approvals off), `more` config, and
/// two clients.
struct Two {
    h: Harness,
    other: Client,
    ws: PathBuf,
    events: PathBuf,
    scratch: tempfile::TempDir,
    /// The edge server over streamable HTTP, when the test runs it so.
    _http: Option<tokio::process::Child>,
}

impl Two {
    /// With the edge server over stdio.
    async fn start(more: &str) -> Two {
        Two::start_on(more, false).await
    }

    async fn start_on(more: &str, http: bool) -> Two {
        let scratch = tempfile::tempdir().expect("scratch dir");
        let events = scratch.path().join("events.log");
        let (server, child) = if http {
            let env = [("WEFT_TEST_EVENTS", events.as_path())];
            let (url, child) = serve_http(&edge_server(), &[], &env).await;
            let server = format!(
                "[mcp_servers.edge]\nurl = {}\ndefault_tools_approval_mode = \"approve\"\n",
                toml_string(&url)
            );
            (server, Some(child))
        } else {
            let server = format!(
                "[mcp_servers.edge]\ncommand = {}\nargs = [{}]\nenv = {{ WEFT_TEST_EVENTS = {} }}\n\
                 default_tools_approval_mode = \"approve\"\n",
                toml_string(&mcp_servers().python.display().to_string()),
                toml_string(&edge_server().display().to_string()),
                toml_string(&events.display().to_string()),
            );
            (server, None)
        };
        let setup = Setup::new(Transport::Ws)
            .init_params(experimental_init())
            .config(&server)
            .config(more);
        let mut h = Harness::start(setup).await;
        let other = h.second_client().await;
        let ws = h.home.path().join("ws");
        std::fs::create_dir_all(&ws).expect("create the workspace");
        Two {
            h,
            other,
            ws,
            events,
            scratch,
            _http: child,
        }
    }

    /// A thread on `client` (the first when `first`), once `edge` is ready for it.
    async fn thread(&mut self, first: bool) -> String {
        let cwd = self.ws.display().to_string();
        let client = self.client(first);
        let thread = start_thread(client, &cwd, "on-request", "read-only").await;
        wait_startup(client, &thread, "edge", "ready").await;
        thread
    }

    fn client(&mut self, first: bool) -> &mut Client {
        if first {
            &mut self.h.client
        } else {
            &mut self.other
        }
    }

    /// Queues a call of an `edge` tool, starts a turn of `thread` on its client, and waits
    /// until the call runs.
    async fn call(&mut self, first: bool, thread: &str, call_id: &str, tool: &str, args: Value) {
        self.h.push(namespaced_call(
            call_id,
            "mcp__edge",
            tool,
            &args.to_string(),
        ));
        let client = self.client(first);
        client
            .request("turn/start", turn_start_params(thread, "go"))
            .await
            .unwrap_or_else(|err| panic!("turn/start failed: {err}"));
        client
            .wait_for(&format!("`{call_id}` started"), |m| {
                m["method"] == "item/started" && m["params"]["item"]["id"] == call_id
            })
            .await;
    }

    fn event_lines(&self) -> Vec<String> {
        event_lines(&self.events)
    }
}

fn elicitations(log: &[Value]) -> Vec<&Value> {
    log.iter()
        .filter(|m| m["method"] == ELICITATION && m.get("id").is_some())
        .collect()
}

fn result_text(item: &Value) -> String {
    item["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Thread A (first client) calls `ask_after` and thread B (second client) calls `wait` on
/// the same server, in the order `a_first` says; A's call asks while both run. Returns the
/// two completed items (A's, B's) and every message each client got.
async fn overlap(
    t: &mut Two,
    a_first: bool,
    attributable: bool,
    echo_token: bool,
) -> (Value, Value) {
    let a = t.thread(true).await;
    let b = t.thread(false).await;
    let question = format!("A's secret question ({a_first}, {echo_token})");
    // A asks, and B's call ends, when the test says so (by creating these files).
    let go_a = t.scratch.path().join(format!("go_a_{a_first}"));
    let go_b = t.scratch.path().join(format!("go_b_{a_first}"));
    let ask = json!({"question": question, "echo_token": echo_token,
                     "after_file": go_a.display().to_string()});
    let wait = json!({"seconds": 0, "until_file": go_b.display().to_string()});
    if a_first {
        t.call(true, &a, "call_a", "ask_after", ask).await;
        t.call(false, &b, "call_b", "wait", wait).await;
    } else {
        t.call(false, &b, "call_b", "wait", wait).await;
        t.call(true, &a, "call_a", "ask_after", ask).await;
    }
    t.h.push(Reply::new().text("a done"));
    t.h.push(Reply::new().text("b done"));
    // Both calls run now, in the order chosen: A's asks.
    std::fs::write(&go_a, "").expect("signal A");
    if attributable {
        // Attributed (by the echoed progress token, or the stream it came on): A's client is
        // asked, and answers.
        let request =
            t.h.client
                .wait_for("A's question", |m| m["method"] == ELICITATION)
                .await;
        assert_eq!(request["params"]["threadId"], a.as_str(), "{request}");
        assert_eq!(request["params"]["message"], question.as_str());
        answer(
            &mut t.h.client,
            &request,
            json!({"action": "accept", "content": {"answer": "from A"}, "_meta": null}),
        )
        .await;
    }
    // A's turn ends while B's call still runs; then B's call ends.
    let a_messages = read_through_turn_completed(&mut t.h.client).await;
    std::fs::write(&go_b, "").expect("signal B");
    let b_messages = read_through_turn_completed(&mut t.other).await;
    let a_item = completed_item(&a_messages, "call_a").clone();
    let b_item = completed_item(&b_messages, "call_b").clone();
    // B's connection never sees A's question, whichever call is newer.
    assert!(
        elicitations(t.other.log()).is_empty(),
        "B's client got a question: {:#?}",
        elicitations(t.other.log())
    );
    assert!(
        !t.other
            .log()
            .iter()
            .any(|m| m.to_string().contains("secret question")),
        "A's question text reached B's client"
    );
    assert_eq!(result_text(&b_item), "waited", "{b_item}");
    (a_item, b_item)
}

/// [`overlap`] with a question that can be attributed (over HTTP, or with the token echoed),
/// whichever call is the older: A's client is asked, and its answer reaches A's call.
async fn attributed(http: bool, echo_token: bool) {
    for a_first in [true, false] {
        let mut t = Two::start_on("", http).await;
        let (a_item, _) = overlap(&mut t, a_first, true, echo_token).await;
        assert_eq!(a_item["status"], "completed", "a_first={a_first}: {a_item}");
        assert_eq!(result_text(&a_item), "from A", "a_first={a_first}");
    }
}

/// A server that echoes the call's progress token in its question gets it asked of the
/// right thread, whether the asking call is the older or the newer one.
#[tokio::test]
async fn a_question_goes_to_the_thread_whose_call_asked() {
    attributed(false, true).await;
}

/// Over streamable HTTP the question comes on the response stream of the call that asked it
/// (the SDK sends it as related to the call): it reaches that thread, no token needed.
#[tokio::test]
async fn over_http_the_stream_names_the_call() {
    attributed(true, false).await;
}

/// Nothing says which call asked (stdio, no token) while calls of two threads run: the
/// question is shown to nobody, the server gets an error saying why, both threads are warned.
#[tokio::test]
async fn an_unattributable_question_is_refused_and_both_threads_warned() {
    for a_first in [true, false] {
        let mut t = Two::start("").await;
        let (a_item, _) = overlap(&mut t, a_first, false, false).await;
        let case = format!("a_first={a_first}");
        assert!(
            elicitations(t.h.client.log()).is_empty(),
            "{case}: nobody is asked"
        );
        assert_eq!(a_item["status"], "failed", "{case}: {a_item}");
        assert!(
            result_text(&a_item).contains("Weft cannot tell which tool call asked this question"),
            "{case}: {a_item}"
        );
        let lines = t.event_lines();
        assert!(
            lines
                .iter()
                .any(|line| line.starts_with("answer A's secret question")
                    && line.contains(" error Weft cannot tell")),
            "{case}: {lines:?}"
        );
        for client in [&t.h.client, &t.other] {
            let warned = client.log().iter().any(|m| {
                m["method"] == "warning"
                    && m["params"]["message"]
                        .as_str()
                        .is_some_and(|text| text.contains("MCP server `edge` asked a question"))
            });
            assert!(warned, "{case}: a warning on each thread");
        }
    }
}

/// One call fires 300 questions and ends without waiting: only the limit's worth reach the
/// client, the rest are declined at once; when the call ends, the open ones are withdrawn
/// (`serverRequest/resolved`) and the server gets `cancel` for each.
#[tokio::test]
async fn questions_are_bounded_and_withdrawn_when_their_call_ends() {
    let mut t = Two::start("[limits]\nmax_mcp_questions_per_call = 3\n").await;
    let thread = t.thread(true).await;
    t.call(
        true,
        &thread,
        "call_flood",
        "flood",
        json!({"count": 300, "seconds": 1.5}),
    )
    .await;
    t.h.push(Reply::new().text("flooded"));
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let flood = completed_item(&messages, "call_flood");
    assert_eq!(result_text(flood), "asked 300", "{flood}");
    let asked: Vec<Value> = elicitations(t.h.client.log())
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(asked.len(), 3, "the limit's worth: {asked:?}");
    // Each is withdrawn before the turn ends.
    let log = t.h.client.log();
    let at = |pred: &dyn Fn(&Value) -> bool| log.iter().position(pred);
    let completed = at(&|m| m["method"] == "turn/completed").expect("turn/completed");
    for id in &asked {
        let resolved = at(&|m| {
            m["method"] == "serverRequest/resolved"
                && m["params"]["requestId"] == *id
                && m["params"]["threadId"] == thread.as_str()
        });
        assert!(
            resolved.is_some_and(|resolved| resolved < completed),
            "question {id} withdrawn before turn/completed: {resolved:?} vs {completed}"
        );
    }
    let mut lines = Vec::new();
    for _ in 0..100 {
        lines = t.event_lines();
        if lines.iter().filter(|l| l.starts_with("flood ")).count() == 300 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let count = |action: &str| {
        lines
            .iter()
            .filter(|l| l.starts_with("flood ") && l.ends_with(&format!(" {action}")))
            .count()
    };
    assert_eq!(
        (count("cancel"), count("decline")),
        (3, 297),
        "every question answered: {lines:?}"
    );
    let warned = t.h.client.log().iter().any(|m| {
        m["method"] == "warning"
            && m["params"]["message"]
                .as_str()
                .is_some_and(|text| text.contains("max_mcp_questions_per_call"))
    });
    assert!(warned, "the thread is told questions were declined");
}
