//! The mailbox each agent has: other agents of its tree send it mail, which the agent's thread
//! checks at its step boundaries without consuming it, takes when it records it, and can await.
//!
//! The queue is unbounded: backpressure comes from the registry's limits, not from here.
//! Every mail carries a sequence number, taken under the same lock as its send, so sequence
//! order is queue order even with concurrent senders. A `watch` of the last sequence lets a
//! waiter (a wait tool) await new mail without taking any.
//!
//! Every loaded thread has a mailbox and most never get mail, so an empty one allocates
//! nothing but its shared state: a locked queue and a `Notify`, not a channel (whose first
//! block of slots is allocated up front).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use tokio::sync::{Notify, watch};
use weft_protocol::{SubAgentActivityItem, TurnId};

use crate::model::ResponseItem;

/// One mail in a mailbox.
#[derive(Debug, Clone, PartialEq)]
pub struct Mail<T> {
    /// Its sequence number: 1 for a mailbox's first mail, one more for each after.
    pub seq: u64,
    /// What was sent.
    pub body: T,
    /// Whether it should start a turn when the agent is idle.
    pub trigger_turn: bool,
}

/// A new mailbox: its (cloneable) sending side and its one receiver.
pub fn mailbox<T>() -> (Mailbox<T>, MailboxReceiver<T>) {
    let (last, _) = watch::channel(0);
    let shared = Arc::new(Shared {
        queue: Mutex::new(Queue {
            mails: VecDeque::new(),
            receiver_alive: true,
        }),
        arrived: Notify::new(),
        last_seq: AtomicU64::new(0),
        waited: AtomicU64::new(0),
        handed: AtomicU64::new(0),
        read: AtomicU64::new(0),
        last,
    });
    let receiver = MailboxReceiver {
        shared: Arc::clone(&shared),
        pending_mails: VecDeque::new(),
    };
    (Mailbox { shared }, receiver)
}

struct Shared<T> {
    /// Locked for each send, so taking a sequence number and queueing are one step.
    queue: Mutex<Queue<T>>,
    /// Woken by each send.
    arrived: Notify,
    /// The last sequence number sent (0 before any mail).
    last_seq: AtomicU64,
    /// The last sequence number a wait of the agent returned on (v2's `wait_agent` returns on
    /// mail no wait has seen yet).
    waited: AtomicU64,
    /// The last sequence number the agent's thread handed to its running turn.
    handed: AtomicU64,
    /// The last sequence number the agent's model has read: recorded in its history at a
    /// step boundary (v2's `wait_agent` returns at once while later mail is unread).
    read: AtomicU64,
    /// The last sequence number, for waiters.
    last: watch::Sender<u64>,
}

struct Queue<T> {
    /// Sent and not yet drained by the receiver.
    mails: VecDeque<Mail<T>>,
    /// Cleared when the receiver is dropped: later mail is refused.
    receiver_alive: bool,
}

/// The sending side of an agent's mailbox. Clones share one sequence.
pub struct Mailbox<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Mailbox<T> {
    fn clone(&self) -> Self {
        Mailbox {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> fmt::Debug for Mailbox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mailbox")
            .field("last_seq", &self.last_seq())
            .finish_non_exhaustive()
    }
}

impl<T> Mailbox<T> {
    /// Send a mail; returns its sequence number, or `None` when the receiver is gone (the mail
    /// is dropped and takes no number).
    pub fn send(&self, body: T, trigger_turn: bool) -> Option<u64> {
        let mut queue = self.shared.queue.lock();
        if !queue.receiver_alive {
            return None;
        }
        let seq = self.shared.last_seq.load(Ordering::Acquire) + 1;
        queue.mails.push_back(Mail {
            seq,
            body,
            trigger_turn,
        });
        self.shared.last_seq.store(seq, Ordering::Release);
        drop(queue);
        self.shared.arrived.notify_one();
        self.shared.last.send_replace(seq);
        Some(seq)
    }

    /// A waiter on the last sequence number: its `changed()` resolves when mail is sent after
    /// this call, and it takes no mail from the receiver.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.shared.last.subscribe()
    }

    /// The last sequence number sent (0 before any mail).
    pub fn last_seq(&self) -> u64 {
        self.shared.last_seq.load(Ordering::Acquire)
    }

    /// The last sequence number a wait returned on (0 before any).
    pub fn waited(&self) -> u64 {
        self.shared.waited.load(Ordering::Acquire)
    }

    /// A wait returned on mail up to `seq`.
    pub fn set_waited(&self, seq: u64) {
        self.shared.waited.fetch_max(seq, Ordering::AcqRel);
    }

    /// The last sequence number handed to the agent's running turn (0 before any).
    pub fn handed(&self) -> u64 {
        self.shared.handed.load(Ordering::Acquire)
    }

    /// The agent's model has read the mail up to `seq` (the turn recorded what was handed
    /// to it: read [`Mailbox::handed`] before taking the mail, then mark it).
    pub fn mark_read(&self, seq: u64) {
        self.shared.read.fetch_max(seq, Ordering::AcqRel);
    }

    /// Whether mail was sent that the agent's model has not read yet (still queued, or
    /// handed to its turn and not recorded).
    pub fn unread(&self) -> bool {
        self.last_seq() > self.shared.read.load(Ordering::Acquire)
    }
}

/// The receiving side of an agent's mailbox: mail drained from the queue waits in
/// `pending_mails`, in sequence order, until taken.
pub struct MailboxReceiver<T> {
    shared: Arc<Shared<T>>,
    pending_mails: VecDeque<Mail<T>>,
}

impl<T> Drop for MailboxReceiver<T> {
    fn drop(&mut self) {
        self.shared.queue.lock().receiver_alive = false;
    }
}

impl<T> fmt::Debug for MailboxReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MailboxReceiver")
            .field("pending", &self.pending_mails.len())
            .finish_non_exhaustive()
    }
}

impl<T> MailboxReceiver<T> {
    /// Whether mail is waiting, without consuming it.
    pub fn has_pending(&mut self) -> bool {
        self.drain();
        !self.pending_mails.is_empty()
    }

    /// Whether a waiting mail asks for a turn.
    pub fn has_trigger(&mut self) -> bool {
        self.drain();
        self.pending_mails.iter().any(|mail| mail.trigger_turn)
    }

    /// The waiting mail, in sequence order, without consuming it.
    pub fn pending(&mut self) -> &VecDeque<Mail<T>> {
        self.drain();
        &self.pending_mails
    }

    /// The mail up to `seq` was handed to the agent's running turn (after it was queued
    /// there, so a turn that sees the mark finds the mail).
    pub fn mark_handed(&self, seq: u64) {
        self.shared.handed.fetch_max(seq, Ordering::AcqRel);
    }

    /// Take all waiting mail, in sequence order.
    pub fn take_all(&mut self) -> Vec<Mail<T>> {
        self.drain();
        self.pending_mails.drain(..).collect()
    }

    /// Resolves when mail has arrived that this receiver has not drained yet (at once if the
    /// queue holds some); mail already drained by the checks above does not count. Never
    /// misses a send, and is cancel-safe (it drains and returns in one step), so it can sit in
    /// a `select!`. Pending until the next mail, forever once nobody can send any.
    pub async fn changed(&mut self) {
        let shared = Arc::clone(&self.shared);
        loop {
            let arrived = shared.arrived.notified();
            tokio::pin!(arrived);
            // Registered before the queue is looked at, so a send in between still wakes it.
            arrived.as_mut().enable();
            if self.drain() {
                return;
            }
            arrived.await;
        }
    }

    /// Move what the queue holds into `pending_mails`; whether there was any.
    fn drain(&mut self) -> bool {
        let mut queue = self.shared.queue.lock();
        let any = !queue.mails.is_empty();
        self.pending_mails.extend(queue.mails.drain(..));
        any
    }
}

/// One mail between the agents of a tree.
#[derive(Debug, Clone)]
pub struct AgentMail {
    /// What the receiving model is told, recorded at its next step boundary.
    pub item: ResponseItem,
    /// What the receiver's clients are shown, in its running turn (v2's `subAgentActivity`
    /// `completed`); dropped when no turn runs.
    pub activity: Option<SubAgentActivityItem>,
    /// The sender's turn, when this mail asks for a turn: the new turn's `rootTurnId`.
    pub root_turn: Option<TurnId>,
}

impl AgentMail {
    /// Mail with no client item.
    pub fn model(item: ResponseItem) -> AgentMail {
        AgentMail {
            item,
            activity: None,
            root_turn: None,
        }
    }
}

/// An agent's mailbox.
pub type AgentMailbox = Mailbox<AgentMail>;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const SHORT: Duration = Duration::from_millis(50);
    const LONG: Duration = Duration::from_secs(5);

    fn bodies<T: Clone>(mails: &[Mail<T>]) -> Vec<T> {
        mails.iter().map(|mail| mail.body.clone()).collect()
    }

    #[tokio::test]
    async fn mail_arrives_in_send_order_with_increasing_seqs() {
        let (tx, mut rx) = mailbox();
        assert_eq!(tx.last_seq(), 0);
        let seqs: Vec<_> = ["a", "b", "c"]
            .into_iter()
            .map(|body| tx.send(body, false))
            .collect();
        assert_eq!(seqs, [Some(1), Some(2), Some(3)]);
        assert_eq!(tx.clone().last_seq(), 3);
        let mails = rx.take_all();
        assert_eq!(bodies(&mails), ["a", "b", "c"]);
        assert_eq!(mails.iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2, 3]);
    }

    #[tokio::test]
    async fn concurrent_senders_keep_seq_order_equal_to_channel_order() {
        let (tx, mut rx) = mailbox();
        std::thread::scope(|scope| {
            for sender in 0..4u32 {
                let tx = tx.clone();
                scope.spawn(move || {
                    for n in 0..250u32 {
                        tx.send((sender, n), n % 7 == 0);
                    }
                });
            }
        });
        let mails = rx.take_all();
        let seqs: Vec<u64> = mails.iter().map(|mail| mail.seq).collect();
        assert_eq!(seqs, (1..=1000).collect::<Vec<_>>());
        for sender in 0..4 {
            let sent: Vec<u32> = mails
                .iter()
                .filter(|mail| mail.body.0 == sender)
                .map(|mail| mail.body.1)
                .collect();
            assert_eq!(sent, (0..250).collect::<Vec<_>>());
        }
    }

    #[tokio::test]
    async fn checking_does_not_consume() {
        let (tx, mut rx) = mailbox();
        assert!(!rx.has_pending());
        tx.send("a", false);
        tx.send("b", false);
        assert!(rx.has_pending());
        assert!(rx.has_pending());
        assert_eq!(rx.pending().len(), 2);
        assert_eq!(bodies(&rx.take_all()), ["a", "b"]);
        assert!(!rx.has_pending());
        assert!(rx.take_all().is_empty());
    }

    #[tokio::test]
    async fn the_trigger_flag_is_kept_and_reported() {
        let (tx, mut rx) = mailbox();
        tx.send("quiet", false);
        assert!(!rx.has_trigger());
        tx.send("loud", true);
        assert!(rx.has_trigger());
        let flags: Vec<bool> = rx.take_all().iter().map(|m| m.trigger_turn).collect();
        assert_eq!(flags, [false, true]);
        assert!(!rx.has_trigger());
    }

    #[tokio::test]
    async fn a_send_from_another_task_wakes_a_waiting_receiver() {
        let (tx, mut rx) = mailbox();
        let waiter = tokio::spawn(async move {
            rx.changed().await;
            rx
        });
        tokio::time::sleep(SHORT).await;
        assert!(!waiter.is_finished());
        tokio::spawn(async move { tx.send("hello", true) });
        let mut rx = tokio::time::timeout(LONG, waiter).await.unwrap().unwrap();
        assert_eq!(bodies(&rx.take_all()), ["hello"]);
    }

    #[tokio::test]
    async fn changed_counts_only_mail_not_yet_drained() {
        let (tx, mut rx) = mailbox();
        tx.send("a", false);
        tokio::time::timeout(LONG, rx.changed()).await.unwrap();
        assert!(rx.has_pending());
        assert!(tokio::time::timeout(SHORT, rx.changed()).await.is_err());

        // Mail left in the channel still counts once the senders are gone; then it pends.
        tx.send("b", false);
        drop(tx);
        tokio::time::timeout(LONG, rx.changed()).await.unwrap();
        assert!(tokio::time::timeout(SHORT, rx.changed()).await.is_err());
        assert_eq!(bodies(&rx.take_all()), ["a", "b"]);
    }

    #[tokio::test]
    async fn a_watch_waiter_sees_the_new_seq_without_taking_mail() {
        let (tx, mut rx) = mailbox();
        tx.send("before", false);
        let mut watch = tx.watch();
        assert_eq!(*watch.borrow(), 1);
        let waiter = tokio::spawn(async move {
            watch.changed().await.unwrap();
            *watch.borrow()
        });
        tokio::time::sleep(SHORT).await;
        assert!(!waiter.is_finished());
        tx.send("after", false);
        assert_eq!(
            tokio::time::timeout(LONG, waiter).await.unwrap().unwrap(),
            2
        );
        assert_eq!(bodies(&rx.take_all()), ["before", "after"]);
    }

    #[tokio::test]
    async fn mail_is_unread_until_the_turn_records_what_was_handed() {
        let (tx, mut rx) = mailbox();
        assert!(!tx.unread());
        tx.send("a", false);
        assert!(tx.unread(), "queued mail is unread");
        let taken = rx.take_all();
        rx.mark_handed(taken[0].seq);
        assert!(tx.unread(), "handed mail is unread until recorded");
        let handed = tx.handed();
        tx.send("b", false);
        tx.mark_read(handed);
        assert!(tx.unread(), "mail sent after the hand-off is still unread");
        let seq = rx.take_all()[0].seq;
        rx.mark_handed(seq);
        tx.mark_read(tx.handed());
        assert!(!tx.unread());
        tx.mark_read(1);
        assert!(!tx.unread(), "the read mark never goes back");
    }

    #[tokio::test]
    async fn a_send_after_the_receiver_is_dropped_returns_none() {
        let (tx, rx) = mailbox();
        assert_eq!(tx.send(1, false), Some(1));
        drop(rx);
        assert_eq!(tx.send(2, true), None);
        assert_eq!(tx.last_seq(), 1);
    }
}
