use serde_json::json;
use weft_protocol::GuardianRiskLevel;

use super::*;

#[test]
fn a_failed_review_asks_the_user_and_never_allows() {
    let (verdict, review, warning) = fell_back("the reviewer's answer is not a JSON object");
    assert_eq!(verdict, Verdict::AskUser);
    assert_eq!(review.status, GuardianApprovalReviewStatus::Aborted);
    assert!(warning.contains("asking the user"), "{warning}");
    assert!(review.rationale.unwrap().contains("not a JSON object"));
}

#[test]
fn decisions_carry_the_reviewers_reason() {
    let denied = prompt::parse_assessment(
        r#"{"outcome":"deny","risk_level":"high","user_authorization":"low","rationale":"Deletes the home directory."}"#,
    )
    .unwrap();
    let (verdict, review, warning) = decided(denied);
    let Verdict::Denied(text) = verdict else {
        panic!("{verdict:?}")
    };
    assert!(
        text.contains("Reason: Deletes the home directory."),
        "{text}"
    );
    assert_eq!(review.status, GuardianApprovalReviewStatus::Denied);
    assert_eq!(review.risk_level, Some(GuardianRiskLevel::High));
    assert_eq!(
        warning,
        "Automatic approval review denied the action (risk: high, user authorization: low): Deletes the home directory."
    );
    let allowed = prompt::parse_assessment(r#"{"outcome":"allow"}"#).unwrap();
    assert_eq!(decided(allowed).0, Verdict::Approved);
}

#[test]
fn only_a_denial_can_be_overridden() {
    let event = json!({
        "id": "review-1",
        "turn_id": "turn-1",
        "started_at_ms": 1,
        "completed_at_ms": 2,
        "status": "denied",
        "risk_level": "high",
        "rationale": "no",
        "decision_source": "agent",
        "action": {"type": "command", "source": "shell", "command": "rm -rf build", "cwd": "/w"},
    });
    let denied: DeniedReview = serde_json::from_value(event.clone()).unwrap();
    let note = denied.approval_note().unwrap();
    assert!(
        note.contains("rm -rf build") && note.contains("\"command\""),
        "{note}"
    );
    let mut approved = event.clone();
    approved["status"] = json!("approved");
    let approved: DeniedReview = serde_json::from_value(approved).unwrap();
    assert!(approved.approval_note().is_none());
    for bad in [
        json!({"id": "r", "status": "denied"}),
        json!({"id": "r", "status": "refused", "action": {"type": "command"}}),
        json!({"status": "denied", "action": {"type": "command"}}),
        json!("denied"),
    ] {
        assert!(
            serde_json::from_value::<DeniedReview>(bad.clone()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn policies_come_from_the_files_when_they_have_text() {
    let dir = tempfile::tempdir().unwrap();
    assert!(read_policy(&dir.path().join("guardian.md")).is_none());
    std::fs::write(dir.path().join("guardian.md"), "  \n").unwrap();
    assert!(read_policy(&dir.path().join("guardian.md")).is_none());
    std::fs::write(dir.path().join("guardian.md"), "Deny everything.").unwrap();
    assert_eq!(
        read_policy(&dir.path().join("guardian.md")).as_deref(),
        Some("Deny everything.")
    );
}
