//! Coalescing while a connection's queue is full (docs/protocol.md §2.5): a text delta of the
//! same item (and the same summary or content part) as the queued tail is appended to it, and
//! an MCP progress message of the same call replaces the queued one. Nothing else is ever
//! merged, so the order of everything else is kept and the text a client assembles is the
//! same, only in fewer frames.

use weft_protocol::notifications::ServerNotification;

/// Largest `delta` a merged notification grows to; past it the next delta starts a new one,
/// so that no frame outgrows what clients accept (tungstenite's default is 64 MiB).
pub const MAX_MERGED_DELTA_BYTES: usize = 1024 * 1024;

/// Whether a notification is of a kind that can be merged at all.
pub fn is_mergeable(notification: &ServerNotification) -> bool {
    use ServerNotification as N;
    matches!(
        notification,
        N::AgentMessageDelta(_)
            | N::CommandExecutionOutputDelta(_)
            | N::FileChangeOutputDelta(_)
            | N::ReasoningSummaryTextDelta(_)
            | N::ReasoningTextDelta(_)
            | N::McpToolCallProgress(_)
    )
}

/// Bytes of a mergeable notification's text (its `delta`, or a progress message); 0 otherwise.
pub fn text_len(notification: &ServerNotification) -> usize {
    use ServerNotification as N;
    match notification {
        N::AgentMessageDelta(n) => n.delta.len(),
        N::CommandExecutionOutputDelta(n) => n.delta.len(),
        N::FileChangeOutputDelta(n) => n.delta.len(),
        N::ReasoningSummaryTextDelta(n) => n.delta.len(),
        N::ReasoningTextDelta(n) => n.delta.len(),
        N::McpToolCallProgress(n) => n.message.len(),
        _ => 0,
    }
}

/// Merge `next` into `tail` when they are deltas of one item (and part) or progress of one
/// call. Returns false, leaving `tail` as it was, for anything else.
pub fn absorb(tail: &mut ServerNotification, next: &ServerNotification) -> bool {
    use ServerNotification as N;
    macro_rules! same_item {
        ($a:expr, $b:expr) => {
            $a.item_id == $b.item_id && $a.turn_id == $b.turn_id && $a.thread_id == $b.thread_id
        };
    }
    let (delta, more) = match (tail, next) {
        (N::AgentMessageDelta(a), N::AgentMessageDelta(b)) if same_item!(a, b) => {
            (&mut a.delta, &b.delta)
        }
        (N::CommandExecutionOutputDelta(a), N::CommandExecutionOutputDelta(b))
            if same_item!(a, b) =>
        {
            (&mut a.delta, &b.delta)
        }
        (N::FileChangeOutputDelta(a), N::FileChangeOutputDelta(b)) if same_item!(a, b) => {
            (&mut a.delta, &b.delta)
        }
        (N::ReasoningSummaryTextDelta(a), N::ReasoningSummaryTextDelta(b))
            if same_item!(a, b) && a.summary_index == b.summary_index =>
        {
            (&mut a.delta, &b.delta)
        }
        (N::ReasoningTextDelta(a), N::ReasoningTextDelta(b))
            if same_item!(a, b) && a.content_index == b.content_index =>
        {
            (&mut a.delta, &b.delta)
        }
        (N::McpToolCallProgress(a), N::McpToolCallProgress(b)) if same_item!(a, b) => {
            // Progress is a state, not a stream: the newest message is all that matters.
            a.message.clone_from(&b.message);
            return true;
        }
        _ => return false,
    };
    if delta.len() + more.len() > MAX_MERGED_DELTA_BYTES {
        return false;
    }
    delta.push_str(more);
    true
}

#[cfg(test)]
pub(super) mod tests {
    use weft_protocol::McpToolCallProgressNotification;
    use weft_protocol::notifications::{
        AgentMessageDeltaNotification, ItemCompletedNotification,
        ReasoningSummaryTextDeltaNotification,
    };

    use super::*;

    /// Notification `N` about item `item` of thread `t`, turn `u`, with its other `fields`.
    fn of_item<N>(item: &str, fields: serde_json::Value) -> ServerNotification
    where
        N: serde::de::DeserializeOwned + Into<ServerNotification>,
    {
        let mut value = serde_json::json!({"threadId": "t", "turnId": "u", "itemId": item});
        let serde_json::Value::Object(fields) = fields else {
            panic!("fields must be an object: {fields}");
        };
        value.as_object_mut().unwrap().extend(fields);
        serde_json::from_value::<N>(value).unwrap().into()
    }

    /// An `item/agentMessage/delta` of item `item` (thread `t`, turn `u`).
    pub(crate) fn delta(item: &str, text: &str) -> ServerNotification {
        of_item::<AgentMessageDeltaNotification>(item, serde_json::json!({"delta": text}))
    }

    fn text_of(notification: &ServerNotification) -> &str {
        match notification {
            ServerNotification::AgentMessageDelta(n) => &n.delta,
            ServerNotification::McpToolCallProgress(n) => &n.message,
            ServerNotification::ReasoningSummaryTextDelta(n) => &n.delta,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn deltas_of_one_item_concatenate() {
        let mut tail = delta("a", "Hel");
        assert!(absorb(&mut tail, &delta("a", "lo")));
        assert!(absorb(&mut tail, &delta("a", ", world")));
        assert_eq!(text_of(&tail), "Hello, world");
    }

    #[test]
    fn never_across_items_kinds_or_parts() {
        let mut tail = delta("a", "x");
        assert!(!absorb(&mut tail, &delta("b", "y")), "another item");
        let summary = |index: i64| {
            let fields = serde_json::json!({"delta": "s", "summaryIndex": index});
            of_item::<ReasoningSummaryTextDeltaNotification>("a", fields)
        };
        assert!(!absorb(&mut tail, &summary(0)), "another kind");
        let mut part = summary(0);
        assert!(!absorb(&mut part, &summary(1)), "another summary part");
        assert!(absorb(&mut part, &summary(0)));
        assert_eq!(text_of(&part), "ss");
        assert_eq!(text_of(&tail), "x", "a refused merge changes nothing");
        let completed: ServerNotification =
            serde_json::from_value::<ItemCompletedNotification>(serde_json::json!({
                "item": {"type": "agentMessage", "id": "a", "text": "x"},
                "threadId": "t", "turnId": "u", "completedAtMs": 0
            }))
            .unwrap()
            .into();
        assert!(!is_mergeable(&completed));
        assert!(is_mergeable(&tail));
    }

    #[test]
    fn progress_of_one_call_replaces() {
        let progress = |item: &str, message: &str| {
            let fields = serde_json::json!({"message": message});
            of_item::<McpToolCallProgressNotification>(item, fields)
        };
        let mut tail = progress("call", "1 / 3");
        assert!(absorb(&mut tail, &progress("call", "2 / 3")));
        assert_eq!(text_of(&tail), "2 / 3");
        assert!(!absorb(&mut tail, &progress("other", "9")));
        assert!(!absorb(&mut tail, &delta("call", "x")));
    }

    #[test]
    fn a_merged_delta_stops_growing_at_the_cap() {
        let chunk = "x".repeat(MAX_MERGED_DELTA_BYTES / 2);
        let mut tail = delta("a", &chunk);
        assert!(absorb(&mut tail, &delta("a", &chunk)));
        assert!(!absorb(&mut tail, &delta("a", "y")));
        assert_eq!(text_of(&tail).len(), MAX_MERGED_DELTA_BYTES);
    }
}
