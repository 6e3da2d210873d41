//! Sub-agents (docs/agents.md): a coordinating agent spawns, briefs, waits for, messages,
//! interrupts and closes sub-agents, each a complete thread of its own (actor, turns,
//! rollout). What the whole tree under one root shares — who may spawn, how many, how deep,
//! what they are called, how they talk — is its control plane, one per root:
//!
//! - `hub`: [`Agents`], the daemon's trees, the roots of their sub-agents, and the
//!   [`AgentHost`] (through which it reaches a loaded thread's mailbox);
//! - `host`: [`AgentHost`], the narrow trait through which the trees reach threads (the thread
//!   manager implements it), and the [`ChildThread`] a spawn asks it for;
//! - `control`: [`AgentControl`], one tree's registry and statuses, and the operations the
//!   tools share (spawn, resume, close, interrupt);
//! - `registry`: the four guards (count, depth, nickname, path) and the [`SpawnReservation`]
//!   that gives a slot back on every failure path;
//! - `names`: the nickname pool;
//! - `mailbox`: how agents talk (a channel, a sequence number, a watch), and the
//!   [`AgentMail`] they send;
//! - `sink`: [`AgentSink`], which watches a sub-agent's turns for its status and its parent;
//! - `notify`, `status`: what the models are told.

pub mod control;
pub mod host;
pub mod hub;
pub mod mailbox;
pub mod names;
pub mod notify;
pub mod prompts;
pub mod registry;
pub mod sink;
pub mod status;

pub use control::{
    AgentControl, ROOT_PATH, SpawnParent, SpawnRequest, Spawned, TreePlace, last_agent_message,
};
pub use host::{AgentHost, ChildThread, SendMode, TreeHost};
pub use hub::{AgentCaller, Agents};
pub use mailbox::{AgentMail, AgentMailbox, Mail, Mailbox, MailboxReceiver, mailbox};
pub use registry::{AgentLimits, AgentRecord, AgentRegistry, SpawnRefusal, SpawnReservation};
pub use sink::AgentSink;
pub use status::AgentStatus;
