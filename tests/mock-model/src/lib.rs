//! A scripted mock model server for tests and benchmarks.
//!
//! [`MockModel::start`] binds a real HTTP server on `127.0.0.1` (random port). Each model request
//! (`POST …/responses` or `POST …/chat/completions`) takes the next [`Script`] from a queue:
//! a streamed reply built with [`Reply`] (rendered for either wire API, pre-rendered to bytes so
//! a 10,000-delta reply costs one write) or an HTTP error from [`Script::http_error`]. Every
//! request is recorded ([`RecordedRequest`]); tests wait on events ([`MockModel::wait_for_requests`],
//! [`MockModel::wait_for_disconnect`], [`Gate::wait_reached`]), never on sleeps.
//!
//! With an empty queue the mock answers 500 `no scripted response …` so a test fails visibly.
//! A request whose tool calls and outputs do not pair up gets 400, as from the real APIs
//! (switch off with [`MockModel::set_check_tool_pairing`]). `GET …/models` lists
//! [`MockModel::set_models`]. [`MockModel::set_strict_alternation`] makes Chat requests follow a
//! strict chat template (`alternation.rs`).
//!
//! Layout: `script.rs` (scripts, steps, gates), `reply.rs` (the reply builder), `render.rs`
//! (SSE rendering for both wire APIs), `request.rs` (recorded requests), `server.rs` (HTTP).

mod alternation;
mod render;
mod reply;
mod request;
mod script;
mod server;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;

pub use alternation::{ALTERNATION_ERROR, Alternation, NO_SYSTEM_ERROR};
pub use reply::{Reasoning, Reply, Usage, split_even};
pub use request::RecordedRequest;
pub use script::{Gate, Script, Step, WireApi};

/// A running mock model server. Dropping it stops accepting connections and ends held streams.
#[derive(Debug)]
pub struct MockModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

/// State shared between the handle and the server.
#[derive(Debug)]
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Bumped after every state change; waiters re-check their condition.
    version: watch::Sender<u64>,
    /// Set when the mock is dropped: held and stalled streams end.
    pub(crate) shutdown: watch::Sender<bool>,
}

#[derive(Debug)]
pub(crate) struct State {
    pub(crate) scripts: VecDeque<Script>,
    /// Model requests (the ones that take a script).
    pub(crate) requests: Vec<RecordedRequest>,
    /// Every request, model requests included.
    pub(crate) all_requests: Vec<RecordedRequest>,
    pub(crate) models: Vec<String>,
    pub(crate) check_tool_pairing: bool,
    /// A strict chat template for Chat Completions requests (off by default).
    pub(crate) strict_alternation: Option<Alternation>,
    /// Streams the client closed before the mock finished sending them.
    pub(crate) disconnects: usize,
    /// Streams sent to their end.
    pub(crate) finished_streams: usize,
    /// Replies served to every matching request without touching the queue
    /// ([`MockModel::set_standing_reply`]).
    pub(crate) standing: Vec<StandingReply>,
    /// Replies each served once, to the first request its matcher accepts
    /// ([`MockModel::push_when`]).
    pub(crate) matched: Vec<StandingReply>,
}

/// Which model requests a reply is for ([`MockModel::push_when`],
/// [`MockModel::set_standing_reply`]): any `Fn(&RecordedRequest) -> bool` that can be shared.
pub trait Matcher: Fn(&RecordedRequest) -> bool + Send + Sync + 'static {}

impl<F: Fn(&RecordedRequest) -> bool + Send + Sync + 'static> Matcher for F {}

/// A reply served to every model request `matches` accepts, before the queue is looked at.
#[derive(Clone)]
pub(crate) struct StandingReply {
    pub(crate) matches: Arc<dyn Fn(&RecordedRequest) -> bool + Send + Sync>,
    pub(crate) script: Script,
}

impl StandingReply {
    fn new(matches: impl Matcher, script: Script) -> Self {
        StandingReply {
            matches: Arc::new(matches),
            script,
        }
    }
}

impl std::fmt::Debug for StandingReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandingReply")
            .field("script", &self.script)
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the state half-updated in a way that
        // matters to a test, so a poisoned lock is still usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Apply `change` and wake every waiter.
    pub(crate) fn update<R>(&self, change: impl FnOnce(&mut State) -> R) -> R {
        let result = change(&mut self.lock());
        self.version.send_modify(|version| *version += 1);
        result
    }
}

impl MockModel {
    /// Bind `127.0.0.1:0` and start serving.
    pub async fn start() -> anyhow::Result<MockModel> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                scripts: VecDeque::new(),
                requests: Vec::new(),
                all_requests: Vec::new(),
                models: vec!["mock-model".to_string()],
                check_tool_pairing: true,
                strict_alternation: None,
                disconnects: 0,
                finished_streams: 0,
                standing: Vec::new(),
                matched: Vec::new(),
            }),
            version: watch::Sender::new(0),
            shutdown: watch::Sender::new(false),
        });
        let (addr, server) = server::spawn(shared.clone()).await?;
        Ok(MockModel {
            addr,
            shared,
            server,
        })
    }

    /// `http://127.0.0.1:PORT/v1`, the provider `base_url` to use.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queue a script; scripts are served in order, one per model request.
    pub fn push(&self, script: Script) {
        self.shared.update(|state| state.scripts.push_back(script));
    }

    /// Queue several scripts.
    pub fn push_all(&self, scripts: impl IntoIterator<Item = Script>) {
        self.shared.update(|state| state.scripts.extend(scripts));
    }

    /// Queue `script` for the first model request `matches` accepts (before the plain
    /// queue): how a test scripts several threads at once, e.g. a parent and its sub-agents,
    /// told apart by their requests. Scripts with the same matcher are served in push order.
    pub fn push_when(&self, matches: impl Matcher, script: Script) {
        let reply = StandingReply::new(matches, script);
        self.shared.update(|state| state.matched.push(reply));
    }

    /// Answer every model request that `matches` accepts with `script`, now and later, without
    /// taking a script from the queue (checked in the order added, before the queue). For
    /// requests a client makes on the side at a time the test does not control, such as the
    /// Codex TUI's thread-title request. Such requests are recorded in
    /// [`MockModel::all_requests`] only, not in [`MockModel::requests`], so the queue's
    /// requests keep their order and count.
    pub fn set_standing_reply(&self, matches: impl Matcher, script: Script) {
        let reply = StandingReply::new(matches, script);
        self.shared.update(|state| state.standing.push(reply));
    }

    /// Scripts not served yet.
    pub fn remaining_scripts(&self) -> usize {
        self.shared.lock().scripts.len()
    }

    /// The model list served at `GET …/models` (default `["mock-model"]`).
    pub fn set_models<I, S>(&self, models: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let models = models.into_iter().map(Into::into).collect();
        self.shared.update(|state| state.models = models);
    }

    /// Whether model requests with unpaired tool calls/outputs get 400 (default true).
    pub fn set_check_tool_pairing(&self, on: bool) {
        self.shared.update(|state| state.check_tool_pairing = on);
    }

    /// Enforce a chat template's roles on Chat Completions requests (`None`, the default,
    /// accepts any order): a request that breaks it gets `400` with the template's error, as
    /// from llama.cpp, and takes no script.
    pub fn set_strict_alternation(&self, mode: Option<Alternation>) {
        self.shared.update(|state| state.strict_alternation = mode);
    }

    /// Model requests (`POST …/responses`, `POST …/chat/completions`) in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// The one model request received so far.
    ///
    /// # Panics
    /// If there was not exactly one (a test assertion).
    pub fn single_request(&self) -> RecordedRequest {
        let requests = self.requests();
        match <[RecordedRequest; 1]>::try_from(requests) {
            Ok([request]) => request,
            Err(requests) => panic!("expected exactly one model request, got {}", requests.len()),
        }
    }

    /// The last model request.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.shared.lock().requests.last().cloned()
    }

    /// Every request (model requests, `GET …/models`, unknown paths) in arrival order.
    pub fn all_requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().all_requests.clone()
    }

    /// Wait until at least `n` model requests arrived; returns them all.
    pub async fn wait_for_requests(
        &self,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<RecordedRequest>> {
        self.wait_until(timeout, |state| state.requests.len() >= n)
            .await
            .map_err(|got| {
                anyhow::anyhow!(
                    "timed out after {timeout:?} waiting for {n} model requests (got {})",
                    got.requests
                )
            })?;
        Ok(self.requests())
    }

    /// Wait until a model request matching `pred` was seen; returns it.
    pub async fn wait_for_request(
        &self,
        what: &str,
        pred: impl Fn(&RecordedRequest) -> bool,
        timeout: Duration,
    ) -> anyhow::Result<RecordedRequest> {
        self.wait_until(timeout, |state| state.requests.iter().any(&pred))
            .await
            .map_err(|_| anyhow::anyhow!("timed out after {timeout:?} waiting for {what}"))?;
        self.requests()
            .into_iter()
            .find(|request| pred(request))
            .ok_or_else(|| anyhow::anyhow!("{what} was seen but is gone"))
    }

    /// Wait until the client closed a streamed response before the mock finished sending it
    /// (at least once since start).
    pub async fn wait_for_disconnect(&self, timeout: Duration) -> anyhow::Result<()> {
        self.wait_for_disconnects(1, timeout).await
    }

    /// Wait until clients closed `n` streamed responses early (counted since start).
    pub async fn wait_for_disconnects(&self, n: usize, timeout: Duration) -> anyhow::Result<()> {
        self.wait_until(timeout, |state| state.disconnects >= n)
            .await
            .map_err(|got| {
                anyhow::anyhow!(
                    "timed out after {timeout:?} waiting for {n} client disconnects (got {})",
                    got.disconnects
                )
            })
    }

    /// Streams the client closed early so far.
    pub fn disconnects(&self) -> usize {
        self.shared.lock().disconnects
    }

    /// Streams sent completely so far.
    pub fn finished_streams(&self) -> usize {
        self.shared.lock().finished_streams
    }

    /// Wait for `done(state)`; on timeout, return a summary of the state for the message.
    async fn wait_until(
        &self,
        timeout: Duration,
        done: impl Fn(&State) -> bool,
    ) -> Result<(), Counts> {
        let mut rx = self.shared.version.subscribe();
        let wait = rx.wait_for(|_| done(&self.shared.lock()));
        match tokio::time::timeout(timeout, wait).await {
            Ok(Ok(_)) => Ok(()),
            _ => {
                let state = self.shared.lock();
                Err(Counts {
                    requests: state.requests.len(),
                    disconnects: state.disconnects,
                })
            }
        }
    }
}

/// Counters reported when a wait times out.
struct Counts {
    requests: usize,
    disconnects: usize,
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.shared.shutdown.send_replace(true);
        self.server.abort();
    }
}
