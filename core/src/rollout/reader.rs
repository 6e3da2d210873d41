//! Reading a rollout back: the tolerant line reader, the [`Replay`] of a thread, and the
//! records a fork copies.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use weft_protocol::{
    Thread, ThreadItemDetails, ThreadTokenUsage, Turn, TurnId, TurnItemsView, TurnStatus, UserInput,
};

use super::record::{RolloutLine, RolloutRecord, SessionMeta, TurnContextRecord};
use super::{HeaderProblem, RolloutError, TURN_ABORTED_MARKER};
use crate::model::{ContentItem, ResponseItem};
use crate::settings::ThreadSettings;

/// A thread rebuilt from its rollout.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The header.
    pub meta: SessionMeta,
    /// The model history to resume with, in order (from the last compaction on, when any).
    pub history: Vec<ResponseItem>,
    /// The turns with their completed items (`itemsView: full`), in start order: every turn
    /// when the whole file was read; the last one only when it was read through its index
    /// (`lean::replay_from_index`: the others stay on disk, docs/architecture.md §10.3).
    pub turns: Vec<Turn>,
    /// Unix seconds of the latest turn start, over every turn of the file.
    pub latest_turn_start: Option<i64>,
    /// The last recorded token usage.
    pub token_usage: Option<ThreadTokenUsage>,
    /// The last name set.
    pub name: Option<String>,
    /// A sub-agent closed by `close_agent` (its last `agent_closed` record).
    pub agent_closed: bool,
    /// The first user message's text (`""` when none).
    pub preview: String,
    /// Unix seconds of the newest record (at least `meta.created_at`).
    pub updated_at: i64,
    /// The context of the last turn started, when any: the thread's settings when it was last
    /// used.
    pub last_context: Option<TurnContextRecord>,
    /// Lines that could not be parsed and were skipped (a torn last line included).
    pub skipped_lines: usize,
}

impl Replay {
    /// The wire thread (status `notLoaded`, `turns: []`): settings from the last turn's
    /// context, else from the header.
    pub fn thread(&self, path: Option<&Path>) -> Thread {
        let meta = &self.meta;
        let (model, provider, cwd, effort) = match &self.last_context {
            Some(ctx) => (&ctx.model, &ctx.model_provider, &ctx.cwd, &ctx.effort),
            None => (
                &meta.model,
                &meta.model_provider,
                &meta.cwd,
                &meta.reasoning_effort,
            ),
        };
        Thread {
            forked_from_id: meta.forked_from_id.clone(),
            preview: self.preview.clone(),
            model_provider: provider.clone(),
            model: Some(model.clone()),
            reasoning_effort: effort.clone(),
            updated_at: self.updated_at,
            recency_at: Some(
                self.latest_turn_start
                    .map_or(meta.created_at, |at| at.max(meta.created_at)),
            ),
            path: path.map(|p| p.display().to_string()),
            cwd: cwd.clone(),
            cli_version: meta.cli_version.clone(),
            originator: meta.originator.clone(),
            thread_source: meta.thread_source.clone(),
            git_info: meta.git_info.clone(),
            name: self.name.clone(),
            ..crate::wire_thread::base(meta.id.clone(), meta.source.clone(), meta.created_at)
        }
    }

    /// The thread's settings as last used: the last turn's context over the header.
    pub fn settings(&self) -> ThreadSettings {
        let meta = &self.meta;
        let mut settings = ThreadSettings {
            model: meta.model.clone(),
            model_provider: meta.model_provider.clone(),
            cwd: PathBuf::from(&meta.cwd),
            approval_policy: meta.approval_policy,
            // Recorded with each turn (below).
            approvals_reviewer: weft_protocol::ApprovalsReviewer::User,
            sandbox: meta.sandbox_policy.clone(),
            base_instructions: meta.base_instructions.clone(),
            developer_instructions: meta.developer_instructions.clone(),
            reasoning_effort: meta.reasoning_effort.clone(),
            reasoning_summary: meta.reasoning_summary,
            dynamic_tools: meta.dynamic_tools.clone(),
            collaboration_mode: None,
            permission_profile: None,
        };
        if let Some(ctx) = &self.last_context {
            settings.model = ctx.model.clone();
            settings.model_provider = ctx.model_provider.clone();
            settings.cwd = PathBuf::from(&ctx.cwd);
            settings.approval_policy = ctx.approval_policy;
            settings.sandbox = ctx.sandbox_policy.clone();
            settings.reasoning_effort = ctx.effort.clone();
            settings.reasoning_summary = ctx.summary;
            settings.collaboration_mode = ctx.collaboration_mode.clone();
            settings.permission_profile = ctx.permission_profile.clone();
            settings.approvals_reviewer = ctx
                .approvals_reviewer
                .unwrap_or(weft_protocol::ApprovalsReviewer::User);
        }
        settings
    }

    /// Rebuild a thread from its lines (the first must be the header, as [`read_lines`]
    /// guarantees).
    pub fn from_lines(
        path: &Path,
        lines: Vec<RolloutLine>,
        skipped_lines: usize,
    ) -> Result<Replay, RolloutError> {
        let mut lines = lines.into_iter();
        let (header_ms, meta) = match lines.next() {
            Some(RolloutLine {
                ts,
                record: RolloutRecord::SessionMeta(meta),
            }) => (ts, *meta),
            _ => {
                return Err(RolloutError::BadHeader {
                    path: path.to_path_buf(),
                    problem: HeaderProblem::NotSessionMeta,
                });
            }
        };
        let mut builder = Builder::new(header_ms);
        for line in lines {
            builder.push(path, line);
        }
        Ok(builder.finish(meta, skipped_lines))
    }
}

/// Read and rebuild a rollout (blocking I/O; see [`load_rollout`] for async callers).
pub fn read_rollout(path: &Path) -> Result<Replay, RolloutError> {
    let (lines, skipped) = read_lines(path)?;
    Replay::from_lines(path, lines, skipped)
}

/// [`read_rollout`] on the blocking thread pool.
pub async fn load_rollout(path: &Path) -> Result<Replay, RolloutError> {
    let owned = path.to_path_buf();
    tokio::task::spawn_blocking(move || read_rollout(&owned))
        .await
        .map_err(|err| RolloutError::io(path, std::io::Error::other(err)))?
}

/// The first non-blank line of a rollout as its `session_meta` header, else
/// [`RolloutError::BadHeader`].
pub(super) fn parse_header(path: &Path, first: &[u8]) -> Result<RolloutLine, RolloutError> {
    let bad_header = |problem: HeaderProblem| RolloutError::BadHeader {
        path: path.to_path_buf(),
        problem,
    };
    if first.iter().all(u8::is_ascii_whitespace) {
        return Err(bad_header(HeaderProblem::Empty));
    }
    match serde_json::from_slice::<RolloutLine>(first) {
        Ok(line) if matches!(line.record, RolloutRecord::SessionMeta(_)) => Ok(line),
        Ok(_) => Err(bad_header(HeaderProblem::NotSessionMeta)),
        Err(err) => Err(bad_header(HeaderProblem::Parse(err))),
    }
}

/// Every parsable line of a rollout and the number of lines skipped. The first line returned
/// is always the `session_meta` header: a file without a parsable one is
/// [`RolloutError::BadHeader`]. A torn last line is skipped with a warning, and so is any
/// other line that does not parse.
pub fn read_lines(path: &Path) -> Result<(Vec<RolloutLine>, usize), RolloutError> {
    let data = std::fs::read(path).map_err(|e| RolloutError::io(path, e))?;
    let bad_header = |problem: HeaderProblem| RolloutError::BadHeader {
        path: path.to_path_buf(),
        problem,
    };
    let terminated = data.last() == Some(&b'\n');
    // (line number, bytes) of every non-blank line.
    let mut raw: Vec<(usize, &[u8])> = data
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
        .collect();
    let last_index = data.split(|b| *b == b'\n').count().saturating_sub(1);
    let Some((_, first)) = raw.first() else {
        return Err(bad_header(HeaderProblem::Empty));
    };
    let header = parse_header(path, first)?;
    let body = raw.split_off(1);
    let mut lines = Vec::with_capacity(body.len() + 1);
    lines.push(header);
    let mut skipped = 0;
    for (chunk_lines, errors) in parse_chunks(&body, data.len()) {
        lines.extend(chunk_lines);
        for (index, err) in errors {
            skipped += 1;
            if index == last_index && !terminated {
                tracing::warn!(path = %path.display(), line = index + 1, %err, "skipping a torn last line in a rollout");
            } else {
                tracing::warn!(path = %path.display(), line = index + 1, %err, "skipping an unparsable rollout line");
            }
        }
    }
    Ok((lines, skipped))
}

/// Files at least this big are parsed on several threads.
const PARALLEL_PARSE_BYTES: usize = 4 << 20;

/// The lines of a chunk, and its errors with their line numbers.
type ParsedChunk = (Vec<RolloutLine>, Vec<(usize, serde_json::Error)>);

/// Parse lines in order: one chunk per available core for a big file, one chunk otherwise.
fn parse_chunks(raw: &[(usize, &[u8])], bytes: usize) -> Vec<ParsedChunk> {
    let parse = |chunk: &[(usize, &[u8])]| -> ParsedChunk {
        let mut lines = Vec::with_capacity(chunk.len());
        let mut errors = Vec::new();
        for (index, line) in chunk {
            match serde_json::from_slice::<RolloutLine>(line) {
                Ok(line) => lines.push(line),
                Err(err) => errors.push((*index, err)),
            }
        }
        (lines, errors)
    };
    if bytes < PARALLEL_PARSE_BYTES {
        return vec![parse(raw)];
    }
    // Asked only for a big file: the answer is read from cgroup files each time (a fifth of a
    // rebuild of 100,000 small rollouts went there).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if threads < 2 || raw.len() < 2 * threads {
        return vec![parse(raw)];
    }
    let per_chunk = raw.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = raw
            .chunks(per_chunk)
            .map(|chunk| (chunk, scope.spawn(move || parse(chunk))))
            .collect();
        handles
            .into_iter()
            .map(|(chunk, handle)| handle.join().unwrap_or_else(|_| parse(chunk)))
            .collect()
    })
}

/// The history item of an interrupted turn.
pub(super) fn aborted_marker() -> ResponseItem {
    ResponseItem::user_message(vec![ContentItem::InputText {
        text: TURN_ABORTED_MARKER.to_string(),
    }])
}

struct OpenTurn {
    index: usize,
    started_ms: i64,
}

/// Folds lines into a [`Replay`] in one pass.
struct Builder {
    history: Vec<ResponseItem>,
    turns: Vec<Turn>,
    turn_index: HashMap<TurnId, usize>,
    open: Option<OpenTurn>,
    token_usage: Option<ThreadTokenUsage>,
    name: Option<String>,
    agent_closed: bool,
    preview: Option<String>,
    last_context: Option<TurnContextRecord>,
    /// Time of the latest line so far (ms).
    last_ms: i64,
    /// Newest time seen (ms).
    max_ms: i64,
}

impl Builder {
    fn new(header_ms: i64) -> Builder {
        Builder {
            history: Vec::new(),
            turns: Vec::new(),
            turn_index: HashMap::new(),
            open: None,
            token_usage: None,
            name: None,
            agent_closed: false,
            preview: None,
            last_context: None,
            last_ms: header_ms,
            max_ms: header_ms,
        }
    }

    fn push(&mut self, path: &Path, line: RolloutLine) {
        match line.record {
            RolloutRecord::SessionMeta(_) => {
                tracing::warn!(path = %path.display(), "ignoring a second session_meta in a rollout");
            }
            RolloutRecord::TurnStarted {
                turn_id,
                started_at,
                context,
            } => {
                // A turn still open here was cut by a crash; the thread was resumed since.
                self.close_open();
                let index = self.turns.len();
                self.turns.push(Turn {
                    items_view: TurnItemsView::Full,
                    ..Turn::in_progress(turn_id.clone(), Some(started_at))
                });
                self.turn_index.insert(turn_id, index);
                self.open = Some(OpenTurn {
                    index,
                    started_ms: line.ts,
                });
                self.last_context = Some(context);
            }
            RolloutRecord::ResponseItem(item) => self.history.push(item),
            RolloutRecord::ItemCompleted { turn_id, item } => {
                if self.preview.is_none()
                    && let ThreadItemDetails::UserMessage(message) = &item.details
                {
                    self.preview = message.content.iter().find_map(|part| match part {
                        UserInput::Text { text, .. } => Some(text.clone()),
                        _ => None,
                    });
                }
                match self.find_turn(&turn_id) {
                    Some(index) => self.turns[index].items.push(item),
                    None => {
                        tracing::warn!(path = %path.display(), %turn_id, "item of an unknown turn in a rollout; skipped");
                    }
                }
            }
            RolloutRecord::TurnEnded {
                turn_id,
                status,
                error,
                completed_at,
                duration_ms,
            } => match self.find_turn(&turn_id) {
                Some(index) => {
                    let turn = &mut self.turns[index];
                    turn.status = status;
                    turn.error = error;
                    turn.completed_at = Some(completed_at);
                    turn.duration_ms = duration_ms;
                    if self.open.as_ref().is_some_and(|o| o.index == index) {
                        self.open = None;
                    }
                }
                None => {
                    tracing::warn!(path = %path.display(), %turn_id, "end of an unknown turn in a rollout; skipped");
                }
            },
            RolloutRecord::TokenUsage(usage) => self.token_usage = Some(usage),
            RolloutRecord::ThreadNameSet { name } => self.name = Some(name),
            RolloutRecord::AgentClosed { closed } => self.agent_closed = closed,
            RolloutRecord::GhostSnapshot(_) => {}
            // A record of what the guardian decided; nothing of the thread to rebuild.
            RolloutRecord::GuardianReview(_) => {}
            RolloutRecord::Compacted {
                replacement_history,
                ..
            } => self.history = replacement_history,
        }
        self.last_ms = line.ts;
        self.max_ms = self.max_ms.max(line.ts);
    }

    fn find_turn(&self, turn_id: &TurnId) -> Option<usize> {
        if let Some(open) = &self.open
            && self.turns[open.index].id == *turn_id
        {
            return Some(open.index);
        }
        self.turn_index.get(turn_id).copied()
    }

    /// Close a turn the daemon never finished: `interrupted` as of the last record, with the
    /// interrupted-turn marker in history.
    fn close_open(&mut self) {
        let Some(open) = self.open.take() else {
            return;
        };
        let turn = &mut self.turns[open.index];
        turn.status = TurnStatus::Interrupted;
        turn.completed_at = Some(self.last_ms.div_euclid(1000));
        turn.duration_ms = Some((self.last_ms - open.started_ms).max(0));
        self.history.push(aborted_marker());
    }

    fn finish(mut self, meta: SessionMeta, skipped_lines: usize) -> Replay {
        self.close_open();
        Replay {
            updated_at: self.max_ms.div_euclid(1000).max(meta.created_at),
            meta,
            history: self.history,
            latest_turn_start: self.turns.iter().filter_map(|turn| turn.started_at).max(),
            turns: self.turns,
            token_usage: self.token_usage,
            name: self.name,
            agent_closed: self.agent_closed,
            preview: self.preview.unwrap_or_default(),
            last_context: self.last_context,
            skipped_lines,
        }
    }
}
