//! Weft's runtime: threads and their actors, the turn loop, the model client, hooks
//! and instructions. It speaks in protocol data types (ids, items, turns) but never sees the
//! JSON-RPC envelope: the app-server turns [`events::ThreadEvent`]s into notifications.

pub mod agents;
pub mod collaboration;
pub mod compact;
pub mod config;
pub mod config_base;
pub mod env_context;
pub mod events;
pub mod exec;
pub mod external_agent;
pub mod feedback;
pub mod file_search;
pub mod fs;
pub mod goals;
pub mod guardian;
pub mod history;
pub mod hooks;
pub mod http_client;
pub mod instructions;
pub mod limits;
pub mod mcp;
pub mod model;
pub mod permissions;
pub mod review;
pub mod rollout;
pub mod sandbox;
pub mod settings;
pub mod skills;
pub mod snapshots;
pub mod state;
pub mod task;
pub mod thread;
pub mod time;
pub mod tools;
pub mod turn;
pub mod wire_thread;
