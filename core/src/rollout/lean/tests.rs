//! A lean replay is the full replay with earlier turns' items left in the file: with the items
//! read back, the two are equal.

use std::path::Path;

use weft_protocol::TurnItemsView;

use super::super::index::RolloutIndex;
use super::super::read_rollout;
use super::{read_rollout_lean, replay_from_index, turns_with_items};

/// Assert that the lean replay of `path` matches [`read_rollout`], field by field.
pub(crate) fn assert_same(path: &Path) {
    let full = read_rollout(path).unwrap();
    let index = RolloutIndex::build(path).unwrap();
    let mut lean = replay_from_index(&index).unwrap();
    let before_last = lean.turns.len().saturating_sub(1);
    assert!(
        lean.turns[..before_last]
            .iter()
            .all(|t| t.items_view == TurnItemsView::NotLoaded && t.items.is_empty()),
        "earlier turns are summaries"
    );
    if let Some(last) = lean.turns.last() {
        assert_eq!(
            last.items_view,
            TurnItemsView::Full,
            "the last turn is whole"
        );
    }
    turns_with_items(&index, &mut lean.turns).unwrap();
    assert_eq!(lean, full);
    assert_eq!(read_rollout_lean(path).unwrap().history, full.history);
}
