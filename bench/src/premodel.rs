//! Pre-model latency: `turn/start` written → the model request's first bytes reach the mock
//! (timestamped by the proxy), for the first turn of a fresh thread.

use std::time::Duration;

use anyhow::Result;

use crate::cli::Reps;
use crate::report::{Report, Unit};
use crate::stats::summarize;
use crate::target::{REQUEST_TIMEOUT, Session, Target};

pub const GROUP: &str = "Pre-model latency (turn/start sent → model request at the mock)";
pub const LABEL: &str = "first turn of a new thread";

const TURN_TIMEOUT: Duration = Duration::from_secs(60);

pub async fn run(target: &Target, reps: &Reps, report: &mut Report) -> Result<()> {
    let mut session = Session::start(target).await?;
    let mut samples = Vec::new();
    // One unmeasured turn first: lazily initialised state (HTTP client, connection pool …) is
    // start-up cost, not per-turn cost.
    for rep in 0..=reps.pre_model {
        let thread = session.thread_with_reply(target, 10).await?;
        let (pending, sent) = session.send_turn(&thread).await?;
        let arrived = session.proxy.wait_request_after(sent, TURN_TIMEOUT).await?;
        pending.result(REQUEST_TIMEOUT).await?;
        session
            .server
            .wait_turn_completed(&thread, TURN_TIMEOUT)
            .await?;
        if rep > 0 {
            samples.push(arrived.duration_since(sent).as_secs_f64() * 1e3);
        }
    }
    session.stop().await?;
    if let Some(s) = summarize(&samples) {
        report.value(target.kind, GROUP, LABEL, Unit::Ms, s);
    }
    Ok(())
}
