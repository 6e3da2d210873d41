//! A search session: one walk of its roots (a thread of its own) feeding an index, and one
//! matcher thread that ranks the index against the latest query as it grows.
//!
//! A new query cancels the ranking of the old one between two chunks of paths (so a keystroke
//! never waits for the previous query's work) and starts over on what is indexed; the walk goes
//! on. The matcher reports a snapshot of the best matches when they change (at most one each
//! [`TICK`] while the walk runs), and completion once the walk is done and every indexed path
//! is ranked against the latest query. Dropping the session stops both threads.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nucleo_matcher::Matcher;
use parking_lot::{Condvar, Mutex, RwLock};

use super::score::{self, Query, Scored};
use super::{Entry, FileMatch, Snapshot, walk};
use crate::config::FileSearchConfig;

/// The shortest time between two snapshots of one query while the walk runs.
const TICK: Duration = Duration::from_millis(10);
/// Paths ranked between two looks at the latest query.
const CHUNK: usize = 8192;
/// Below this many paths a chunk is ranked on one thread.
const PARALLEL_MIN: usize = 2048;

/// Receives a session's snapshots and completions (called from the matcher thread).
pub trait Reporter: Send + Sync + 'static {
    /// The best matches of the latest query changed.
    fn update(&self, snapshot: Snapshot);
    /// Every indexed path is ranked against `query`, the latest query, and the walk is done.
    fn complete(&self, query: &str);
}

/// A running session (docs/protocol.md §7.33).
pub struct Session {
    shared: Arc<Shared>,
}

/// What the walk, the matcher and the owner share.
pub(super) struct Shared {
    pub(super) roots: Vec<PathBuf>,
    pub(super) config: FileSearchConfig,
    pub(super) stopped: AtomicBool,
    entries: RwLock<Vec<Entry>>,
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    /// The latest query and its generation (0: none submitted yet).
    query: String,
    generation: u64,
    indexed: usize,
    walk_done: bool,
    walk_complete: bool,
}

impl Shared {
    pub(super) fn add_entries(&self, batch: &mut Vec<Entry>) {
        if batch.is_empty() {
            return;
        }
        let indexed = {
            let mut entries = self.entries.write();
            entries.append(batch);
            entries.len()
        };
        self.state.lock().indexed = indexed;
        self.wake.notify_all();
    }

    pub(super) fn walk_finished(&self, complete: bool) {
        let mut state = self.state.lock();
        state.walk_done = true;
        state.walk_complete = complete;
        drop(state);
        self.wake.notify_all();
    }
}

impl Session {
    /// Starts walking `roots` (absolute paths; others are skipped, as are roots that are not
    /// directories). Fails, as the reference does, when there are no roots at all.
    pub fn start(
        roots: Vec<PathBuf>,
        config: FileSearchConfig,
        reporter: Arc<dyn Reporter>,
    ) -> Result<Session, String> {
        if roots.is_empty() {
            return Err("at least one search directory is required".to_owned());
        }
        let roots = roots
            .into_iter()
            .filter(|root| root.is_absolute())
            .collect();
        let shared = Arc::new(Shared {
            roots,
            config,
            stopped: AtomicBool::new(false),
            entries: RwLock::new(Vec::new()),
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let walker = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("file-search-walk".into())
            .spawn(move || walk::walk(&walker))
            .map_err(|err| format!("cannot start the walk: {err}"))?;
        let matcher = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("file-search-match".into())
            .spawn(move || match_loop(&matcher, reporter.as_ref()))
            .map_err(|err| format!("cannot start the matcher: {err}"))?;
        Ok(Session { shared })
    }

    /// Makes `query` the latest query: the old one's ranking stops at its next chunk.
    pub fn update_query(&self, query: &str) {
        let mut state = self.shared.state.lock();
        state.query.clear();
        state.query.push_str(query);
        state.generation += 1;
        drop(state);
        self.shared.wake.notify_all();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::Relaxed);
        self.shared.wake.notify_all();
    }
}

/// A candidate in the best-N: better is a higher score, then a shorter path, then the one
/// found first (the matcher's own order, which the reference cuts its results from).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Candidate {
    scored: Scored,
    len: u32,
    index: usize,
}

impl Ord for Candidate {
    /// Greater is worse, so a max-heap keeps the worst of the best on top.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        other
            .scored
            .score
            .cmp(&self.scored.score)
            .then(self.len.cmp(&other.len))
            .then(self.index.cmp(&other.index))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

/// The ranking of one query.
struct Run {
    generation: u64,
    text: String,
    query: Query,
    ranked: usize,
    best: BinaryHeap<Candidate>,
    changed: bool,
    reported: Option<Instant>,
    completed: bool,
}

fn match_loop(shared: &Shared, reporter: &dyn Reporter) {
    let threads = shared.config.threads.max(1);
    let mut matchers: Vec<(Matcher, Vec<char>)> = (0..threads)
        .map(|_| (score::new_matcher(), Vec::new()))
        .collect();
    let mut run: Option<Run> = None;
    loop {
        let (generation, text, indexed, walk_done, walk_complete) = {
            let mut state = shared.state.lock();
            loop {
                if shared.stopped.load(Ordering::Relaxed) {
                    return;
                }
                let pending_report = run.as_ref().and_then(|run| {
                    run.changed.then(|| {
                        run.reported
                            .map_or(Duration::ZERO, |at| TICK.saturating_sub(at.elapsed()))
                    })
                });
                let work = state.generation > 0
                    && run.as_ref().is_none_or(|run| {
                        run.generation != state.generation
                            || run.ranked < state.indexed
                            || (state.walk_done && !run.completed)
                    });
                if work || pending_report == Some(Duration::ZERO) {
                    break;
                }
                match pending_report {
                    Some(wait) => {
                        shared.wake.wait_for(&mut state, wait);
                    }
                    None => shared.wake.wait(&mut state),
                }
            }
            (
                state.generation,
                (run.as_ref()
                    .is_none_or(|run| run.generation != state.generation))
                .then(|| state.query.clone()),
                state.indexed,
                state.walk_done,
                state.walk_complete,
            )
        };
        if let Some(text) = text {
            run = Some(Run {
                generation,
                query: Query::new(&text),
                text,
                ranked: 0,
                best: BinaryHeap::new(),
                changed: true,
                reported: None,
                completed: false,
            });
        }
        let Some(current) = run.as_mut() else {
            continue;
        };
        if current.query.is_empty() {
            current.ranked = indexed;
        }
        while current.ranked < indexed {
            if shared.stopped.load(Ordering::Relaxed)
                || shared.state.lock().generation != current.generation
            {
                break;
            }
            let end = indexed.min(current.ranked + CHUNK);
            rank_chunk(shared, current, end, &mut matchers);
        }
        let caught_up = current.ranked >= indexed;
        let due = current.reported.is_none_or(|at| at.elapsed() >= TICK);
        if current.changed && (due || (caught_up && walk_done)) {
            let snapshot = snapshot(shared, current, walk_complete, &mut matchers[0]);
            current.changed = false;
            current.reported = Some(Instant::now());
            reporter.update(snapshot);
        }
        if caught_up && walk_done && !current.changed && !current.completed {
            current.completed = true;
            reporter.complete(&current.text);
        }
    }
}

/// Ranks the indexed paths `[run.ranked, end)` into `run.best`.
fn rank_chunk(shared: &Shared, run: &mut Run, end: usize, matchers: &mut [(Matcher, Vec<char>)]) {
    let entries = shared.entries.read();
    let start = run.ranked;
    let chunk = &entries[start..end];
    let found: Vec<Candidate> = if chunk.len() < PARALLEL_MIN || matchers.len() == 1 {
        rank(&run.query, chunk, start, &mut matchers[0])
    } else {
        let per = chunk.len().div_ceil(matchers.len());
        let query = &run.query;
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .chunks(per)
                .zip(matchers.iter_mut())
                .enumerate()
                .map(|(part, (slice, matcher))| {
                    scope.spawn(move || rank(query, slice, start + part * per, matcher))
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|handle| handle.join().unwrap_or_default())
                .collect()
        })
    };
    drop(entries);
    let limit = shared.config.max_results.max(1);
    for candidate in found {
        if run.best.len() < limit {
            run.best.push(candidate);
            run.changed = true;
        } else if run.best.peek().is_some_and(|worst| candidate < *worst) {
            run.best.pop();
            run.best.push(candidate);
            run.changed = true;
        }
    }
    run.ranked = end;
}

fn rank(
    query: &Query,
    entries: &[Entry],
    first_index: usize,
    (matcher, buf): &mut (Matcher, Vec<char>),
) -> Vec<Candidate> {
    entries
        .iter()
        .enumerate()
        .filter_map(|(offset, entry)| {
            let scored = query.score(&entry.path, entry.match_type, matcher, buf)?;
            Some(Candidate {
                scored,
                len: u32::try_from(entry.path.chars().count()).unwrap_or(u32::MAX),
                index: first_index + offset,
            })
        })
        .collect()
}

/// The best matches of `run` as the reference answers them: highest score first, then by
/// path.
fn snapshot(
    shared: &Shared,
    run: &Run,
    walk_complete: bool,
    (matcher, buf): &mut (Matcher, Vec<char>),
) -> Snapshot {
    let entries = shared.entries.read();
    let mut matches: Vec<FileMatch> = run
        .best
        .iter()
        .filter_map(|candidate| {
            let entry = entries.get(candidate.index)?;
            let root = shared.roots.get(entry.root as usize)?;
            Some(FileMatch {
                root: root.clone(),
                path: entry.path.to_string(),
                match_type: entry.match_type,
                score: candidate.scored.score,
                indices: run.query.indices(
                    &entry.path,
                    entry.name_start as usize,
                    candidate.scored,
                    matcher,
                    buf,
                ),
            })
        })
        .collect();
    matches.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
    Snapshot {
        query: run.text.clone(),
        matches,
        scanned: entries.len(),
        walk_complete,
    }
}
