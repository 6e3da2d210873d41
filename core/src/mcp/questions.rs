//! A server's own questions (`elicitation/create`, docs/mcp.md §5, "A server's own
//! questions"): which request in flight asked, whose clients may see it, how many may be open,
//! and their end with the call that asked them.
//!
//! Every request Weft has in flight on a session that could make the server ask (tool calls,
//! resource reads) is registered here while it runs. A question is attributed to one call:
//!
//! 1. over streamable HTTP, by the response stream it came on (the server sent it as related
//!    to that request); a question on the stream of a request that is no call in flight here
//!    is answered `decline`;
//! 2. by a `_meta.progressToken` equal to the token of a call in flight (a server may echo
//!    the call's token);
//! 3. otherwise, only when every request in flight belongs to one thread: then to the newest
//!    call of that thread. With requests of several threads (or of no thread) in flight,
//!    nothing says who asked: the question is refused with a JSON-RPC error saying so, and
//!    every thread with a call in flight is warned. A question outside any call is declined.
//!
//! A call holds at most `[limits] max_mcp_questions_per_call` open questions; more are
//! declined (and the thread warned once). When the call ends, whatever it left open is
//! withdrawn from the clients (`serverRequest/resolved`) and answered `cancel`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use rmcp::model::{
    ElicitResult, ElicitationAction, ErrorCode, ErrorData, ProgressToken, RequestId,
};
use rmcp::service::{InboundStreamOrigin, RequestContext, RoleClient};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Asks the user: the request as JSON (`{mode, message, requestedSchema, _meta}`) in, the
/// answer as JSON (`{action, content, _meta}`) out.
pub type AskFn = Arc<dyn Fn(Value) -> BoxFuture<'static, Value> + Send + Sync>;

/// Tells the thread's clients something (a `warning`).
pub type WarnFn = Arc<dyn Fn(String) -> BoxFuture<'static, ()> + Send + Sync>;

/// Who a call's questions go to.
#[derive(Clone)]
pub struct Asker {
    /// The thread whose call it is: its questions go to this thread's clients only.
    pub thread: String,
    /// Asks the thread's clients.
    pub ask: AskFn,
    /// Warns the thread's clients.
    pub warn: WarnFn,
}

/// Told to the server (and, through its tool's error, to the model) when a question cannot
/// be attributed.
pub const AMBIGUOUS: &str = "Weft cannot tell which tool call asked this question: calls of \
     more than one thread are in flight on this MCP server, and the request names none of them \
     (no related request, no matching _meta.progressToken), so it is not shown to anyone";

/// What one call in flight (or another request) has to do with questions.
struct InFlight {
    /// Its clients; `None` for a request nobody can answer for (a resource read, a call
    /// made by a client method).
    asker: Option<Asker>,
    /// The JSON-RPC id and progress token of its request, once sent.
    sent: Mutex<Option<(RequestId, ProgressToken)>>,
    /// Cancelled when it ends: its open questions are withdrawn.
    ended: CancellationToken,
    /// Questions open now.
    open: AtomicUsize,
    /// Woken when the last open question is over.
    idle: tokio::sync::Notify,
    /// Whether the thread was told that questions were declined for the limit.
    warned: AtomicBool,
    id: u64,
}

/// The requests in flight on one session, for attributing the server's questions.
pub(super) struct Questions {
    server: String,
    max_open: usize,
    next: AtomicU64,
    in_flight: Mutex<Vec<Arc<InFlight>>>,
}

/// Where a question goes.
enum Attribution {
    /// To this call's clients.
    Call(Arc<InFlight>),
    /// Nobody asked it (or nobody can answer): declined.
    Outside,
    /// Requests of several threads are in flight and nothing says which asked: these are
    /// the callers to warn.
    Ambiguous(Vec<Asker>),
}

impl Questions {
    /// No requests in flight; `max_open` questions per call.
    pub(super) fn new(server: &str, max_open: usize) -> Questions {
        Questions {
            server: server.to_string(),
            max_open,
            next: AtomicU64::new(0),
            in_flight: Mutex::new(Vec::new()),
        }
    }

    /// A request starts (before it is sent); dropping the guard ends it.
    pub(super) fn begin(&self, asker: Option<Asker>) -> InFlightGuard<'_> {
        let entry = Arc::new(InFlight {
            asker,
            sent: Mutex::new(None),
            ended: CancellationToken::new(),
            open: AtomicUsize::new(0),
            idle: tokio::sync::Notify::new(),
            warned: AtomicBool::new(false),
            id: self.next.fetch_add(1, Ordering::Relaxed),
        });
        self.in_flight.lock().push(Arc::clone(&entry));
        InFlightGuard {
            questions: self,
            entry,
        }
    }

    /// The server's `elicitation/create` (`request` as JSON), answered.
    pub(super) async fn ask(
        &self,
        request: Value,
        context: &RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let token = context.meta.get_progress_token().or_else(|| {
            request
                .pointer("/_meta/progressToken")
                .and_then(|token| serde_json::from_value(token.clone()).ok())
        });
        let attribution = self.attribute(
            context.extensions.get::<InboundStreamOrigin>(),
            token.as_ref(),
        );
        let call = match attribution {
            Attribution::Call(call) => call,
            Attribution::Outside => {
                tracing::info!(server = %self.server, "MCP elicitation outside any call: declined");
                return Ok(ElicitResult::new(ElicitationAction::Decline));
            }
            Attribution::Ambiguous(callers) => {
                tracing::warn!(server = %self.server, threads = callers.len(), "MCP elicitation not attributable to one call: refused");
                let warning = format!(
                    "The MCP server `{}` asked a question while tool calls of more than one \
                     thread were running on it, and nothing in the request said which call \
                     asked; Weft refused it rather than show it to the wrong thread.",
                    self.server
                );
                for caller in callers {
                    (caller.warn)(warning.clone()).await;
                }
                return Err(ErrorData::new(ErrorCode::INVALID_REQUEST, AMBIGUOUS, None));
            }
        };
        let Some(asker) = call.asker.clone() else {
            tracing::info!(server = %self.server, "MCP elicitation during a request nobody can answer for: declined");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let Some(_slot) = OpenSlot::take(&call, self.max_open) else {
            if !call.warned.swap(true, Ordering::AcqRel) {
                tracing::warn!(server = %self.server, limit = self.max_open, "too many open MCP elicitations in one call: declining the rest");
                (asker.warn)(format!(
                    "The MCP server `{}` asked more than {} questions at once in one tool call; \
                     Weft declined the rest (limits.max_mcp_questions_per_call).",
                    self.server, self.max_open
                ))
                .await;
            }
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        tokio::select! {
            biased;
            // The call is over: the question is withdrawn (dropping the ask) and cancelled.
            () = call.ended.cancelled() => Ok(ElicitResult::new(ElicitationAction::Cancel)),
            answer = (asker.ask)(request) => Ok(serde_json::from_value(answer)
                .unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Cancel))),
        }
    }

    fn attribute(
        &self,
        origin: Option<&InboundStreamOrigin>,
        token: Option<&ProgressToken>,
    ) -> Attribution {
        let in_flight = self.in_flight.lock();
        let sent = |call: &InFlight, pick: &dyn Fn(&(RequestId, ProgressToken)) -> bool| {
            call.sent.lock().as_ref().is_some_and(pick)
        };
        if let Some(InboundStreamOrigin::OutboundRequest(id)) = origin {
            return in_flight
                .iter()
                .find(|call| sent(call, &|(request, _)| request == id))
                .map_or(Attribution::Outside, |call| {
                    Attribution::Call(Arc::clone(call))
                });
        }
        if let Some(token) = token
            && let Some(call) = in_flight
                .iter()
                .find(|call| call.asker.is_some() && sent(call, &|(_, own)| own == token))
        {
            return Attribution::Call(Arc::clone(call));
        }
        let thread = |call: &InFlight| call.asker.as_ref().map(|asker| asker.thread.clone());
        let Some(newest) = in_flight.last() else {
            return Attribution::Outside;
        };
        let owner = thread(newest);
        if owner.is_some() && in_flight.iter().all(|call| thread(call) == owner) {
            return Attribution::Call(Arc::clone(newest));
        }
        let mut callers: Vec<Asker> = Vec::new();
        for asker in in_flight.iter().filter_map(|call| call.asker.as_ref()) {
            if !callers.iter().any(|known| known.thread == asker.thread) {
                callers.push(asker.clone());
            }
        }
        Attribution::Ambiguous(callers)
    }

    fn remove(&self, id: u64) {
        self.in_flight.lock().retain(|call| call.id != id);
    }
}

/// One request in flight; [`InFlightGuard::end`] (or dropping it) ends it.
pub(super) struct InFlightGuard<'a> {
    questions: &'a Questions,
    entry: Arc<InFlight>,
}

impl InFlightGuard<'_> {
    /// The request was sent with this id and progress token.
    pub(super) fn sent(&self, request: RequestId, token: ProgressToken) {
        *self.entry.sent.lock() = Some((request, token));
    }

    /// The request is over: no question is attributed to it any more, and those it left
    /// open are withdrawn and cancelled; waits (a little) until they are.
    pub(super) async fn end(self) {
        self.questions.remove(self.entry.id);
        self.entry.ended.cancel();
        let entry = Arc::clone(&self.entry);
        let settled = async move {
            loop {
                let idle = entry.idle.notified();
                tokio::pin!(idle);
                idle.as_mut().enable();
                if entry.open.load(Ordering::Acquire) == 0 {
                    return;
                }
                idle.await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(2), settled).await;
    }
}

impl Drop for InFlightGuard<'_> {
    fn drop(&mut self) {
        self.questions.remove(self.entry.id);
        self.entry.ended.cancel();
    }
}

/// One open question of a call (released when the question is over).
struct OpenSlot(Arc<InFlight>);

impl OpenSlot {
    fn take(call: &Arc<InFlight>, max: usize) -> Option<OpenSlot> {
        call.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < max).then_some(open + 1)
            })
            .ok()
            .map(|_| OpenSlot(Arc::clone(call)))
    }
}

impl Drop for OpenSlot {
    fn drop(&mut self) {
        if self.0.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
#[path = "questions_tests.rs"]
mod tests;
