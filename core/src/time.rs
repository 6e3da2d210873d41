//! Clocks and the ids Weft mints (UUIDv7, so they sort by creation time).

use std::time::{SystemTime, UNIX_EPOCH};

use weft_protocol::{ItemId, ThreadId, TurnId};

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> i64 {
    now_ms() / 1000
}

/// A new thread id.
pub fn new_thread_id() -> ThreadId {
    ThreadId::from(uuid::Uuid::now_v7().to_string())
}

/// A new turn id.
pub fn new_turn_id() -> TurnId {
    TurnId::from(uuid::Uuid::now_v7().to_string())
}

/// A new id for an item Weft creates itself (user messages, hook prompts, …).
pub fn new_item_id() -> ItemId {
    ItemId::from(uuid::Uuid::now_v7().to_string())
}
