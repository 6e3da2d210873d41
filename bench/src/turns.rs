//! Turn latency for a reply of K text deltas: `turn/start` sent → `turn/completed` read, in wall
//! time and in server CPU time, and the per-delta cost from the slope over K.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::cli::Reps;
use crate::procfs::{clock_ticks_per_second, cpu_ticks};
use crate::report::{Report, Unit};
use crate::stats::{Summary, slope, summarize};
use crate::target::{REQUEST_TIMEOUT, Session, Target, reply_text_bytes};

pub const GROUP: &str = "Turn latency (turn/start sent → turn/completed read), reply of K deltas";
pub const CPU_PER_DELTA: &str = "per delta, server CPU (slope)";
pub const WALL_PER_DELTA: &str = "per delta, wall (slope)";

const KS: [usize; 3] = [10, 1_000, 10_000];
const TURN_TIMEOUT: Duration = Duration::from_secs(300);

/// One turn of `k` deltas on a new thread: (wall ms, server CPU ms, delta notifications read).
///
/// Every delta's text must arrive; Weft merges consecutive deltas into one notification when
/// the client's queue is full (this client parses each line and falls behind at K = 10,000), so
/// the notifications can be fewer than `k`, and the slope is then not a per-notification cost:
/// the strict one, under the queue, is the `fanout` scenario's stdio slope.
async fn turn(
    session: &mut Session,
    target: &Target,
    k: usize,
    tick_ms: f64,
) -> Result<(f64, f64, usize)> {
    let thread = session.thread_with_reply(target, k).await?;
    let pid = session.server.pid();
    let cpu_before = cpu_ticks(pid)?;
    let (pending, sent) = session.send_turn(&thread).await?;
    let deadline = Instant::now() + TURN_TIMEOUT;
    let (done, deltas) = session.wait_turn_counting_deltas(&thread, deadline).await?;
    let cpu_after = cpu_ticks(pid)?;
    pending.result(REQUEST_TIMEOUT).await?;
    if deltas.text_bytes != reply_text_bytes(k) {
        bail!(
            "expected the text of {k} agentMessage deltas ({} bytes), got {} bytes in {} notifications",
            reply_text_bytes(k),
            deltas.text_bytes,
            deltas.notifications
        );
    }
    let wall = done.at.duration_since(sent).as_secs_f64() * 1e3;
    let cpu = (cpu_after - cpu_before) as f64 * tick_ms;
    Ok((wall, cpu, deltas.notifications))
}

pub async fn run(target: &Target, reps: &Reps, report: &mut Report) -> Result<()> {
    let tick_ms = 1e3 / clock_ticks_per_second() as f64;
    let mut session = Session::start(target).await?;
    turn(&mut session, target, 10, tick_ms).await?; // warm-up, not measured
    let mut wall: Vec<Vec<f64>> = vec![Vec::new(); KS.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); KS.len()];
    let mut notes: Vec<Vec<f64>> = vec![Vec::new(); KS.len()];
    // Interleave the sizes so drift in machine load spreads over all of them.
    for _ in 0..reps.turns {
        for (i, &k) in KS.iter().enumerate() {
            let (w, c, n) = turn(&mut session, target, k, tick_ms).await?;
            wall[i].push(w);
            cpu[i].push(c);
            notes[i].push(n as f64);
        }
    }
    session.stop().await?;

    let kind = target.kind;
    let mut wall_points = Vec::new();
    let mut cpu_points = Vec::new();
    for (i, &k) in KS.iter().enumerate() {
        if let (Some(w), Some(c)) = (summarize(&wall[i]), summarize(&cpu[i])) {
            report.value(
                kind,
                GROUP,
                &format!("K = {}: wall", thousands(k)),
                Unit::Ms,
                w,
            );
            report.value(
                kind,
                GROUP,
                &format!("K = {}: server CPU", thousands(k)),
                Unit::Ms,
                c,
            );
            if let Some(n) = summarize(&notes[i]) {
                report.value(
                    kind,
                    GROUP,
                    &format!(
                        "K = {}: delta notifications read (fewer: merged)",
                        thousands(k)
                    ),
                    Unit::Count,
                    n,
                );
            }
            wall_points.push((k as f64, w.median));
            cpu_points.push((k as f64, c.median));
        }
    }
    // ms per delta → µs per delta.
    if let Some(s) = slope(&wall_points) {
        report.value(
            kind,
            GROUP,
            WALL_PER_DELTA,
            Unit::Us,
            Summary::exact(s * 1e3),
        );
    }
    if let Some(s) = slope(&cpu_points) {
        report.value(
            kind,
            GROUP,
            CPU_PER_DELTA,
            Unit::Us,
            Summary::exact(s * 1e3),
        );
    }
    Ok(())
}

/// `10000` → `10,000`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn groups_digits() {
        assert_eq!(thousands(10), "10");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(100000), "100,000");
    }
}
