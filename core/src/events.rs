//! What a thread reports: the core's own small event vocabulary. The app-server turns each
//! event into a notification for the thread's subscribers; the core never sees JSON-RPC.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use weft_protocol::server_requests::{
    CommandExecutionRequestApprovalParams, FileChangeRequestApprovalParams,
    ToolRequestUserInputParams,
};
use weft_protocol::{
    DynamicToolCallParams, ThreadId, ThreadItem, ThreadStatus, ThreadTokenUsage, Turn, TurnError,
    TurnId, TurnPlanStep,
};

/// One thing that happened in a thread, in order.
#[derive(Debug, Clone)]
pub enum ThreadEvent {
    /// The thread's status changed.
    StatusChanged(ThreadStatus),
    /// A turn started (sent once per turn).
    TurnStarted(Turn),
    /// A turn reached a terminal state (the last event of the turn).
    TurnCompleted(Turn),
    /// An item started.
    ItemStarted {
        /// The turn it belongs to.
        turn_id: TurnId,
        /// The item as it starts.
        item: ThreadItem,
    },
    /// An item completed.
    ItemCompleted {
        /// The turn it belongs to.
        turn_id: TurnId,
        /// The item in its final state.
        item: ThreadItem,
    },
    /// Text appended to an agent message.
    AgentMessageDelta {
        /// The turn.
        turn_id: TurnId,
        /// The agent message item.
        item_id: String,
        /// The text.
        delta: String,
    },
    /// Text appended to a plan item (Plan mode's proposed plan, docs/protocol.md §7.25).
    PlanDelta {
        /// The turn.
        turn_id: TurnId,
        /// The plan item.
        item_id: String,
        /// The text.
        delta: String,
    },
    /// Text appended to a reasoning summary part.
    ReasoningSummaryTextDelta {
        /// The turn.
        turn_id: TurnId,
        /// The reasoning item.
        item_id: String,
        /// The text.
        delta: String,
        /// Which summary part.
        summary_index: i64,
    },
    /// A new reasoning summary part began.
    ReasoningSummaryPartAdded {
        /// The turn.
        turn_id: TurnId,
        /// The reasoning item.
        item_id: String,
        /// The new part's index.
        summary_index: i64,
    },
    /// Raw reasoning text appended.
    ReasoningTextDelta {
        /// The turn.
        turn_id: TurnId,
        /// The reasoning item.
        item_id: String,
        /// The text.
        delta: String,
        /// Which content block.
        content_index: i64,
    },
    /// Output of a running command (`item/commandExecution/outputDelta`).
    CommandOutputDelta {
        /// The turn.
        turn_id: TurnId,
        /// The `commandExecution` item.
        item_id: String,
        /// The text (stdout and stderr interleaved).
        delta: String,
    },
    /// The turn's aggregate diff after a patch was applied (`turn/diff/updated`).
    TurnDiffUpdated {
        /// The turn.
        turn_id: TurnId,
        /// The whole turn's git-style diff so far.
        diff: String,
    },
    /// The agent's plan changed (`turn/plan/updated`).
    PlanUpdated {
        /// The turn.
        turn_id: TurnId,
        /// Why the plan changed.
        explanation: Option<String>,
        /// The plan.
        plan: Vec<TurnPlanStep>,
    },
    /// Token usage after a model response.
    TokenUsage {
        /// The turn.
        turn_id: TurnId,
        /// Totals and the last response.
        usage: ThreadTokenUsage,
    },
    /// An error in a turn (`will_retry` when the turn goes on).
    Error {
        /// The turn.
        turn_id: TurnId,
        /// What went wrong.
        error: TurnError,
        /// Whether Weft retries.
        will_retry: bool,
    },
    /// The thread's goal changed in a turn: a goal tool, or the turn's accounting
    /// (`thread/goal/updated`; docs/protocol.md §7.26).
    GoalUpdated {
        /// The turn that changed it (`None` when no turn did, e.g. a continuation that could
        /// not start because the budget is spent).
        turn_id: Option<TurnId>,
        /// The goal as stored now.
        goal: weft_protocol::ThreadGoal,
    },
    /// The thread's read state changed (a completed turn left it unread).
    ReadStateChanged(weft_protocol::ThreadReadState),
    /// A `turn/start` changed the thread's settings; emitted before its response
    /// (`thread/settings/updated`).
    SettingsChanged(Box<crate::settings::ThreadSettings>),
    /// The guardian started reviewing an approval question (`item/autoApprovalReview/started`,
    /// docs/protocol.md §9.8).
    GuardianReviewStarted(Box<weft_protocol::ItemGuardianApprovalReviewStartedNotification>),
    /// The guardian's review ended (`item/autoApprovalReview/completed`); recorded in the
    /// rollout.
    GuardianReviewCompleted(Box<weft_protocol::ItemGuardianApprovalReviewCompletedNotification>),
    /// A short message about a review for the user (`guardianWarning`).
    GuardianWarning {
        /// The text.
        message: String,
    },
    /// Something the user should know that is not an error of the turn.
    /// `item/mcpToolCall/progress`: progress of an MCP tool call.
    McpToolCallProgress {
        /// The turn.
        turn_id: TurnId,
        /// The `mcpToolCall` item.
        item_id: weft_protocol::ItemId,
        /// The progress message.
        message: String,
    },
    Warning {
        /// The turn, when the warning belongs to one.
        turn_id: Option<TurnId>,
        /// The text.
        message: String,
    },
}

/// A question for the thread's clients (approvals, dynamic tool calls).
#[derive(Debug, Clone)]
pub enum ServerRequestParams {
    /// `item/commandExecution/requestApproval`.
    CommandApproval(Box<CommandExecutionRequestApprovalParams>),
    /// `item/fileChange/requestApproval`.
    FileChangeApproval(FileChangeRequestApprovalParams),
    /// `item/tool/call`: run a client-defined tool (docs/protocol.md §9.6).
    DynamicToolCall(DynamicToolCallParams),
    /// `item/tool/requestUserInput` (the `request_user_input` tool).
    UserInput(ToolRequestUserInputParams),
    /// `mcpServer/elicitation/request`: approve an MCP tool call (docs/mcp.md §5).
    McpElicitation(Box<weft_protocol::McpServerElicitationRequestParams>),
}

/// How a server request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerRequestOutcome {
    /// A client answered with this result.
    Answered(serde_json::Value),
    /// A client answered with an error.
    Failed(String),
    /// Nobody can answer any more (no subscriber left).
    Cancelled,
}

/// Where a thread's events go. Implemented by the app-server (fan-out to subscribed
/// connections) and by tests. `emit` completes once the event is queued for every receiver,
/// so events are delivered in emission order.
pub trait EventSink: Send + Sync + 'static {
    /// Deliver one event of `thread`.
    fn emit<'a>(&'a self, thread: &'a ThreadId, event: ThreadEvent) -> BoxFuture<'a, ()>;

    /// Ask the thread's subscribers; the first answer wins. Dropping the future withdraws the
    /// request (the clients are told it was resolved).
    fn request<'a>(
        &'a self,
        thread: &'a ThreadId,
        params: ServerRequestParams,
    ) -> BoxFuture<'a, ServerRequestOutcome>;

    /// The thread whose events come here is now loaded: the thread manager calls this once,
    /// with the sink it was handed, just before anyone else can reach the thread (its unload is
    /// told to the manager's `Subscribers`, docs/architecture.md §2.1). A sink that is a
    /// registry's entry (the app-server's subscriber list) registers itself here; others need
    /// nothing.
    fn loaded(self: Arc<Self>, _thread: &ThreadId) {}
}

/// A shared sink.
pub type SharedSink = Arc<dyn EventSink>;

/// A sink that only watches: every event goes into the channel (and is dropped once the
/// receiver is gone), every request is cancelled, as nobody behind it can answer. An
/// embedder's or a test's sink; [`ChannelSink::null`] has nobody behind it at all (a thread
/// loaded while the daemon shuts down).
pub struct ChannelSink(pub mpsc::UnboundedSender<ThreadEvent>);

impl ChannelSink {
    /// A sink whose events are all dropped.
    pub fn null() -> ChannelSink {
        ChannelSink(mpsc::unbounded_channel().0)
    }
}

impl EventSink for ChannelSink {
    fn emit<'a>(&'a self, _thread: &'a ThreadId, event: ThreadEvent) -> BoxFuture<'a, ()> {
        // A receiver that is gone wants nothing more.
        let _ = self.0.send(event);
        Box::pin(std::future::ready(()))
    }

    fn request<'a>(
        &'a self,
        _thread: &'a ThreadId,
        _params: ServerRequestParams,
    ) -> BoxFuture<'a, ServerRequestOutcome> {
        Box::pin(std::future::ready(ServerRequestOutcome::Cancelled))
    }
}

/// The answer to a request, delivered by the thread's actor *before* it emits anything that
/// follows from the request (so a `turn/start` response always precedes `turn/started`).
pub struct Reply<T>(Box<dyn FnOnce(T) -> BoxFuture<'static, ()> + Send>);

impl<T: Send + 'static> Reply<T> {
    /// Wrap an async callback.
    pub fn new<F>(callback: F) -> Reply<T>
    where
        F: FnOnce(T) -> BoxFuture<'static, ()> + Send + 'static,
    {
        Reply(Box::new(callback))
    }

    /// A reply delivered through a oneshot channel (for callers that just want the value).
    pub fn channel() -> (Reply<T>, tokio::sync::oneshot::Receiver<T>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let reply = Reply::new(move |value| {
            let _ = tx.send(value);
            Box::pin(async {})
        });
        (reply, rx)
    }

    /// Deliver the answer and wait until it is queued.
    pub async fn send(self, value: T) {
        (self.0)(value).await;
    }
}

impl<T> std::fmt::Debug for Reply<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reply")
    }
}
