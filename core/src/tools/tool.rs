//! The [`Tool`] trait and the per-turn [`ToolSet`] (docs/architecture.md §8.1).
//!
//! Every tool the model can call — a built-in, the MCP servers' tools, the client-defined
//! tools, the multi-agent namespace, the goal tools, `request_user_input` — is one type
//! implementing [`Tool`]: it states its definitions, which calls are its, whether it mutates
//! the environment, whether it runs beside other calls, and how a call runs. The turn builds
//! its [`ToolSet`] once ([`super::runtime::ToolRuntime::tool_set`]) from what it offers; the set
//! is what the model is shown and what serves its calls.
//!
//! **Which tool serves a call**: a call without a namespace naming one of Weft's own tools
//! (a *reserved* name) is that tool's, or nobody's (`request_user_input` when it is not offered);
//! otherwise the families claim it in order (the multi-agent namespaces, the MCP servers, the
//! client-defined tools), and a built-in of that name serves what no family claims. A call no
//! tool claims is answered `unsupported call: <name>` (`unsupported custom tool call: <name>`).
//!
//! **Concurrency**: a [`Concurrency::Parallel`] call shares the thread's call lock, an
//! [`Concurrency::Exclusive`] one takes it alone: it waits until every other call of the thread
//! is done, and others wait for it. An interrupt while a call waits for the lock answers
//! [`Tool::aborted`]. Every output is truncated to 1.2 × the model's output budget before it
//! enters history (docs/architecture.md §8.5).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::future::BoxFuture;
use serde_json::Value;

use super::context::{ToolCall, ToolInput, ToolTurn};
use crate::exec::{DEFAULT_MAX_OUTPUT_TOKENS, TruncationPolicy, truncate_output};
use crate::model::{ContentItem, ResponseItem, ToolOutput};

/// Outputs are cut to this many tokens before they enter history (docs/architecture.md §8.5:
/// the model's budget × 1.2).
pub fn history_truncation() -> TruncationPolicy {
    TruncationPolicy::Tokens(DEFAULT_MAX_OUTPUT_TOKENS).scaled(1.2)
}

/// What a tool's calls may do: change the environment or not, and
/// run beside other calls or alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effects {
    /// Whether a call may change the environment (files, processes, the world outside).
    pub mutates: bool,
    /// Whether a call runs beside the thread's other calls.
    pub concurrency: Concurrency,
}

/// Whether a call runs beside the thread's other calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    /// Beside every other parallel call.
    Parallel,
    /// Alone: after every other call of the thread, and before the next.
    Exclusive,
}

/// A tool that is one async function and holds nothing of its own: its name, its one
/// definition, what its calls may do, and the text a call answers (from the call's id and
/// arguments).
pub(crate) struct FunctionTool {
    pub name: &'static str,
    pub spec: fn() -> Value,
    pub effects: Effects,
    pub run: for<'a> fn(&'a str, &'a str, &'a ToolTurn) -> BoxFuture<'a, String>,
}

#[async_trait]
impl Tool for FunctionTool {
    fn name(&self) -> &str {
        self.name
    }

    fn specs(&self) -> Vec<Value> {
        vec![(self.spec)()]
    }

    fn effects(&self) -> Effects {
        self.effects
    }

    async fn call(&self, call: &ToolCall, turn: &ToolTurn) -> ToolOutput {
        ToolOutput::Text((self.run)(&call.call_id, call.arguments(), turn).await)
    }
}

/// What the model is told of a call the user interrupted `elapsed` after it began.
pub(crate) fn aborted_by_user(elapsed: Duration) -> String {
    format!(
        "aborted by user after {:.1}s",
        elapsed.as_secs_f64().max(0.1)
    )
}

/// One tool (or one family of tools sharing a context) the model may call. `call` is an
/// `async fn` made object-safe by `async_trait` (the set holds `Arc<dyn Tool>`).
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by (for a family, the family's name).
    fn name(&self) -> &str;

    /// The definitions the model is shown (Responses API format); empty for a tool the turn
    /// serves without offering it.
    fn specs(&self) -> Vec<Value>;

    /// Whether `call` is this tool's: by default a function call of [`Tool::name`], whatever
    /// namespace the model gave.
    fn claims(&self, call: &ToolCall) -> bool {
        call.name == self.name() && call.is_function()
    }

    /// What a call may do to the environment and whether it runs beside other calls.
    fn effects(&self) -> Effects;

    /// Whether this call may change the environment: [`Effects::mutates`] unless the tool
    /// can tell from the call that it only reads (a known read-only command). A mutating
    /// call waits for the turn's ghost snapshot first (docs/architecture.md §5.5).
    fn mutates(&self, call: &ToolCall) -> bool {
        let _ = call;
        self.effects().mutates
    }

    /// What the model gets for a call interrupted before it started (docs/architecture.md §8.6).
    fn aborted(&self, elapsed: Duration) -> String {
        aborted_by_user(elapsed)
    }

    /// Run one call this tool claims; the output is what the model gets (before truncation).
    async fn call(&self, call: &ToolCall, turn: &ToolTurn) -> ToolOutput;
}

/// The thread's call lock: parallel calls share it, exclusive ones take it alone.
pub type CallLock = tokio::sync::RwLock<()>;

/// Holds the call lock (shared or exclusive).
enum CallGuard<'a> {
    Shared(#[allow(dead_code)] tokio::sync::RwLockReadGuard<'a, ()>),
    Exclusive(#[allow(dead_code)] tokio::sync::RwLockWriteGuard<'a, ()>),
}

/// The tools of one turn: built once when the turn starts, in the order the model is shown them.
pub struct ToolSet {
    /// Every tool, in offer order.
    tools: Vec<Arc<dyn Tool>>,
    /// The built-ins by name.
    builtins: HashMap<String, Arc<dyn Tool>>,
    /// The families that claim calls by namespace, in claiming order.
    families: Vec<Arc<dyn Tool>>,
    /// Names a call without a namespace can only mean as Weft's own tool.
    reserved: HashSet<String>,
    /// The thread's call lock.
    lock: Arc<CallLock>,
}

impl ToolSet {
    /// An empty set whose calls take `lock`.
    pub fn new(lock: Arc<CallLock>) -> ToolSet {
        ToolSet {
            tools: Vec::new(),
            builtins: HashMap::new(),
            families: Vec::new(),
            reserved: HashSet::new(),
            lock,
        }
    }

    /// Add one of Weft's own tools, served by its name.
    pub fn builtin(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.name().to_string();
        self.reserved.insert(name.clone());
        self.builtins.insert(name, Arc::clone(&tool));
        self.tools.push(tool);
    }

    /// Add a family that claims its calls itself (after the families added before it).
    pub fn family(&mut self, tool: Arc<dyn Tool>) {
        self.families.push(Arc::clone(&tool));
        self.tools.push(tool);
    }

    /// Keep `name` for Weft's own tool even while the turn does not offer it.
    pub fn reserve(&mut self, name: &str) {
        self.reserved.insert(name.to_string());
    }

    /// The definitions the model is shown, in order.
    pub fn specs(&self) -> Vec<Value> {
        self.tools.iter().flat_map(|tool| tool.specs()).collect()
    }

    /// The tool serving `call`, if any (see the module docs).
    pub fn resolve(&self, call: &ToolCall) -> Option<&Arc<dyn Tool>> {
        let builtin = self
            .builtins
            .get(call.name.as_str())
            .filter(|tool| tool.claims(call));
        if call.namespace.is_none() && self.reserved.contains(&call.name) {
            return builtin;
        }
        self.families
            .iter()
            .find(|tool| tool.claims(call))
            .or(builtin)
    }

    /// Run one call and return the output item for the model.
    pub async fn handle(self: Arc<Self>, call: ToolCall, turn: ToolTurn) -> ResponseItem {
        let Some(tool) = self.resolve(&call) else {
            let text = match call.input {
                ToolInput::Function(_) => format!("unsupported call: {}", call.name),
                ToolInput::Custom(_) => format!("unsupported custom tool call: {}", call.name),
            };
            return call.output(truncate_output(&text, history_truncation()));
        };
        let started = Instant::now();
        // A mutating call passes the turn's ghost snapshot gate first (docs/architecture.md
        // §5.5); read-only calls never wait for it, nor do calls under a read-only sandbox (a
        // review's tools run so inside a turn that may have a snapshot).
        let read_only = matches!(turn.sandbox, weft_protocol::SandboxPolicy::ReadOnly { .. });
        let ghost = turn
            .ghost
            .clone()
            .filter(|_| !read_only && tool.mutates(&call));
        let ready = async {
            if let Some(ghost) = &ghost {
                ghost.gate().await;
            }
            self.lock_for(tool.effects().concurrency).await
        };
        let guard = tokio::select! {
            biased;
            () = turn.cancel.cancelled() => None,
            guard = ready => Some(guard),
        };
        let output = match guard {
            None => ToolOutput::Text(tool.aborted(started.elapsed())),
            Some(_guard) => tool.call(&call, &turn).await,
        };
        call.answer(truncated(output))
    }

    async fn lock_for(&self, concurrency: Concurrency) -> CallGuard<'_> {
        match concurrency {
            Concurrency::Parallel => CallGuard::Shared(self.lock.read().await),
            Concurrency::Exclusive => CallGuard::Exclusive(self.lock.write().await),
        }
    }
}

/// `output` with every text cut to [`history_truncation`].
fn truncated(output: ToolOutput) -> ToolOutput {
    match output {
        ToolOutput::Text(text) => ToolOutput::Text(truncate_output(&text, history_truncation())),
        ToolOutput::Content(parts) => ToolOutput::Content(
            parts
                .into_iter()
                .map(|part| match part {
                    ContentItem::InputText { text } => ContentItem::InputText {
                        text: truncate_output(&text, history_truncation()),
                    },
                    other => other,
                })
                .collect(),
        ),
    }
}
