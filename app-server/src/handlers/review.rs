//! `review/start` (docs/protocol.md §7.28): the target is checked and cleaned here, as the
//! reference does; the thread runs the review as a turn of its own (`Op::Review`) and answers
//! with that turn.

use weft_core::thread::Op;
use weft_protocol::{JsonRpcError, ReviewStartParams, ReviewStartResponse, ReviewTarget, Turn};

use crate::dispatch::{HandlerResult, ThreadReply};

/// `review/start`: a review turn on the thread the params name (replacing a running turn).
pub fn start(
    params: ReviewStartParams,
    reply: ThreadReply<ReviewStartResponse>,
) -> HandlerResult<Op> {
    let target = cleaned(params.target)?;
    let thread_id = params.thread_id;
    Ok(Op::Review {
        target,
        reply: reply.into_core(move |turn: Turn| ReviewStartResponse {
            turn,
            review_thread_id: thread_id,
        }),
    })
}

/// The target with its text trimmed; an empty branch, commit or instruction text is refused
/// with the reference's message. An empty commit title counts as none.
fn cleaned(target: ReviewTarget) -> Result<ReviewTarget, JsonRpcError> {
    let required = |text: String, what: &str| {
        let text = text.trim().to_string();
        if text.is_empty() {
            Err(JsonRpcError::invalid_request(format!(
                "{what} must not be empty"
            )))
        } else {
            Ok(text)
        }
    };
    Ok(match target {
        ReviewTarget::UncommittedChanges => ReviewTarget::UncommittedChanges,
        ReviewTarget::BaseBranch { branch } => ReviewTarget::BaseBranch {
            branch: required(branch, "branch")?,
        },
        ReviewTarget::Commit { sha, title } => ReviewTarget::Commit {
            sha: required(sha, "sha")?,
            title: title
                .map(|title| title.trim().to_string())
                .filter(|title| !title.is_empty()),
        },
        ReviewTarget::Custom { instructions } => ReviewTarget::Custom {
            instructions: required(instructions, "instructions")?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_texts_are_refused_with_the_reference_messages() {
        for (target, message) in [
            (
                ReviewTarget::BaseBranch {
                    branch: "   ".into(),
                },
                "branch must not be empty",
            ),
            (
                ReviewTarget::Commit {
                    sha: "\t".into(),
                    title: None,
                },
                "sha must not be empty",
            ),
            (
                ReviewTarget::Custom {
                    instructions: "\n\n".into(),
                },
                "instructions must not be empty",
            ),
        ] {
            let err = cleaned(target).unwrap_err();
            assert_eq!(err.code, -32600);
            assert_eq!(err.message, message);
        }
    }

    #[test]
    fn texts_are_trimmed_and_an_empty_title_is_none() {
        assert_eq!(
            cleaned(ReviewTarget::Commit {
                sha: " abc ".into(),
                title: Some("  ".into()),
            })
            .unwrap(),
            ReviewTarget::Commit {
                sha: "abc".into(),
                title: None
            }
        );
        assert_eq!(
            cleaned(ReviewTarget::BaseBranch {
                branch: " main\n".into()
            })
            .unwrap(),
            ReviewTarget::BaseBranch {
                branch: "main".into()
            }
        );
    }
}
