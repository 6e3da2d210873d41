//! A connection's outbound queue (docs/protocol.md §2.5). Frames are queued as serialized
//! bytes. Up to `capacity` messages it is a plain queue; past that, a delta or progress
//! notification that can be merged into the queued tail is (see [`super::coalesce`]), so a
//! client that reads, however slowly, loses nothing and the queue does not grow with the
//! number of deltas. Anything that cannot be merged is still queued, up to `4 × capacity`
//! messages or `limits.outbound_queue_bytes`; a connection past that bound is not keeping up
//! at all and is closed. The other half of the slow-client rule, the stall clock, is the
//! transport writer's (`transport::stall`).

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use weft_core::time::now_ms;
use weft_protocol::notifications::ServerNotification;

use super::coalesce;
use crate::outgoing;

/// What a writer's wait for frames ([`Outbound::next_batch`]) ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    /// Frames were moved out.
    Frames,
    /// The connection closed first.
    Closed,
    /// The queue is closed and empty.
    Ended,
}

/// How many times the capacity the queue may hold, counting messages that could not be merged.
pub const HARD_BOUND_FACTOR: usize = 4;

/// What bounds one queue (`[limits]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Messages queued before deltas are merged (`outbound_queue_messages`).
    pub messages: usize,
    /// Bytes a queue past `messages` may hold before its connection is closed
    /// (`outbound_queue_bytes`).
    pub bytes: usize,
}

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits {
            messages: 4096,
            bytes: 32 * 1024 * 1024,
        }
    }
}

/// What was done with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Queued, or merged into the queued tail.
    Queued,
    /// Refused: the queue is at its hard bound.
    Overflow,
    /// Refused: the queue is closed (the writer is gone).
    Closed,
}

/// One queued message.
enum Entry {
    Frame(Bytes),
    /// A notification that later ones were (or may be) merged into, serialized when taken.
    Merged {
        notification: Box<ServerNotification>,
        emitted_at_ms: i64,
        /// What it counts for in [`State::bytes`]: the first frame's size plus what was merged.
        bytes: usize,
    },
}

impl Entry {
    fn bytes(&self) -> usize {
        match self {
            Entry::Frame(frame) => frame.len(),
            Entry::Merged { bytes, .. } => *bytes,
        }
    }
}

struct State {
    entries: VecDeque<Entry>,
    /// Bytes queued (serialized frames; merged text as it was added).
    bytes: usize,
    closed: bool,
}

/// The shared queue; the connection pushes, the transport writer takes.
pub(super) struct Queue {
    state: Mutex<State>,
    capacity: usize,
    hard_bound: usize,
    max_bytes: usize,
    /// Wakes the writer when the queue goes from empty to not empty, or closes.
    ready: Notify,
    /// Wakes senders waiting for room below the capacity.
    room: Notify,
}

impl Queue {
    pub(super) fn new(limits: QueueLimits) -> Arc<Queue> {
        let capacity = limits.messages.max(1);
        Arc::new(Queue {
            state: Mutex::new(State {
                entries: VecDeque::new(),
                bytes: 0,
                closed: false,
            }),
            capacity,
            hard_bound: capacity.saturating_mul(HARD_BOUND_FACTOR),
            max_bytes: limits.bytes,
            ready: Notify::new(),
            room: Notify::new(),
        })
    }

    /// Queue `frame`; past the capacity, merge `notification` (the frame's source, when it is
    /// one) into the tail where it can be.
    pub(super) fn push(&self, frame: Bytes, notification: Option<&ServerNotification>) -> Pushed {
        let mut state = self.state.lock();
        if state.closed {
            return Pushed::Closed;
        }
        let len = state.entries.len();
        if len < self.capacity {
            self.queue_frame(state, frame);
            return Pushed::Queued;
        }
        // Full: the slow path.
        let state = &mut *state;
        let over = len >= self.hard_bound || state.bytes >= self.max_bytes;
        match notification.filter(|n| coalesce::is_mergeable(n)) {
            Some(next) => {
                if let Some(Entry::Merged {
                    notification: tail,
                    emitted_at_ms,
                    bytes,
                }) = state.entries.back_mut()
                {
                    let before = coalesce::text_len(tail);
                    if coalesce::absorb(tail, next) {
                        // A replaced progress message may also shrink.
                        let after = coalesce::text_len(tail);
                        *bytes = (*bytes + after).saturating_sub(before);
                        state.bytes = (state.bytes + after).saturating_sub(before);
                        *emitted_at_ms = now_ms();
                        return Pushed::Queued;
                    }
                }
                if over {
                    return Pushed::Overflow;
                }
                // Later deltas of the same item merge into this one.
                state.bytes += frame.len();
                state.entries.push_back(Entry::Merged {
                    notification: Box::new(next.clone()),
                    emitted_at_ms: now_ms(),
                    bytes: frame.len(),
                });
            }
            None => {
                if over {
                    return Pushed::Overflow;
                }
                state.bytes += frame.len();
                state.entries.push_back(Entry::Frame(frame));
            }
        }
        Pushed::Queued
    }

    /// Queue `frame` only if there is room below the capacity (an overload reply).
    pub(super) fn try_push(&self, frame: Bytes) -> bool {
        let state = self.state.lock();
        if state.closed || state.entries.len() >= self.capacity {
            return false;
        }
        self.queue_frame(state, frame);
        true
    }

    /// Append `frame` below the capacity, waking the writer when the queue was empty.
    fn queue_frame(&self, mut state: parking_lot::MutexGuard<'_, State>, frame: Bytes) {
        let was_empty = state.entries.is_empty();
        state.bytes += frame.len();
        state.entries.push_back(Entry::Frame(frame));
        drop(state);
        if was_empty {
            self.ready.notify_one();
        }
    }

    /// Queue `frame` once the queue is below its capacity (stdio answers: a client that does
    /// not read its answers is not read from either).
    pub(super) async fn push_with_room(&self, frame: Bytes) -> Pushed {
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            {
                let state = self.state.lock();
                if state.closed {
                    return Pushed::Closed;
                }
                if state.entries.len() < self.capacity {
                    drop(state);
                    return self.push(frame, None);
                }
            }
            room.await;
        }
    }

    /// Close the queue: pushes are refused; what is queued can still be taken.
    pub(super) fn close(&self) {
        self.state.lock().closed = true;
        self.ready.notify_one();
        self.room.notify_waiters();
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.state.lock().entries.len()
    }
}

/// The writer's end of a connection's queue. Dropping it closes the queue.
pub struct Outbound {
    queue: Arc<Queue>,
    taken: Vec<Entry>,
}

impl Outbound {
    pub(super) fn new(queue: Arc<Queue>) -> Outbound {
        Outbound {
            queue,
            taken: Vec::new(),
        }
    }

    /// Wait for messages and move up to `max` of them into `out`, in order. Returns false once
    /// the queue is closed and empty.
    pub async fn recv_many(&mut self, out: &mut Vec<Bytes>, max: usize) -> bool {
        let queue = self.queue.clone();
        loop {
            let ready = queue.ready.notified();
            if self.try_recv_many(out, max) {
                return true;
            }
            if queue.state.lock().closed {
                return false;
            }
            ready.await;
        }
    }

    /// A writer's wait for its next batch: [`Outbound::recv_many`], unless `closed` is
    /// cancelled first (frames already queued still win).
    pub async fn next_batch(
        &mut self,
        out: &mut Vec<Bytes>,
        max: usize,
        closed: &CancellationToken,
    ) -> Batch {
        tokio::select! {
            biased;
            more = self.recv_many(out, max) => if more { Batch::Frames } else { Batch::Ended },
            () = closed.cancelled() => Batch::Closed,
        }
    }

    /// Move up to `max` queued messages into `out` without waiting; false if there were none.
    pub fn try_recv_many(&mut self, out: &mut Vec<Bytes>, max: usize) -> bool {
        let was_full = {
            let mut state = self.queue.state.lock();
            if state.entries.is_empty() {
                return false;
            }
            let was_full = state.entries.len() >= self.queue.capacity;
            let n = max.max(1).min(state.entries.len());
            let mut bytes = 0;
            self.taken
                .extend(state.entries.drain(..n).inspect(|e| bytes += e.bytes()));
            state.bytes -= bytes;
            was_full
        };
        if was_full {
            self.queue.room.notify_waiters();
        }
        // Serialized outside the lock: a merged notification is written once, when taken.
        for entry in self.taken.drain(..) {
            match entry {
                Entry::Frame(frame) => out.push(frame),
                Entry::Merged {
                    notification,
                    emitted_at_ms,
                    ..
                } => out.push(outgoing::notification_at(&notification, emitted_at_ms)),
            }
        }
        true
    }
}

impl Drop for Outbound {
    fn drop(&mut self) {
        self.queue.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::coalesce::tests::delta;

    fn limits(messages: usize) -> QueueLimits {
        QueueLimits {
            messages,
            bytes: 1 << 20,
        }
    }

    fn push_delta(queue: &Queue, item: &str, text: &str) -> Pushed {
        let notification = delta(item, text);
        queue.push(outgoing::notification(&notification), Some(&notification))
    }

    fn take_all(outbound: &mut Outbound) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        while outbound.try_recv_many(&mut out, 1000) {}
        out.iter()
            .map(|frame| serde_json::from_slice(frame).unwrap())
            .collect()
    }

    #[test]
    fn a_full_queue_merges_deltas_of_one_item_in_order() {
        let queue = Queue::new(limits(4));
        let mut outbound = Outbound::new(queue.clone());
        for i in 0..4 {
            assert_eq!(push_delta(&queue, "a", &format!("{i}")), Pushed::Queued);
        }
        for i in 4..100 {
            assert_eq!(push_delta(&queue, "a", &format!("{i}")), Pushed::Queued);
        }
        assert_eq!(queue.len(), 5, "four frames, then one merged delta");
        assert_eq!(queue.push(Bytes::from_static(b"{}"), None), Pushed::Queued);
        assert_eq!(push_delta(&queue, "a", "x"), Pushed::Queued);
        assert_eq!(push_delta(&queue, "a", "y"), Pushed::Queued);
        assert_eq!(push_delta(&queue, "b", "z"), Pushed::Queued);
        let frames = take_all(&mut outbound);
        let texts: Vec<String> = frames
            .iter()
            .map(|f| match f["params"]["delta"].as_str() {
                Some(delta) => format!("{}:{delta}", f["params"]["itemId"].as_str().unwrap()),
                None => f.to_string(),
            })
            .collect();
        let merged: String = (4..100).map(|i| i.to_string()).collect();
        assert_eq!(
            texts,
            vec![
                "a:0".to_string(),
                "a:1".into(),
                "a:2".into(),
                "a:3".into(),
                format!("a:{merged}"),
                "{}".into(),
                "a:xy".into(),
                "b:z".into(),
            ]
        );
        assert!(frames[4]["emittedAtMs"].is_i64());
    }

    #[test]
    fn below_the_capacity_nothing_is_merged() {
        let queue = Queue::new(limits(8));
        let mut outbound = Outbound::new(queue.clone());
        for i in 0..5 {
            push_delta(&queue, "a", &i.to_string());
        }
        assert_eq!(take_all(&mut outbound).len(), 5);
    }

    #[test]
    fn what_cannot_merge_is_bounded() {
        let queue = Queue::new(limits(2));
        let _outbound = Outbound::new(queue.clone());
        for _ in 0..2 * HARD_BOUND_FACTOR {
            assert_eq!(queue.push(Bytes::from_static(b"{}"), None), Pushed::Queued);
        }
        assert_eq!(
            queue.push(Bytes::from_static(b"{}"), None),
            Pushed::Overflow
        );
        assert!(!queue.try_push(Bytes::from_static(b"{}")));
    }

    #[test]
    fn past_the_capacity_the_bytes_are_bounded_too() {
        let queue = Queue::new(QueueLimits {
            messages: 2,
            bytes: 10_000,
        });
        let mut outbound = Outbound::new(queue.clone());
        let big = Bytes::from(vec![b'x'; 4_000]);
        for _ in 0..3 {
            assert_eq!(queue.push(big.clone(), None), Pushed::Queued);
        }
        assert_eq!(queue.push(big.clone(), None), Pushed::Overflow);
        // Taking gives the bytes back.
        let mut out = Vec::new();
        assert!(outbound.try_recv_many(&mut out, 2));
        assert_eq!(queue.push(big.clone(), None), Pushed::Queued);
        // Merged text counts as it grows.
        let queue = Queue::new(QueueLimits {
            messages: 1,
            bytes: 2_000,
        });
        let _outbound = Outbound::new(queue.clone());
        let chunk = "y".repeat(500);
        for _ in 0..6 {
            assert_eq!(push_delta(&queue, "a", &chunk), Pushed::Queued);
        }
        assert_eq!(queue.push(big, None), Pushed::Overflow);
    }

    #[test]
    fn a_dropped_writer_closes_the_queue() {
        let queue = Queue::new(limits(2));
        drop(Outbound::new(queue.clone()));
        assert_eq!(queue.push(Bytes::from_static(b"{}"), None), Pushed::Closed);
    }

    #[tokio::test]
    async fn answers_wait_for_room_below_the_capacity() {
        let queue = Queue::new(limits(1));
        let mut outbound = Outbound::new(queue.clone());
        queue.push(Bytes::from_static(b"1"), None);
        let waiting = tokio::spawn({
            let queue = queue.clone();
            async move { queue.push_with_room(Bytes::from_static(b"2")).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        let mut out = Vec::new();
        assert!(outbound.recv_many(&mut out, 10).await);
        assert_eq!(waiting.await.unwrap(), Pushed::Queued);
        assert!(outbound.recv_many(&mut out, 10).await);
        assert_eq!(
            out,
            vec![Bytes::from_static(b"1"), Bytes::from_static(b"2")]
        );
    }
}
