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

/// `((year, month, day), (hour, minute, second))` of a Unix time, UTC.
pub fn utc_parts(secs: i64) -> ((i64, u32, u32), (u32, u32, u32)) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let time = (
        (rem / 3600) as u32,
        ((rem % 3600) / 60) as u32,
        (rem % 60) as u32,
    );
    (civil_from_days(days), time)
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
