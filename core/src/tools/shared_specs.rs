//! One copy of a tool list for every turn that offers it.
//!
//! A turn's tool definitions are built when it starts and kept with its prompt until it ends.
//! Most turns of a daemon offer the same list (the built-ins, the multi-agent namespace, the
//! same MCP servers), and as `serde_json` values a list weighs tens of KiB: with two hundred
//! turns in flight the copies were a quarter of the heap (bench/README.md, "Issue 29").
//! [`SharedSpecs::share`] hands a turn the list a running turn already holds when the two are
//! equal, so the copies are only as many as the distinct lists in use.

use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use serde_json::Value;

/// How many distinct lists are remembered; an older one is forgotten (its turns keep it).
const REMEMBERED: usize = 8;

/// The tool lists turns hold now, to hand out again (weak: a list goes with its last turn).
#[derive(Debug, Default)]
pub struct SharedSpecs {
    lists: Mutex<Vec<Weak<Vec<Value>>>>,
}

impl SharedSpecs {
    /// `specs` as a shared list: one a turn holds already when it is equal, else `specs`.
    pub fn share(&self, specs: Vec<Value>) -> Arc<Vec<Value>> {
        let mut lists = self.lists.lock();
        lists.retain(|list| list.strong_count() > 0);
        if let Some(held) = lists
            .iter()
            .filter_map(Weak::upgrade)
            .find(|held| **held == specs)
        {
            return held;
        }
        let shared = Arc::new(specs);
        if lists.len() >= REMEMBERED {
            lists.remove(0);
        }
        lists.push(Arc::downgrade(&shared));
        shared
    }

    /// How many lists are held by some turn now.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.lists
            .lock()
            .iter()
            .filter(|list| list.strong_count() > 0)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn specs(name: &str) -> Vec<Value> {
        vec![json!({"type": "function", "name": name, "parameters": {"type": "object"}})]
    }

    #[test]
    fn equal_lists_are_one_copy_and_a_list_goes_with_its_last_turn() {
        let shared = SharedSpecs::default();
        let first = shared.share(specs("shell"));
        let second = shared.share(specs("shell"));
        assert!(
            Arc::ptr_eq(&first, &second),
            "an equal list is the held one"
        );
        let other = shared.share(specs("apply_patch"));
        assert!(!Arc::ptr_eq(&first, &other));
        assert_eq!(*other, specs("apply_patch"));
        assert_eq!(shared.held(), 2);
        drop((first, second));
        assert_eq!(shared.held(), 1, "no turn holds the first list any more");
        let again = shared.share(specs("shell"));
        assert_eq!(*again, specs("shell"), "built anew once forgotten");
    }

    #[test]
    fn only_the_latest_lists_are_remembered() {
        let shared = SharedSpecs::default();
        let held: Vec<_> = (0..=REMEMBERED)
            .map(|i| shared.share(specs(&format!("tool_{i}"))))
            .collect();
        // The oldest fell out of the memory; its turn still has it whole.
        let oldest = shared.share(specs("tool_0"));
        assert!(!Arc::ptr_eq(&oldest, &held[0]));
        assert_eq!(*oldest, *held[0]);
        let newest = shared.share(specs(&format!("tool_{REMEMBERED}")));
        assert!(Arc::ptr_eq(&newest, &held[REMEMBERED]));
    }
}
