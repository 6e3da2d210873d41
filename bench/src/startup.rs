//! Start-up: process spawn → `initialize` response, in a warm home and in an empty one.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::cli::Reps;
use crate::report::{Report, Unit};
use crate::stats::{Summary, summarize};
use crate::target::{EXIT_TIMEOUT, Home, Kind, REQUEST_TIMEOUT, Target};

pub const GROUP: &str = "Start-up (spawn → initialize response)";
pub const WARM: &str = "warm home";
pub const EMPTY: &str = "empty home";
/// Issue 29: spawn → `initialize` answered, warm and empty home.
const STARTUP_BUDGET_MS: f64 = 3.0;
/// Issue 29: the shipped (stripped) binary, 40 MB.
const SHIPPED_BUDGET_MIB: f64 = 40e6 / (1024.0 * 1024.0);
const FILE_SIZE: &str = "binary: file size";
const SHIPPED_SIZE: &str = "binary: stripped as shipped (objcopy --strip-all, scripts/dist.sh)";

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
    if kind == Kind::Weft {
        report.budget(GROUP, WARM, Unit::Ms, STARTUP_BUDGET_MS, "issue 29");
        report.budget(GROUP, EMPTY, Unit::Ms, STARTUP_BUDGET_MS, "issue 29");
        report.budget(
            GROUP,
            SHIPPED_SIZE,
            Unit::MiB,
            SHIPPED_BUDGET_MIB,
            "issue 29",
        );
        binary_sizes(target, report)?;
    }
    if let Some(s) = summarize(&warm) {
        report.value(kind, GROUP, WARM, Unit::Ms, s);
    }
    if let Some(s) = summarize(&empty) {
        report.value(kind, GROUP, EMPTY, Unit::Ms, s);
    }
    Ok(())
}

/// The size of the binary under test and of what `scripts/dist.sh` would ship from it (the same
/// `objcopy --strip-all`; the debug info goes into a file beside it).
fn binary_sizes(target: &Target, report: &mut Report) -> Result<()> {
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let file = std::fs::metadata(&target.binary)?.len();
    report.value(
        target.kind,
        GROUP,
        FILE_SIZE,
        Unit::MiB,
        Summary::exact(mib(file)),
    );
    let stripped = target.scratch.join("weft-stripped");
    let status = std::process::Command::new("objcopy")
        .arg("--strip-all")
        .arg(&target.binary)
        .arg(&stripped)
        .status();
    match status {
        Ok(status) if status.success() => {
            let bytes = std::fs::metadata(&stripped)?.len();
            std::fs::remove_file(&stripped)?;
            let size = Summary::exact(mib(bytes));
            report.value(target.kind, GROUP, SHIPPED_SIZE, Unit::MiB, size);
        }
        Ok(status) => report.note(format!("objcopy --strip-all failed ({status})")),
        Err(err) => report.note(format!("objcopy --strip-all: {err} (binutils missing?)")),
    }
    Ok(())
}
