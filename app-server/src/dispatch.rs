//! The typed dispatcher: how a decoded request reaches its handler and how its answer goes
//! out. The route table (`processor.rs`) gives each client method one line naming its
//! protocol marker (`weft_protocol::methods::…`), its execution mode and its handler; the
//! marker's `Params` and `Response` types must be the handler's, so a handler answering the
//! wrong type does not compile.
//!
//! Execution modes ([`Dispatcher`]):
//! - `inline`: awaited in the processing loop, so the next message sees what it did
//!   (`initialize`), or because it never waits.
//! - `spawned`: in its own task ([`spawn_handler`]), so a slow request never holds up the rest.
//! - `to_thread`: a request a thread answers itself. The handler runs inline and never waits:
//!   it checks the params and makes an op with a [`ThreadReply`], which the dispatcher queues
//!   on the loaded thread the params name, so two requests sent back to back reach the thread
//!   in that order. The thread sends the response before the events
//!   the request causes (the `Reply` ordering contract, docs/architecture.md §5.3).
//! - `spawned_to_thread`: the same, for a handler that waits first (`thread/goal/set` writes the
//!   state DB before it tells the thread), in its own task.
//! - `deferred`: a request answered later by what its handler starts (`command/exec`, when
//!   its process exits): the handler runs inline, gets the response slot ([`ThreadReply`])
//!   and returns only the outcome of its checks.
//! - `fixed`: a method Weft answers the same every time (`account/read`): its handler is a
//!   plain `fn() -> Response`, and the answer is sent here.
//!
//! A handler gets a [`Context`] (the state and the connection) and its params; one routed
//! [`scoped`] has its params' `threadId` checked first. A handler never sends anything itself:
//! it returns an [`Answer`] (the notifications before the response, the response or error, and
//! what follows it) and [`send_answer`] sends it in that order.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::future::{self, BoxFuture, Either, Ready};
use serde::Serialize;
use weft_core::events::Reply;
use weft_core::thread::Op;
use weft_protocol::jsonrpc::{JsonRpcError, RequestId};
use weft_protocol::notifications::ServerNotification;
use weft_protocol::{Method, ThreadId};

use crate::connection::Connection;
use crate::handlers::{ThreadParams, loaded_thread, parse_thread_id};
use crate::outgoing;
use crate::state::AppState;

/// A handler's answer, sent by [`send_answer`] in field order.
pub struct Answer<R> {
    /// Notifications that precede the response.
    pub before: Vec<Notice>,
    /// The method's response, or the error that answers the request instead.
    pub response: Result<R, JsonRpcError>,
    /// What follows the response, in order.
    pub then: Vec<FollowUp>,
}

/// A notification an [`Answer`] sends.
pub enum Notice {
    /// To every initialized connection that wants it.
    Broadcast(ServerNotification),
    /// To the requesting connection only, if it wants it.
    Caller(ServerNotification),
    /// To a loaded thread's subscribers that want it.
    Subscribers(ThreadId, ServerNotification),
}

/// Work that runs once the request counts as answered (its notifications are queued).
pub type Work = Box<dyn FnOnce(Arc<AppState>) -> BoxFuture<'static, ()> + Send>;

/// What follows a response.
// Built once per answer and sent at once; boxing the notification would only add an
// allocation to every one.
#[allow(clippy::large_enum_variant)]
pub enum FollowUp {
    /// A notification.
    Notice(Notice),
    /// Work after the response's notifications (starting the MCP servers a new thread sees).
    Run(Work),
}

impl<R> Answer<R> {
    /// The response alone.
    pub fn new(response: R) -> Self {
        Answer::with(Ok(response))
    }

    /// An error answer.
    pub fn error(error: JsonRpcError) -> Self {
        Answer::with(Err(error))
    }

    /// The response or error alone.
    pub fn with(response: Result<R, JsonRpcError>) -> Self {
        Answer {
            before: Vec::new(),
            response,
            then: Vec::new(),
        }
    }

    /// Precede the response with a notification to everyone.
    pub fn before_broadcast(mut self, notification: impl Into<ServerNotification>) -> Self {
        self.before.push(Notice::Broadcast(notification.into()));
        self
    }

    /// Precede the response with a notification to a loaded thread's subscribers.
    pub fn before_subscribers(
        mut self,
        thread_id: ThreadId,
        notification: impl Into<ServerNotification>,
    ) -> Self {
        self.before
            .push(Notice::Subscribers(thread_id, notification.into()));
        self
    }

    /// Follow the response with a notification to everyone.
    pub fn then_broadcast(mut self, notification: impl Into<ServerNotification>) -> Self {
        self.then
            .push(FollowUp::Notice(Notice::Broadcast(notification.into())));
        self
    }

    /// Follow the response with a notification to the caller.
    pub fn then_tell_caller(mut self, notification: impl Into<ServerNotification>) -> Self {
        self.then
            .push(FollowUp::Notice(Notice::Caller(notification.into())));
        self
    }

    /// Run `work` once the response and its notifications are queued.
    pub fn then_run<F, Fut>(mut self, work: F) -> Self
    where
        F: FnOnce(Arc<AppState>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.then
            .push(FollowUp::Run(Box::new(move |state| Box::pin(work(state)))));
        self
    }
}

/// What a handler may return on success: a bare response or an [`Answer`].
pub trait IntoAnswer {
    /// The response type.
    type Response: Serialize;
    /// The answer.
    fn into_answer(self) -> Answer<Self::Response>;
}

impl<R: Serialize> IntoAnswer for R {
    type Response = R;
    fn into_answer(self) -> Answer<R> {
        Answer::new(self)
    }
}

impl<R: Serialize> IntoAnswer for Answer<R> {
    type Response = R;
    fn into_answer(self) -> Answer<R> {
        self
    }
}

/// A handler's result as the answer to send.
fn answer_of<A: IntoAnswer>(result: HandlerResult<A>) -> Answer<A::Response> {
    match result {
        Ok(answer) => answer.into_answer(),
        Err(error) => Answer::error(error),
    }
}

/// Where one request's answer goes: the state (for broadcasts), the connection and the id.
struct Responder {
    state: Arc<AppState>,
    connection: Arc<Connection>,
    id: RequestId,
}

/// The response slot of a request a thread answers: made by the dispatcher for the request,
/// handed to core as a [`Reply`]. `R` is the method's response.
pub struct ThreadReply<R> {
    responder: Responder,
    response: PhantomData<fn() -> R>,
}

impl<R: Serialize + Send + 'static> ThreadReply<R> {
    /// A core reply that sends the thread's answer, made into the method's answer by
    /// `to_answer` (or the error, if the thread refused).
    pub fn into_core<T, E, A, F>(self, to_answer: F) -> Reply<Result<T, E>>
    where
        T: Send + 'static,
        E: Into<JsonRpcError> + Send + 'static,
        A: IntoAnswer<Response = R> + Send,
        F: FnOnce(T) -> A + Send + 'static,
    {
        let Responder {
            state,
            connection,
            id,
        } = self.responder;
        Reply::new(move |result: Result<T, E>| {
            Box::pin(async move {
                let answer = answer_of(result.map(to_answer).map_err(Into::into));
                send_answer(&state, &connection, &id, answer).await;
            })
        })
    }
}

/// Send an answer: the notifications before it, the response (or error), the notifications
/// that follow it; the request then counts as answered, and its follow-up work runs.
pub async fn send_answer<R: Serialize>(
    state: &Arc<AppState>,
    connection: &Connection,
    id: &RequestId,
    answer: Answer<R>,
) {
    // Answered once its follow-ups are queued too (or if this is dropped half-way): a client
    // that ends its input right after `thread/start` still gets the `thread/started` it causes.
    let mut answered = Some(Answered(connection));
    for notice in answer.before {
        send_notice(state, connection, notice).await;
    }
    let frame = match &answer.response {
        Ok(response) => outgoing::response(id, response),
        Err(error) => outgoing::error(id, error),
    };
    connection.send(frame).await;
    for follow_up in answer.then {
        match follow_up {
            FollowUp::Notice(notice) => send_notice(state, connection, notice).await,
            FollowUp::Run(work) => {
                answered.take();
                work(state.clone()).await;
            }
        }
    }
}

async fn send_notice(state: &AppState, connection: &Connection, notice: Notice) {
    match notice {
        Notice::Broadcast(notification) => state.connections.broadcast(&notification).await,
        Notice::Caller(notification) => {
            if connection.wants_notification(notification.method()) {
                connection.send(outgoing::notification(&notification)).await;
            }
        }
        Notice::Subscribers(thread_id, notification) => {
            if let Some(subscribers) = state.subscribers_of(&thread_id) {
                subscribers.notify(&notification).await;
            }
        }
    }
}

/// Marks a request answered when dropped (after the last of its notifications).
struct Answered<'a>(&'a Connection);

impl Drop for Answered<'_> {
    fn drop(&mut self) {
        self.0.answered();
    }
}

/// Run a handler in its own task, in the current (request) span. Every spawned handler goes
/// through here, so this is the one place that decides how handler tasks are run: tracked by
/// the connection (`connection/tasks.rs`), bounded by `limits.max_running_requests`, drained
/// when it closes. Request `id` finding the bound reached is answered `-32001` at once, as one
/// finding the ingress queue full is (docs/protocol.md §11.6).
pub async fn spawn_handler(
    connection: &Arc<Connection>,
    id: &RequestId,
    task: impl Future<Output = ()> + Send + 'static,
) {
    if connection.tasks().spawn(task).is_err() {
        tracing::debug!(
            connection = connection.id,
            "too many requests running on this connection; rejecting request"
        );
        connection
            .answer(outgoing::error(id, &JsonRpcError::overloaded()))
            .await;
    }
}

/// What every handler is given besides its params: the state and the requesting connection.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The daemon's state.
    pub state: &'a AppState,
    /// The connection the request came from.
    pub connection: &'a Arc<Connection>,
}

/// What a handler returns: its answer (`R`, the response or an [`Answer`]) or the error that
/// answers the request instead.
pub type HandlerResult<R> = Result<R, JsonRpcError>;

/// An async handler: `async fn(Context<'_>, Params) -> HandlerResult<A>` where `A` is the
/// response `R` or an `Answer<R>`.
pub trait Handler<'a, P, R>: Send + 'static {
    /// What the handler returns on success.
    type Answer: IntoAnswer<Response = R>;
    /// The handler's future.
    type Future: Future<Output = HandlerResult<Self::Answer>> + Send + 'a;
    /// Call the handler.
    fn call(self, cx: Context<'a>, params: P) -> Self::Future;
}

impl<'a, P, R, A, F, Fut> Handler<'a, P, R> for F
where
    F: FnOnce(Context<'a>, P) -> Fut + Send + 'static,
    Fut: Future<Output = HandlerResult<A>> + Send + 'a,
    A: IntoAnswer<Response = R>,
{
    type Answer = A;
    type Future = Fut;
    fn call(self, cx: Context<'a>, params: P) -> Fut {
        self(cx, params)
    }
}

/// A handler of a method whose params name a thread ([`ThreadParams`]): its `threadId` is
/// checked ([`parse_thread_id`]) before the handler runs, which then need not.
pub struct Scoped<H>(H);

/// [`Scoped`] `handler`, for the route table.
pub fn scoped<H>(handler: H) -> Scoped<H> {
    Scoped(handler)
}

impl<'a, P, R, H> Handler<'a, P, R> for Scoped<H>
where
    P: ThreadParams,
    H: Handler<'a, P, R>,
    H::Answer: Send + 'a,
{
    type Answer = H::Answer;
    type Future = Checked<H::Answer, H::Future>;
    fn call(self, cx: Context<'a>, params: P) -> Self::Future {
        checked(params, |params| self.0.call(cx, params))
    }
}

impl<'a, P, R, H> ReplyHandler<'a, P, R> for Scoped<H>
where
    P: ThreadParams,
    H: ReplyHandler<'a, P, R>,
{
    type Future = Checked<(), H::Future>;
    fn call(self, state: &'a AppState, params: P, reply: ThreadReply<R>) -> Self::Future {
        checked(params, |params| self.0.call(state, params, reply))
    }
}

/// A [`Scoped`] handler's future: the error of its `threadId`, or the handler's own.
type Checked<A, F> = Either<Ready<HandlerResult<A>>, F>;

/// `run` the handler unless `params`' `threadId` is not a thread id.
fn checked<P: ThreadParams, A, F>(params: P, run: impl FnOnce(P) -> F) -> Checked<A, F> {
    match parse_thread_id(params.thread_id()) {
        Ok(()) => Either::Right(run(params)),
        Err(error) => Either::Left(future::ready(Err(error))),
    }
}

/// An async handler of a request a thread answers: `async fn(&AppState, Params,
/// ThreadReply<R>) -> HandlerResult<()>` (the outcome of its own checks).
pub trait ReplyHandler<'a, P, R>: Send + 'static {
    /// The handler's future.
    type Future: Future<Output = HandlerResult<()>> + Send + 'a;
    /// Call the handler.
    fn call(self, state: &'a AppState, params: P, reply: ThreadReply<R>) -> Self::Future;
}

impl<'a, P, R, F, Fut> ReplyHandler<'a, P, R> for F
where
    F: FnOnce(&'a AppState, P, ThreadReply<R>) -> Fut + Send + 'static,
    Fut: Future<Output = HandlerResult<()>> + Send + 'a,
{
    type Future = Fut;
    fn call(self, state: &'a AppState, params: P, reply: ThreadReply<R>) -> Fut {
        self(state, params, reply)
    }
}

/// One request on its way to its handler, in the mode its route line names.
pub struct Dispatcher {
    state: Arc<AppState>,
    connection: Arc<Connection>,
    id: RequestId,
}

impl Dispatcher {
    /// Request `id` of `connection`.
    pub fn new(state: Arc<AppState>, connection: Arc<Connection>, id: RequestId) -> Self {
        Dispatcher {
            state,
            connection,
            id,
        }
    }

    /// Run `handler` here, in the processing loop, and send its answer.
    pub async fn inline<M: Method>(
        self,
        params: M::Params,
        handler: impl for<'a> Handler<'a, M::Params, M::Response>,
    ) {
        let cx = Context {
            state: &self.state,
            connection: &self.connection,
        };
        let result = handler.call(cx, params).await;
        self.send(answer_of(result)).await;
    }

    /// Send the answer of a method Weft answers the same every time, here: `answer()`, whatever
    /// the params.
    pub async fn fixed<M: Method>(self, _params: M::Params, answer: fn() -> M::Response) {
        self.send(Answer::new(answer())).await;
    }

    /// Run `handler` in its own task ([`spawn_handler`]) and send its answer.
    pub async fn spawned<M>(
        self,
        params: M::Params,
        handler: impl for<'a> Handler<'a, M::Params, M::Response>,
    ) where
        M: Method + 'static,
        M::Params: Send + 'static,
        M::Response: Send + 'static,
    {
        self.spawn(|this| this.inline::<M>(params, handler)).await;
    }

    /// Hand the request to the loaded thread its params name, here: `handler` checks the
    /// params and makes the op to queue, with a [`ThreadReply`] through which the thread
    /// answers; an error from the checks (or finding no such thread) is sent here.
    pub async fn to_thread<M>(
        self,
        params: M::Params,
        handler: impl FnOnce(M::Params, ThreadReply<M::Response>) -> HandlerResult<Op>,
    ) where
        M: Method,
        M::Params: ThreadParams,
        M::Response: Send + 'static,
    {
        let reply = self.reply();
        let queued = loaded_thread(&self.state, params.thread_id()).and_then(|thread| {
            let op = handler(params, reply)?;
            thread.try_send(op).map_err(JsonRpcError::from)
        });
        self.refuse::<M::Response>(queued).await;
    }

    /// Run `handler` here, in the processing loop, with the request's response slot: it starts
    /// what answers the request later through the slot (`command/exec`: its process is known
    /// to the very next request) and returns only the outcome of its up-front checks; an error
    /// from them is sent here.
    pub async fn deferred<M>(
        self,
        params: M::Params,
        handler: impl FnOnce(Context<'_>, M::Params, ThreadReply<M::Response>) -> HandlerResult<()>,
    ) where
        M: Method,
        M::Response: Send + 'static,
    {
        let reply = self.reply();
        let cx = Context {
            state: &self.state,
            connection: &self.connection,
        };
        let started = handler(cx, params, reply);
        self.refuse::<M::Response>(started).await;
    }

    /// [`Dispatcher::to_thread`] for a handler that waits (and queues the request itself),
    /// in its own task.
    pub async fn spawned_to_thread<M>(
        self,
        params: M::Params,
        handler: impl for<'a> ReplyHandler<'a, M::Params, M::Response>,
    ) where
        M: Method,
        M::Params: Send + 'static,
        M::Response: Send + 'static,
    {
        self.spawn(|this| async move {
            let queued = handler.call(&this.state, params, this.reply()).await;
            this.refuse::<M::Response>(queued).await;
        })
        .await;
    }

    /// Run `task` with this request in its own task ([`spawn_handler`]).
    async fn spawn<F, Fut>(self, task: F)
    where
        F: FnOnce(Self) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (connection, id) = (self.connection.clone(), self.id.clone());
        spawn_handler(&connection, &id, task(self)).await;
    }

    /// Send `answer` to this request.
    async fn send<R: Serialize>(&self, answer: Answer<R>) {
        send_answer(&self.state, &self.connection, &self.id, answer).await;
    }

    /// Answer a request a thread was to answer with the error its checks found, if any.
    async fn refuse<R: Serialize>(&self, queued: HandlerResult<()>) {
        if let Err(error) = queued {
            self.send(Answer::<R>::error(error)).await;
        }
    }

    fn reply<R>(&self) -> ThreadReply<R> {
        ThreadReply {
            responder: Responder {
                state: self.state.clone(),
                connection: self.connection.clone(),
                id: self.id.clone(),
            },
            response: PhantomData,
        }
    }
}
