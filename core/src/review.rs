//! Code review (`review/start`, docs/protocol.md §7.28): the pure parts the review task
//! (`task/review.rs`) runs with — what the target is called and what the model is asked
//! (`prompt.rs`), the diff attached up front (`diff.rs`), and reading and rendering what the
//! reviewer answers (`output.rs`).

mod diff;
mod output;
mod prompt;

pub use diff::{Diff, collect_diff};
pub use output::{REVIEW_FALLBACK_MESSAGE, ReviewFinding, ReviewOutput, parse_review_output};
pub use prompt::{
    INTERRUPTED_ASSISTANT_MESSAGE, REVIEW_INSTRUCTIONS, interrupted_user_action, review_prompt,
    success_user_action, user_facing_hint,
};
