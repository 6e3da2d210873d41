//! The reference's routing headers (issue 28 part 7): every model request of a root thread
//! carries `session-id` and `thread-id` (both the thread's id) next to `session_id` and
//! `x-client-request-id`, on both wire APIs.

use weft_mock_model::{Reply, WireApi};
use weft_test_support::Transport;

use super::{Config, harness};

async fn root_requests_carry_session_id_and_thread_id(transport: Transport) {
    for wire in [WireApi::Responses, WireApi::Chat] {
        let mut h = harness(transport, wire, Config::default()).await;
        h.push(Reply::new().text("one"));
        h.push(Reply::new().text("two"));
        let thread = h.start_thread().await;
        h.run_turn(&thread, "first").await;
        h.run_turn(&thread, "second").await;
        let requests = h.wait_for_requests(2).await;
        for request in &requests {
            for name in [
                "session-id",
                "thread-id",
                "session_id",
                "x-client-request-id",
            ] {
                assert_eq!(
                    request.header(name),
                    Some(thread.as_str()),
                    "{name} on {wire:?}"
                );
            }
            assert_eq!(
                request.header("x-openai-subagent"),
                None,
                "a root is no sub-agent"
            );
        }
    }
}

on_both_transports!(root_requests_carry_session_id_and_thread_id);
