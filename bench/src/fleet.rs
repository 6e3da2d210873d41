//! A fleet of streaming turns: T concurrent turns of K deltas each over C WebSocket connections
//! (20 threads per connection), every `turn/start` sent back to back (round-robin over the
//! connections, at most 64 unanswered in all: the server's request queue holds 128).
//!
//! Reported: wall time (first `turn/start` written → last `turn/completed` read), failed turns
//! (an error answer, a `turn/completed` whose status is not `completed`, or a turn that never
//! completed), connections the server dropped, delivered notifications (every frame read while
//! the fleet ran; every connection must have received K deltas for each of its threads), server
//! CPU per delivered notification, and the server's peak RSS (VmHWM).

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::Value;

use crate::cli::Args;
use crate::concurrency::WINDOW;
use crate::fanout::{cpu_mark, cpu_ms_since, peak_rss_kib};
use crate::report::{Report, Unit};
use crate::stats::Summary;
use crate::target::{
    Kind, REQUEST_TIMEOUT, Target, reply_of_deltas, thread_id, thread_start_params,
    turn_start_params,
};
use crate::turns::thousands;
use crate::ws_client::{WsClient, WsPending, WsServer};

pub const GROUP: &str = "Fleet: concurrent streaming turns over WebSocket connections";

/// The peak RSS again, recorded only when the run is at the reference's size (the mixed load of
/// issue 29's memory target: `--quick`, or `--fleet-turns/-deltas` set to the reference's).
pub const PEAK_RSS_AT_REFERENCE_SIZE: &str = "peak RSS at the reference's size";

/// The size of one fleet run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub turns: usize,
    pub deltas: usize,
    pub per_connection: usize,
}

impl Size {
    pub fn of(target: Kind, args: &Args) -> Size {
        let fleet = &args.fleet;
        let (turns, deltas) = match target {
            Kind::Weft => {
                let default = if args.quick { 200 } else { 1_000 };
                (
                    fleet.fleet_turns.unwrap_or(default),
                    fleet.fleet_deltas.unwrap_or(default),
                )
            }
            Kind::Reference => (fleet.fleet_reference_turns, fleet.fleet_reference_deltas),
        };
        Size {
            turns: turns.max(1),
            deltas,
            per_connection: fleet.fleet_per_connection.max(1),
        }
    }

    /// Connections needed: `turns / per_connection`, rounded up.
    pub fn connections(self) -> usize {
        self.turns.div_ceil(self.per_connection)
    }

    /// Thread `i` (0-based) of the fleet runs on this connection; threads are dealt in order,
    /// `per_connection` to a connection.
    pub fn connection_of(self, i: usize) -> usize {
        i / self.per_connection
    }

    fn label(self) -> String {
        format!(
            "{} turns × {} deltas, {} connections",
            thousands(self.turns),
            thousands(self.deltas),
            self.connections()
        )
    }
}

/// What one connection saw.
struct Seen {
    client: WsClient,
    /// Final status of each of its turns that completed, by thread id.
    statuses: HashMap<String, String>,
    last: Option<Instant>,
}

/// Read `client`'s notifications until each of `threads` has a `turn/completed`, the
/// connection ends or `deadline` passes.
async fn watch(mut client: WsClient, threads: Vec<String>, deadline: Instant) -> Seen {
    let mut statuses = HashMap::new();
    let mut last = None;
    while statuses.len() < threads.len() {
        let Ok(note) = client
            .wait_note("turn/completed", deadline, |note| {
                note.method == "turn/completed"
            })
            .await
        else {
            break;
        };
        if let Some(thread) = note.thread_id()
            && threads.iter().any(|t| t == thread)
        {
            let status = note
                .params
                .pointer("/turn/status")
                .and_then(Value::as_str)
                .unwrap_or("?");
            statuses.insert(thread.to_string(), status.to_string());
            last = Some(note.at);
        }
    }
    Seen {
        client,
        statuses,
        last,
    }
}

struct Outcome {
    wall_ms: f64,
    cpu_ms: f64,
    failed: usize,
    dropped: usize,
    delivered_frames: u64,
    delivered_deltas: u64,
    missing_deltas: u64,
    peak_rss_kib: u64,
}

async fn once(target: &Target, size: Size) -> Result<Outcome> {
    let server = WsServer::start(target).await?;
    let mut clients = Vec::new();
    for _ in 0..size.connections() {
        clients.push(server.connect().await?);
    }
    // Threads, connection by connection (each connection's few pipelined): not timed.
    let mut threads: Vec<Vec<String>> = vec![Vec::new(); clients.len()];
    for i in 0..size.turns {
        threads[size.connection_of(i)].push(String::new());
    }
    for (client, mine) in clients.iter().zip(threads.iter_mut()) {
        let mut pending = Vec::new();
        for _ in 0..mine.len() {
            pending.push(
                client
                    .send("thread/start", thread_start_params(target))
                    .await?
                    .0,
            );
        }
        for (slot, p) in mine.iter_mut().zip(pending) {
            *slot = thread_id(&p.result(REQUEST_TIMEOUT).await?)?;
        }
    }
    server
        .mock
        .push_all((0..size.turns).map(|_| reply_of_deltas(size.deltas).responses()));
    for client in clients.iter_mut() {
        client.drain_notes();
        client.reset_deltas();
    }
    let frames_before: Vec<u64> = clients.iter().map(WsClient::frames).collect();

    let mark = cpu_mark(server.pid())?;
    let start = Instant::now();
    // Round-robin: the first thread of every connection, then the second …
    let mut in_flight: VecDeque<WsPending> = VecDeque::new();
    let mut failed_starts: Vec<(usize, String)> = Vec::new();
    let mut answered = Vec::new();
    for slot in 0..size.per_connection {
        for (c, client) in clients.iter().enumerate() {
            let Some(thread) = threads[c].get(slot) else {
                continue;
            };
            if in_flight.len() >= WINDOW
                && let Some(p) = in_flight.pop_front()
            {
                answered.push(p.answer(REQUEST_TIMEOUT).await);
            }
            match client
                .send("turn/start", turn_start_params(thread, "hello"))
                .await
            {
                Ok((p, _)) => in_flight.push_back(p),
                Err(_) => failed_starts.push((c, thread.clone())),
            }
        }
    }
    for p in in_flight {
        answered.push(p.answer(REQUEST_TIMEOUT).await);
    }
    let error_answers = answered
        .iter()
        .filter(|a| !matches!(a, Ok((Ok(_), _))))
        .count();

    let budget =
        Duration::from_secs(120) + Duration::from_micros((size.turns * size.deltas) as u64 * 100);
    let deadline = Instant::now() + budget;
    let mut watchers = Vec::new();
    for (client, mine) in clients.into_iter().zip(threads.iter()) {
        watchers.push(tokio::spawn(watch(client, mine.clone(), deadline)));
    }
    let mut seen = Vec::new();
    for w in watchers {
        seen.push(w.await?);
    }
    let cpu_ms = cpu_ms_since(server.pid(), &mark)?;
    let peak = peak_rss_kib(server.pid())?;

    let mut last = start;
    let mut not_completed = 0;
    let mut dropped = 0;
    let mut delivered_frames = 0;
    let mut delivered_deltas = 0;
    let mut missing_deltas = 0;
    for (c, s) in seen.iter().enumerate() {
        if let Some(at) = s.last {
            last = last.max(at);
        }
        if s.client.dropped() {
            dropped += 1;
        }
        delivered_frames += s.client.frames() - frames_before[c];
        delivered_deltas += s.client.total_deltas();
        for thread in &threads[c] {
            if s.statuses.get(thread).map(String::as_str) != Some("completed") {
                not_completed += 1;
            }
            let got = s.client.deltas_of(thread);
            missing_deltas += (size.deltas as u64).saturating_sub(got);
        }
    }
    for s in &seen {
        s.client.close().await;
    }
    server.stop().await?;
    // A turn whose start failed also never completed: count it once.
    let failed = not_completed.max(error_answers + failed_starts.len());
    Ok(Outcome {
        wall_ms: last.duration_since(start).as_secs_f64() * 1e3,
        cpu_ms,
        failed,
        dropped,
        delivered_frames,
        delivered_deltas,
        missing_deltas,
        peak_rss_kib: peak,
    })
}

pub async fn run(target: &Target, args: &Args, report: &mut Report) -> Result<()> {
    let size = Size::of(target.kind, args);
    if size.deltas == 0 {
        bail!("--fleet-deltas must be at least 1");
    }
    eprintln!("  [{}] fleet: {}", target.name(), size.label());
    let outcome = once(target, size).await?;
    let kind = target.kind;
    let size_text = size.label();
    let exact = Summary::exact;
    let rows: [(&str, Unit, f64); 8] = [
        (
            "wall (first turn/start → last turn/completed)",
            Unit::Ms,
            outcome.wall_ms,
        ),
        ("server CPU", Unit::Ms, outcome.cpu_ms),
        ("failed turns", Unit::Count, outcome.failed as f64),
        (
            "connections dropped by the server",
            Unit::Count,
            outcome.dropped as f64,
        ),
        (
            "notifications delivered (all connections)",
            Unit::Count,
            outcome.delivered_frames as f64,
        ),
        ("deltas missing", Unit::Count, outcome.missing_deltas as f64),
        (
            "server CPU per delivered notification",
            Unit::Us,
            outcome.cpu_ms * 1e3 / (outcome.delivered_frames.max(1)) as f64,
        ),
        (
            "peak RSS (VmHWM)",
            Unit::MiB,
            outcome.peak_rss_kib as f64 / 1024.0,
        ),
    ];
    for (label, unit, value) in rows {
        report.value(kind, GROUP, label, unit, exact(value));
    }
    // The ratio target (issue 29) compares the two at one size: the reference's.
    if size == Size::of(Kind::Reference, args) {
        report.value(
            kind,
            GROUP,
            PEAK_RSS_AT_REFERENCE_SIZE,
            Unit::MiB,
            exact(outcome.peak_rss_kib as f64 / 1024.0),
        );
    }
    report.note(format!(
        "fleet, {}: {size_text}; {} deltas of {} expected arrived",
        target.name(),
        thousands(outcome.delivered_deltas as usize),
        thousands(size.turns * size.deltas),
    ));
    if kind == Kind::Reference {
        report.note(
            "fleet, reference: run at its own size (--fleet-reference-turns/-deltas): at about 56 µs of CPU per delta and 80 ms per turn, the full 1,000 × 1,000 would take many minutes on 2 cores",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Size;

    fn size(turns: usize, deltas: usize, per_connection: usize) -> Size {
        Size {
            turns,
            deltas,
            per_connection,
        }
    }

    #[test]
    fn deals_threads_to_connections() {
        let size = size(1_000, 1_000, 20);
        assert_eq!(size.connections(), 50);
        assert_eq!(size.connection_of(0), 0);
        assert_eq!(size.connection_of(19), 0);
        assert_eq!(size.connection_of(20), 1);
        assert_eq!(size.connection_of(999), 49);
        let odd = self::size(45, 1, 20);
        assert_eq!(odd.connections(), 3);
        assert_eq!(odd.connection_of(44), 2);
    }
}
