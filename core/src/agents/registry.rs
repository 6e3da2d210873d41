//! The agents of one root thread tree and the four guards on spawning one: its depth below the
//! root, its path (unique in the tree), the cap on live sub-agents, and its nickname.
//!
//! A spawn first [reserves](AgentRegistry::reserve) — every guard checked and what it needs
//! held at once — then [commits](SpawnReservation::commit) once its thread exists. A
//! reservation dropped uncommitted gives everything back, so no failure path of a spawn has to.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use weft_protocol::ThreadId;

use super::names::NicknamePool;

/// The limits of one tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentLimits {
    /// The most sub-agents open at once (the root not counted); `None` for no cap.
    pub max_threads: Option<usize>,
    /// The deepest a sub-agent may sit below the root (the root is depth 0, its children 1).
    pub max_depth: u32,
}

/// One sub-agent of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRecord {
    /// The agent's own thread.
    pub thread_id: ThreadId,
    /// The thread that spawned it.
    pub parent_thread_id: ThreadId,
    /// Its depth below the root (1 for the root's children).
    pub depth: u32,
    /// Its path in the tree, when spawned with one; unique in the tree.
    pub path: Option<String>,
    /// Its nickname from the tree's [`NicknamePool`].
    pub nickname: String,
    /// The role it was spawned with.
    pub role: Option<String>,
    /// Whether it has been closed (it keeps its path and nickname: it can be reopened).
    pub closed: bool,
}

/// Why a spawn (or a reopen) was refused. The texts are what the model reads.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpawnRefusal {
    /// As many sub-agents as the cap allows are open.
    #[error("agent thread limit reached")]
    ThreadLimit,
    /// The new agent would sit deeper than `max_depth`.
    #[error("Agent depth limit reached. Solve the task yourself.")]
    DepthLimit,
    /// Another agent of the tree has this path.
    #[error("agent path `{0}` is already taken")]
    PathTaken(String),
    /// No agent of the tree has this thread id (only from [`AgentRegistry::reopen`]).
    #[error("agent `{0}` not found")]
    NotFound(ThreadId),
}

/// The registry of one root thread tree: its sub-agents in spawn order and the guards on
/// spawning more.
#[derive(Debug)]
pub struct AgentRegistry {
    root: ThreadId,
    limits: AgentLimits,
    /// Open sub-agents plus uncommitted reservations: what the cap counts. Changed only under
    /// `state`'s lock (so a reservation takes its slot, path and name at once), read without it.
    live: AtomicUsize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// In spawn order; a tree has few agents, so lookups scan.
    records: Vec<AgentRecord>,
    /// Paths of every agent (open or closed) and of uncommitted reservations.
    paths: HashSet<String>,
    names: NicknamePool,
}

impl State {
    fn find(&mut self, id: &ThreadId) -> Option<&mut AgentRecord> {
        self.records
            .iter_mut()
            .find(|record| record.thread_id == *id)
    }
}

impl AgentRegistry {
    /// A registry for the tree rooted at `root`, with no agents yet.
    pub fn new(root: ThreadId, limits: AgentLimits) -> Arc<AgentRegistry> {
        AgentRegistry::with_pool(root, limits, NicknamePool::new())
    }

    fn with_pool(root: ThreadId, limits: AgentLimits, names: NicknamePool) -> Arc<AgentRegistry> {
        Arc::new(AgentRegistry {
            root,
            limits,
            live: AtomicUsize::new(0),
            state: Mutex::new(State {
                records: Vec::new(),
                paths: HashSet::new(),
                names,
            }),
        })
    }

    /// The tree's root thread.
    pub fn root(&self) -> &ThreadId {
        &self.root
    }

    /// The tree's limits.
    pub fn limits(&self) -> &AgentLimits {
        &self.limits
    }

    /// Reserve a spawn below a parent at `parent_depth`: checks the depth, then the path, then
    /// the cap, and holds a slot, the path and a nickname until the reservation is committed
    /// or dropped. A refusal holds nothing.
    pub fn reserve(
        self: &Arc<Self>,
        parent_depth: u32,
        path: Option<String>,
    ) -> Result<SpawnReservation, SpawnRefusal> {
        let depth = parent_depth.saturating_add(1);
        if depth > self.limits.max_depth {
            return Err(SpawnRefusal::DepthLimit);
        }
        let mut state = self.state.lock();
        if let Some(path) = &path
            && state.paths.contains(path)
        {
            return Err(SpawnRefusal::PathTaken(path.clone()));
        }
        self.take_slot()?;
        if let Some(path) = &path {
            state.paths.insert(path.clone());
        }
        let nickname = state.names.take();
        drop(state);
        Ok(SpawnReservation {
            registry: Arc::clone(self),
            depth,
            path,
            nickname,
            committed: false,
        })
    }

    /// Re-register an agent after a daemon restart. An open record takes a slot even past the
    /// cap (it existed); its path and nickname are marked taken so they are not handed out
    /// again. Restoring a known thread id replaces its record.
    pub fn restore(&self, record: AgentRecord) {
        let mut state = self.state.lock();
        if let Some(path) = &record.path {
            state.paths.insert(path.clone());
        }
        state.names.mark_taken(&record.nickname);
        let open = !record.closed;
        let was_open = match state.find(&record.thread_id) {
            Some(known) => !std::mem::replace(known, record).closed,
            None => {
                state.records.push(record);
                false
            }
        };
        match (was_open, open) {
            (false, true) => _ = self.live.fetch_add(1, Ordering::AcqRel),
            (true, false) => self.free_slot(),
            _ => {}
        }
    }

    /// Close an agent: it no longer counts against the cap, but keeps its path and nickname
    /// (it can be reopened). `None` when the id is unknown or the agent already closed.
    pub fn close(&self, id: &ThreadId) -> Option<AgentRecord> {
        let mut state = self.state.lock();
        let record = state.find(id)?;
        if record.closed {
            return None;
        }
        record.closed = true;
        self.free_slot();
        Some(record.clone())
    }

    /// Reopen a closed agent, which takes a slot again ([`SpawnRefusal::ThreadLimit`] when the
    /// cap is full). An agent already open is returned as it is, without a second slot.
    pub fn reopen(&self, id: &ThreadId) -> Result<AgentRecord, SpawnRefusal> {
        let mut state = self.state.lock();
        let record = state
            .find(id)
            .ok_or_else(|| SpawnRefusal::NotFound(id.clone()))?;
        if record.closed {
            self.take_slot()?;
            record.closed = false;
        }
        Ok(record.clone())
    }

    /// The agent with this thread id.
    pub fn get(&self, id: &ThreadId) -> Option<AgentRecord> {
        self.state.lock().find(id).cloned()
    }

    /// The agent with this path.
    pub fn by_path(&self, path: &str) -> Option<AgentRecord> {
        self.state
            .lock()
            .records
            .iter()
            .find(|record| record.path.as_deref() == Some(path))
            .cloned()
    }

    /// Every agent of the tree in spawn (or restore) order, closed ones included.
    pub fn agents(&self) -> Vec<AgentRecord> {
        self.state.lock().records.clone()
    }

    /// How many slots are taken: open agents plus uncommitted reservations.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }

    /// Take a slot under the cap (a compare-and-swap loop, so the count never passes it).
    fn take_slot(&self) -> Result<(), SpawnRefusal> {
        let under_cap = |n: usize| self.limits.max_threads.is_none_or(|max| n < max);
        self.live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                under_cap(n).then_some(n + 1)
            })
            .map(drop)
            .map_err(|_| SpawnRefusal::ThreadLimit)
    }

    /// Give a slot back (never below zero).
    fn free_slot(&self) {
        let _ = self
            .live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }
}

/// A spawn that passed every guard and holds a slot, its path and its nickname. Commit it once
/// the agent's thread exists; dropped uncommitted, it gives all three back.
#[derive(Debug)]
pub struct SpawnReservation {
    registry: Arc<AgentRegistry>,
    depth: u32,
    path: Option<String>,
    nickname: String,
    committed: bool,
}

impl SpawnReservation {
    /// The nickname reserved for the agent.
    pub fn nickname(&self) -> &str {
        &self.nickname
    }

    /// The agent's depth below the root.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The path reserved for the agent.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Record the agent (`thread_id` a thread new to the registry), which keeps the slot.
    pub fn commit(
        mut self,
        thread_id: ThreadId,
        parent_thread_id: ThreadId,
        role: Option<String>,
    ) -> AgentRecord {
        let record = AgentRecord {
            thread_id,
            parent_thread_id,
            depth: self.depth,
            path: self.path.take(),
            nickname: std::mem::take(&mut self.nickname),
            role,
            closed: false,
        };
        self.registry.state.lock().records.push(record.clone());
        self.committed = true;
        record
    }
}

impl Drop for SpawnReservation {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        let mut state = self.registry.state.lock();
        if let Some(path) = &self.path {
            state.paths.remove(path);
        }
        state.names.give_back(&self.nickname);
        self.registry.free_slot();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;

    use super::*;

    fn id(n: u32) -> ThreadId {
        ThreadId::from(format!("00000000-0000-7000-8000-{n:012}"))
    }

    fn registry(max_threads: Option<usize>, names: &[&str]) -> Arc<AgentRegistry> {
        let limits = AgentLimits {
            max_threads,
            max_depth: 2,
        };
        let names = names.iter().map(|name| (*name).to_owned()).collect();
        AgentRegistry::with_pool(id(0), limits, NicknamePool::with_names(names))
    }

    fn refusal(registry: &Arc<AgentRegistry>, depth: u32, path: Option<&str>) -> SpawnRefusal {
        registry
            .reserve(depth, path.map(str::to_owned))
            .unwrap_err()
    }

    fn spawn(registry: &Arc<AgentRegistry>, n: u32, path: &str) -> AgentRecord {
        let reservation = registry.reserve(0, Some(path.to_owned())).unwrap();
        reservation.commit(id(n), id(0), None)
    }

    /// Once every agent is closed, `path` stays taken and Nash's nickname is not given again
    /// as it was.
    fn names_stay_taken(registry: &Arc<AgentRegistry>, path: &str) {
        assert_eq!(
            refusal(registry, 0, Some(path)),
            SpawnRefusal::PathTaken(path.into())
        );
        assert_eq!(
            registry.reserve(0, None).unwrap().nickname(),
            "Nash the 2nd"
        );
    }

    #[test]
    fn each_guard_refuses_with_its_text_in_order_and_holds_nothing() {
        let registry = registry(Some(1), &["Nash", "Curie"]);
        let held = registry.reserve(1, Some("a".into())).unwrap();
        assert_eq!((held.depth(), held.path()), (2, Some("a")));

        let depth = refusal(&registry, 2, Some("a")).to_string();
        assert_eq!(depth, "Agent depth limit reached. Solve the task yourself.");
        let path = refusal(&registry, 0, Some("a"));
        assert_eq!(path, SpawnRefusal::PathTaken("a".into()));
        assert_eq!(path.to_string(), "agent path `a` is already taken");
        let full = refusal(&registry, 0, Some("b")).to_string();
        assert_eq!(full, "agent thread limit reached");
        assert_eq!(registry.live(), 1);

        // The refused "b" was not held, nor a second nickname.
        drop(held);
        let b = registry.reserve(0, Some("b".into())).unwrap();
        assert!(["Nash", "Curie"].contains(&b.nickname()));
        assert_eq!(refusal(&registry, 0, None), SpawnRefusal::ThreadLimit);
    }

    #[test]
    fn a_dropped_reservation_frees_its_slot_path_and_name_and_a_commit_keeps_them() {
        let registry = registry(Some(1), &["Nash"]);
        let reservation = registry.reserve(0, Some("a".into())).unwrap();
        assert_eq!((reservation.nickname(), registry.live()), ("Nash", 1));
        drop(reservation);
        assert_eq!(registry.live(), 0);

        let record = spawn(&registry, 1, "a");
        assert_eq!((record.nickname.as_str(), record.depth), ("Nash", 1));
        assert_eq!(registry.live(), 1);
        assert_eq!(registry.get(&id(1)), Some(record.clone()));
        assert_eq!(registry.by_path("a"), Some(record.clone()));
        assert_eq!(registry.agents(), vec![record]);
        registry.close(&id(1));
        names_stay_taken(&registry, "a");
    }

    #[test]
    fn close_frees_the_slot_and_reopen_takes_it_again() {
        let registry = registry(Some(1), &["Nash", "Curie"]);
        spawn(&registry, 1, "a");
        let closed = registry.close(&id(1)).unwrap();
        assert!(closed.closed);
        assert_eq!(registry.close(&id(1)), None);
        assert_eq!(registry.close(&id(9)), None);
        assert_eq!(registry.live(), 0);

        spawn(&registry, 2, "b");
        assert_eq!(registry.reopen(&id(1)), Err(SpawnRefusal::ThreadLimit));
        assert!(registry.get(&id(1)).unwrap().closed);
        registry.close(&id(2));
        assert!(!registry.reopen(&id(1)).unwrap().closed);
        assert!(registry.reopen(&id(1)).is_ok());
        assert_eq!(registry.live(), 1);
        assert_eq!(registry.reopen(&id(9)), Err(SpawnRefusal::NotFound(id(9))));
        let paths: Vec<_> = registry.agents().into_iter().map(|r| r.path).collect();
        assert_eq!(paths, [Some("a".to_owned()), Some("b".to_owned())]);
    }

    #[test]
    fn restore_takes_slots_past_the_cap_and_marks_paths_and_names_taken() {
        let registry = registry(Some(1), &["Nash", "Curie"]);
        let record = |n, path: &str, nickname: &str, closed| AgentRecord {
            thread_id: id(n),
            parent_thread_id: id(0),
            depth: 1,
            path: Some(path.to_owned()),
            nickname: nickname.to_owned(),
            role: Some("worker".into()),
            closed,
        };
        registry.restore(record(1, "a", "Nash", false));
        registry.restore(record(2, "b", "Curie the 2nd", false));
        registry.restore(record(3, "c", "Curie", true));
        assert_eq!(registry.live(), 2);
        assert_eq!(refusal(&registry, 0, None), SpawnRefusal::ThreadLimit);
        registry.close(&id(1));
        registry.close(&id(2));
        names_stay_taken(&registry, "c");
        registry.restore(record(1, "a", "Nash", false));
        assert_eq!((registry.live(), registry.agents().len()), (1, 3));
    }

    #[test]
    fn concurrent_reservations_never_pass_the_cap() {
        const CAP: usize = 3;
        let registry = registry(Some(CAP), &["Nash", "Curie"]);
        let held = AtomicUsize::new(0);
        let start = Barrier::new(8);
        std::thread::scope(|scope| {
            for thread in 0..8u32 {
                let (registry, held, start) = (&registry, &held, &start);
                scope.spawn(move || {
                    start.wait();
                    for round in 0..300u32 {
                        let Ok(reservation) = registry.reserve(0, None) else {
                            continue;
                        };
                        assert!(held.fetch_add(1, Ordering::SeqCst) < CAP);
                        assert!(registry.live() <= CAP);
                        held.fetch_sub(1, Ordering::SeqCst);
                        if round % 2 == 0 {
                            let n = 1 + thread * 1000 + round;
                            reservation.commit(id(n), id(0), None);
                            assert!(registry.close(&id(n)).is_some());
                        }
                    }
                });
            }
        });
        assert_eq!(registry.live(), 0);
        let held: Vec<_> = (0..5)
            .filter_map(|_| registry.reserve(0, None).ok())
            .collect();
        assert_eq!(held.len(), CAP);
    }
}
