//! A lean replay is the full replay with every turn but the last left in the file: with those
//! read back, the two are equal.

use std::path::Path;

use weft_protocol::TurnItemsView;

use super::super::index::RolloutIndex;
use super::super::read_rollout;
use super::{complete_turns, read_rollout_lean, replay_from_index, summary_from_index};

/// Assert that the lean replay of `path` matches [`read_rollout`], field by field.
pub(crate) fn assert_same(path: &Path) {
    let full = read_rollout(path).unwrap();
    let index = RolloutIndex::build(path).unwrap();
    let mut lean = replay_from_index(&index).unwrap();
    assert!(lean.turns.len() <= 1, "only the last turn is held");
    assert_eq!(
        lean.turns.last().map(|t| &t.id),
        full.turns.last().map(|t| &t.id)
    );
    if let Some(last) = lean.turns.last() {
        assert_eq!(
            last.items_view,
            TurnItemsView::Full,
            "the last turn is whole"
        );
    }
    lean.turns = complete_turns(&index, std::mem::take(&mut lean.turns)).unwrap();
    assert_eq!(lean, full);
    // With no turn held (a loaded thread running its first turn), none is put before.
    assert_eq!(complete_turns(&index, Vec::new()).unwrap(), Vec::new());
    assert_eq!(read_rollout_lean(path).unwrap().history, full.history);
    // A reader's summary is the same thread without the history and the token usage; its
    // last turn's items are read back with the others.
    let mut summary = summary_from_index(&index).unwrap();
    assert!(summary.history.is_empty() && summary.token_usage.is_none());
    assert!(summary.turns.iter().all(|t| t.items.is_empty()));
    summary.turns = complete_turns(&index, std::mem::take(&mut summary.turns)).unwrap();
    assert_eq!(summary.thread(Some(path)), full.thread(Some(path)));
    assert_eq!(summary.turns, full.turns);
}
