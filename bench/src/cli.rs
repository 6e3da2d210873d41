//! Command-line options and the repetition counts they imply.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Benchmark Weft's app-server (and, side by side, the reference `codex app-server`) over stdio
/// JSON-RPC against an in-process mock model server on 127.0.0.1.
#[derive(Debug, Clone, Parser)]
#[command(name = "weft-bench")]
pub struct Args {
    /// The Weft binary to measure (`weft`, run as `weft app-server`).
    #[arg(long, default_value = "target/release/weft")]
    pub weft: PathBuf,

    /// The reference binary (`codex`, run as `codex app-server`), or the directory it was
    /// npm-installed into (bench/.reference: its vendored native binary is used). It only ever
    /// runs inside a loopback-only network namespace.
    #[arg(long)]
    pub reference: Option<PathBuf>,

    /// Fewer repetitions (a run of a few minutes instead of tens).
    #[arg(long)]
    pub quick: bool,

    /// Override the repetition count of every measurement (at least 1).
    #[arg(long)]
    pub reps: Option<usize>,

    /// Run only these measurements (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Measure>,

    /// Scratch directory for homes and workspaces (default: a new temporary directory, removed
    /// at the end).
    #[arg(long)]
    pub scratch: Option<PathBuf>,

    /// Also write the result tables (Markdown) to this file.
    #[arg(long)]
    pub markdown: Option<PathBuf>,

    /// Exit with status 3 when a measured figure is over its regression budget.
    #[arg(long)]
    pub check_budgets: bool,

    /// `big-resume`: size of Weft's rollout in MiB (default 1024; 256 with --quick).
    #[arg(long)]
    pub big_resume_mib: Option<u64>,

    /// `big-resume`: size of the reference's rollout in MiB.
    #[arg(long, default_value_t = 256)]
    pub big_resume_reference_mib: u64,

    /// `big-resume`: seconds a full (unpaged) resume may take before it is given up.
    #[arg(long, default_value_t = 120)]
    pub full_resume_timeout_s: u64,

    /// `big-resume`: the full resume's server is killed past this RSS, MiB.
    #[arg(long, default_value_t = 8192)]
    pub full_resume_rss_cap_mib: u64,

    #[command(flatten)]
    pub idle: IdleArgs,
    #[command(flatten)]
    pub fanout: FanoutArgs,
    #[command(flatten)]
    pub fleet: FleetArgs,
}

/// The idle-threads options.
#[derive(Debug, Clone, clap::Args)]
pub struct IdleArgs {
    /// idle: loaded idle threads on Weft.
    #[arg(long, default_value_t = 10_000)]
    pub idle_threads: usize,
    /// idle: loaded idle threads on the reference (it takes about 570 KiB each).
    #[arg(long, default_value_t = 1_000)]
    pub idle_reference_threads: usize,
    /// idle: also run Weft under `valgrind --tool=massif` with this many idle threads (0: no).
    #[arg(long, default_value_t = 0)]
    pub idle_massif: usize,
}

/// The fan-out options.
#[derive(Debug, Clone, clap::Args)]
pub struct FanoutArgs {
    /// fanout: also count instructions per delta of Weft under `valgrind --tool=callgrind`
    /// (slow: about a minute per transport).
    #[arg(long)]
    pub callgrind: bool,
}

/// The fleet options (`--quick` defaults in parentheses).
#[derive(Debug, Clone, clap::Args)]
pub struct FleetArgs {
    /// fleet: concurrent turns on Weft [default: 1,000 (200)].
    #[arg(long)]
    pub fleet_turns: Option<usize>,
    /// fleet: deltas per turn on Weft [default: 1,000 (200)].
    #[arg(long)]
    pub fleet_deltas: Option<usize>,
    /// fleet: threads per connection.
    #[arg(long, default_value_t = 20)]
    pub fleet_per_connection: usize,
    /// fleet: concurrent turns on the reference.
    #[arg(long, default_value_t = 200)]
    pub fleet_reference_turns: usize,
    /// fleet: deltas per turn on the reference.
    #[arg(long, default_value_t = 200)]
    pub fleet_reference_deltas: usize,
}

/// The measurements, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Measure {
    Startup,
    PreModel,
    Turns,
    Concurrency,
    Memory,
    Resume,
    Mcp,
    /// Issue 15, only when named in `--only`: start-up with 0 / 10,000 / 100,000 stored threads.
    StoredStartup,
    /// Issue 15, only when named in `--only`: `thread/list` over 100,000 stored threads.
    List,
    /// Issue 15, only when named in `--only`: a rollout of about 1 GiB, resumed and paged.
    BigResume,
    Idle,
    Fanout,
    Fleet,
    /// Issue 28, only when named in `--only`: fuzzy file search on a 100,000-file tree.
    FileSearch,
}

/// How many times each measurement repeats.
#[derive(Debug, Clone, Copy)]
pub struct Reps {
    pub startup: usize,
    pub pre_model: usize,
    pub turns: usize,
    /// Repetitions of the concurrent-threads runs for N ≤ 100.
    pub concurrency: usize,
    /// Repetitions of the N = 1,000 run (each one loads 1,000 threads).
    pub concurrency_1000: usize,
    pub memory: usize,
    pub resume: usize,
    /// Fresh daemons of the MCP scenario (each starts 5 threads).
    pub mcp: usize,
}

impl Args {
    pub fn reps(&self) -> Reps {
        let reps = if self.quick {
            Reps {
                startup: 5,
                pre_model: 5,
                turns: 3,
                concurrency: 3,
                concurrency_1000: 1,
                memory: 1,
                resume: 3,
                mcp: 3,
            }
        } else {
            Reps {
                startup: 20,
                pre_model: 20,
                turns: 10,
                concurrency: 5,
                concurrency_1000: 2,
                memory: 3,
                resume: 5,
                mcp: 5,
            }
        };
        match self.reps {
            Some(n) => {
                let n = n.max(1);
                Reps {
                    startup: n,
                    pre_model: n,
                    turns: n,
                    concurrency: n,
                    concurrency_1000: n,
                    memory: n,
                    resume: n,
                    mcp: n,
                }
            }
            None => reps,
        }
    }

    /// Whether `measure` is selected.
    pub fn runs(&self, measure: Measure) -> bool {
        self.only.is_empty() || self.only.contains(&measure)
    }
}
