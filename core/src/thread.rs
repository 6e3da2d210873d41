//! Threads: one actor per loaded thread, the handle everyone else holds, and the manager that
//! creates, loads and unloads them.
//!
//! - `handle`: [`ThreadHandle`], the [`Op`]s it submits and the types they carry.
//! - `actor`: [`ThreadActor`], the task that owns a thread's state and runs its turns.
//! - `manager`: [`ThreadManager`], which spawns actors and handles stored threads.
//! - `options`: [`StartThreadOptions`], what `thread/start`, resume and fork may set.
//! - `services`: [`Services`], what every actor shares.
//! - `error`: [`CoreError`], why a request was refused.
//!
//! The manager depends on the actor, never the other way round: the actor gets its
//! [`Services`] and a weak sender to its own mailbox when it is spawned.

mod actor;
mod error;
mod handle;
mod manager;
mod options;
mod services;

pub use actor::ThreadActor;
pub use error::{CoreError, OpenError, StorageError};
pub use handle::{InputMode, Op, Restored, Submitted, ThreadHandle, ThreadSnapshot, TurnOverrides};
pub use manager::{
    GoalRequestError, ImportedThread, ImportedTurn, PageError, ReadMarkError, ResumePages,
    Subscribers, ThreadList, ThreadManager, Unloaded,
};
pub use options::StartThreadOptions;
pub use services::Services;
