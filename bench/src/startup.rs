//! Start-up: process spawn → `initialize` response, in a warm home and in an empty one.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::cli::Reps;
use crate::report::{Report, Unit};
use crate::stats::summarize;
use crate::target::{EXIT_TIMEOUT, Home, REQUEST_TIMEOUT, Target};

pub const GROUP: &str = "Start-up (spawn → initialize response)";
pub const WARM: &str = "warm home";
pub const EMPTY: &str = "empty home";

/// Spawn, initialize (within `timeout`), stop; returns spawn → initialize answer in ms.
pub async fn start_once(target: &Target, home: &Home, timeout: Duration) -> Result<f64> {
    let start = Instant::now();
    let server = target.spawn(home)?;
    let answered = server.initialize(timeout).await?;
    let ms = answered.duration_since(start).as_secs_f64() * 1e3;
    server.shutdown(EXIT_TIMEOUT).await?;
    Ok(ms)
}

pub async fn run(target: &Target, reps: &Reps, report: &mut Report) -> Result<()> {
    // No model is needed to start; the provider points at a closed port.
    let base_url = "http://127.0.0.1:9/v1";

    // Warm: one home, used once before measuring (files created, page cache warm).
    let home = target.new_home(base_url)?;
    start_once(target, &home, REQUEST_TIMEOUT).await?;
    let mut warm = Vec::new();
    for _ in 0..reps.startup {
        warm.push(start_once(target, &home, REQUEST_TIMEOUT).await?);
    }

    // Empty: a new home holding only config.toml, and a new empty $HOME, every time.
    let mut empty = Vec::new();
    for _ in 0..reps.startup {
        let home = target.new_home(base_url)?;
        empty.push(start_once(target, &home, REQUEST_TIMEOUT).await?);
    }

    let kind = target.kind;
    if let Some(s) = summarize(&warm) {
        report.value(kind, GROUP, WARM, Unit::Ms, s);
    }
    if let Some(s) = summarize(&empty) {
        report.value(kind, GROUP, EMPTY, Unit::Ms, s);
    }
    Ok(())
}
