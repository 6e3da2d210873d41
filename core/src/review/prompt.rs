//! What a review is called and what its model is asked: the label clients show (the
//! `review` of `enteredReviewMode`, the reference's wording), the request naming the target
//! (Weft's own words), and what the thread's own conversation is told when the review ends.

use weft_protocol::ReviewTarget;

use super::output::ReviewOutput;

/// The reviewer's instructions (they replace the thread's base instructions for the review).
pub const REVIEW_INSTRUCTIONS: &str = include_str!("../prompts/review.md");

const EXIT_SUCCESS: &str = include_str!("../prompts/review_exit_success.md");
const EXIT_INTERRUPTED: &str = include_str!("../prompts/review_exit_interrupted.md");

/// The agent message an interrupted review ends with.
pub const INTERRUPTED_ASSISTANT_MESSAGE: &str =
    "Review was interrupted. Please re-run /review and wait for it to complete.";

/// The label of a review, as the reference writes it: `current changes`, `changes against
/// '<branch>'`, `commit <short sha>[: <title>]`, or the custom instructions.
pub fn user_facing_hint(target: &ReviewTarget) -> String {
    match target {
        ReviewTarget::UncommittedChanges => "current changes".to_string(),
        ReviewTarget::BaseBranch { branch } => format!("changes against '{branch}'"),
        ReviewTarget::Commit { sha, title } => {
            let short: String = sha.chars().take(7).collect();
            match title {
                Some(title) => format!("commit {short}: {title}"),
                None => format!("commit {short}"),
            }
        }
        ReviewTarget::Custom { instructions } => instructions.trim().to_string(),
    }
}

/// What the reviewer is asked: the target named, with how to see it (the diff Weft gathered
/// goes to the reviewer as a message of its own, [`Diff::render`](super::Diff::render)).
pub fn review_prompt(target: &ReviewTarget) -> String {
    match target {
        ReviewTarget::UncommittedChanges => "Review the changes in the working tree that are \
             not committed yet: staged, unstaged, and new untracked files. Report prioritized, \
             actionable findings."
            .to_string(),
        ReviewTarget::BaseBranch { branch } => format!(
            "Review the changes this branch would bring into the base branch '{branch}'. Find \
             the point where the current branch left {branch} (its upstream if it has one), e.g. \
             `git merge-base HEAD \"$(git rev-parse --abbrev-ref \"{branch}@{{upstream}}\")\"` \
             or `git merge-base HEAD {branch}`, and review `git diff` against that commit. \
             Report prioritized, actionable findings."
        ),
        ReviewTarget::Commit { sha, title } => {
            let named = match title {
                Some(title) => format!("commit {sha} (\"{title}\")"),
                None => format!("commit {sha}"),
            };
            format!(
                "Review the changes introduced by {named} (`git show {sha}`). Report \
                 prioritized, actionable findings."
            )
        }
        ReviewTarget::Custom { instructions } => instructions.trim().to_string(),
    }
}

/// What the thread's conversation records when a review finished: the reviewer's results
/// (its explanation and findings), so the next turn can act on them.
pub fn success_user_action(output: &ReviewOutput) -> String {
    let results = output
        .results()
        .lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n");
    EXIT_SUCCESS.trim_end().replace("{results}", &results)
}

/// What the thread's conversation records when a review was interrupted.
pub fn interrupted_user_action() -> String {
    EXIT_INTERRUPTED.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(title: Option<&str>) -> ReviewTarget {
        ReviewTarget::Commit {
            sha: "1234567deadbeef".into(),
            title: title.map(str::to_string),
        }
    }

    #[test]
    fn hints_are_the_references() {
        assert_eq!(
            user_facing_hint(&ReviewTarget::UncommittedChanges),
            "current changes"
        );
        assert_eq!(
            user_facing_hint(&ReviewTarget::BaseBranch {
                branch: "main".into()
            }),
            "changes against 'main'"
        );
        assert_eq!(user_facing_hint(&commit(None)), "commit 1234567");
        assert_eq!(
            user_facing_hint(&commit(Some("Tidy UI colors"))),
            "commit 1234567: Tidy UI colors"
        );
        assert_eq!(
            user_facing_hint(&ReviewTarget::Custom {
                instructions: " look at the parser \n".into()
            }),
            "look at the parser"
        );
    }

    #[test]
    fn prompts_name_the_target() {
        let uncommitted = review_prompt(&ReviewTarget::UncommittedChanges);
        assert!(uncommitted.contains("staged, unstaged, and new untracked files"));
        let branch = review_prompt(&ReviewTarget::BaseBranch {
            branch: "develop".into(),
        });
        assert!(branch.contains("base branch 'develop'"));
        assert!(branch.contains("git merge-base HEAD develop"));
        assert!(branch.contains("develop@{upstream}"));
        let titled = review_prompt(&commit(Some("Tidy UI colors")));
        assert!(titled.contains("commit 1234567deadbeef (\"Tidy UI colors\")"));
        assert!(review_prompt(&commit(None)).contains("git show 1234567deadbeef"));
        assert_eq!(
            review_prompt(&ReviewTarget::Custom {
                instructions: " only the docs ".into()
            }),
            "only the docs"
        );
    }

    #[test]
    fn the_conversation_is_told_the_results_or_the_interruption() {
        let output = ReviewOutput {
            overall_explanation: "No bugs.".into(),
            ..ReviewOutput::default()
        };
        let told = success_user_action(&output);
        assert!(told.starts_with("<user_action>"));
        assert!(told.contains("  No bugs.\n"));
        assert!(told.ends_with("</user_action>"));
        assert!(interrupted_user_action().contains("None."));
    }
}
