//! Unit tests of `questions.rs`: attribution, the bound, the end of a call.

use rmcp::model::NumberOrString;

use super::*;

fn asker(thread: &str) -> Asker {
    Asker {
        thread: thread.to_string(),
        ask: Arc::new(|_| Box::pin(async { serde_json::json!({"action": "accept"}) })),
        warn: Arc::new(|_| Box::pin(async {})),
    }
}

fn id(n: i64) -> RequestId {
    NumberOrString::Number(n)
}

fn token(n: i64) -> ProgressToken {
    ProgressToken(NumberOrString::Number(n))
}

/// Which thread a question goes to (`None`: not to any), and how many callers are warned
/// when it is ambiguous.
fn target(attribution: Attribution) -> (Option<String>, usize) {
    match attribution {
        Attribution::Call(call) => (call.asker.as_ref().map(|a| a.thread.clone()), 0),
        Attribution::Outside => (None, 0),
        Attribution::Ambiguous(callers) => (None, callers.len()),
    }
}

#[test]
fn one_thread_in_flight_gets_its_questions() {
    let questions = Questions::new("s", 8);
    assert_eq!(target(questions.attribute(None, None)), (None, 0));
    let a1 = questions.begin(Some(asker("A")));
    let a2 = questions.begin(Some(asker("A")));
    assert_eq!(
        target(questions.attribute(None, None)),
        (Some("A".into()), 0)
    );
    drop(a1);
    drop(a2);
    assert_eq!(target(questions.attribute(None, None)), (None, 0));
}

#[test]
fn several_threads_in_flight_are_ambiguous_whichever_is_newer() {
    let questions = Questions::new("s", 8);
    let a = questions.begin(Some(asker("A")));
    let b = questions.begin(Some(asker("B")));
    assert_eq!(target(questions.attribute(None, None)), (None, 2));
    drop(a);
    let a = questions.begin(Some(asker("A")));
    assert_eq!(target(questions.attribute(None, None)), (None, 2));
    drop(b);
    drop(a);
    // A request nobody can answer for makes a thread's call ambiguous too.
    let _a = questions.begin(Some(asker("A")));
    let read = questions.begin(None);
    assert_eq!(target(questions.attribute(None, None)), (None, 1));
    drop(read);
    assert_eq!(
        target(questions.attribute(None, None)),
        (Some("A".into()), 0)
    );
}

#[test]
fn the_stream_or_the_progress_token_names_the_call() {
    let questions = Questions::new("s", 8);
    let a = questions.begin(Some(asker("A")));
    a.sent(id(1), token(11));
    let b = questions.begin(Some(asker("B")));
    b.sent(id(2), token(12));
    let on = |n| InboundStreamOrigin::OutboundRequest(id(n));
    assert_eq!(
        target(questions.attribute(Some(&on(1)), None)),
        (Some("A".into()), 0)
    );
    assert_eq!(
        target(questions.attribute(Some(&on(2)), None)),
        (Some("B".into()), 0)
    );
    // The stream of a request that is no call in flight: nobody's.
    assert_eq!(target(questions.attribute(Some(&on(3)), None)), (None, 0));
    assert_eq!(
        target(questions.attribute(None, Some(&token(11)))),
        (Some("A".into()), 0)
    );
    assert_eq!(
        target(questions.attribute(None, Some(&token(12)))),
        (Some("B".into()), 0)
    );
    // An unknown token, or the standalone stream: the in-flight rule, ambiguous here.
    assert_eq!(
        target(questions.attribute(None, Some(&token(99)))),
        (None, 2)
    );
    let standalone = InboundStreamOrigin::Unassociated;
    assert_eq!(
        target(questions.attribute(Some(&standalone), None)),
        (None, 2)
    );
}

#[tokio::test]
async fn a_call_holds_at_most_the_limit_and_its_end_cancels_them() {
    let questions = Questions::new("s", 2);
    let call = questions.begin(Some(asker("A")));
    let first = OpenSlot::take(&call.entry, 2).expect("first");
    let second = OpenSlot::take(&call.entry, 2).expect("second");
    assert!(OpenSlot::take(&call.entry, 2).is_none(), "over the limit");
    drop(first);
    let third = OpenSlot::take(&call.entry, 2).expect("a place again");
    let ended = call.entry.ended.clone();
    let entry = Arc::clone(&call.entry);
    // The open questions end when their call's end cancels them.
    let waiter = tokio::spawn(async move {
        ended.cancelled().await;
        drop(second);
        drop(third);
    });
    tokio::time::timeout(Duration::from_secs(1), call.end())
        .await
        .expect("end waits only until the open questions are over");
    waiter.await.expect("waiter");
    assert_eq!(entry.open.load(Ordering::Acquire), 0);
    assert!(questions.in_flight.lock().is_empty());
}
