//! The guardian: when a thread's `approvalsReviewer` is `auto_review`, an approval question
//! of a command, a patch or an MCP tool call goes to a reviewing model before (instead of) the
//! user (docs/protocol.md §9.8, docs/architecture.md §8.10).
//!
//! One [`Guardian`] per turn, frozen with the turn's context, owns the reviews of that turn's
//! tool calls: it asks its model (the `[guardian]` model, else the thread's) under the policy
//! (`$WEFT_HOME/guardian.md`, else Weft's; plus the project's `.weft/guardian.md`), with no
//! tools offered and nothing but the model request leaving the process, and reports each review
//! as `item/autoApprovalReview/started` / `completed` (recorded in the rollout) with a
//! `guardianWarning`. It fails towards the user: a reviewer that errs, answers something
//! unreadable or runs out of time ([`GuardianConfig::timeout_secs`]) hands the question to the
//! client as a normal approval request; it never allows by default.

pub mod prompt;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;
use weft_protocol::{
    AutoReviewDecisionSource, GuardianApprovalReview, GuardianApprovalReviewAction,
    GuardianApprovalReviewStatus, GuardianCommandSource,
    ItemGuardianApprovalReviewCompletedNotification, ItemGuardianApprovalReviewStartedNotification,
    ThreadId, TurnId, wire_name,
};

use crate::config::GuardianConfig;
use crate::events::{SharedSink, ThreadEvent};
use crate::history::History;
use crate::model::{ModelClient, Prompt};
use crate::time::now_ms;
use prompt::{Assessment, Outcome};

/// The per-project policy file, relative to the thread's working directory.
pub const PROJECT_POLICY: &str = ".weft/guardian.md";
/// The user's policy file, in `$WEFT_HOME`.
pub const HOME_POLICY: &str = "guardian.md";
/// The largest policy file read (bytes); the rest is ignored.
const MAX_POLICY_BYTES: u64 = 64 * 1024;

/// The reviewer of one turn's approval questions.
pub struct Guardian {
    client: ModelClient,
    model: String,
    reasoning_effort: Option<String>,
    instructions: String,
    timeout: Duration,
    max_action_bytes: usize,
    max_transcript_bytes: usize,
    history: Arc<Mutex<History>>,
}

impl std::fmt::Debug for Guardian {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guardian")
            .field("model", &self.model)
            .finish()
    }
}

/// One approval question for the reviewer.
#[derive(Debug, Clone)]
pub struct ReviewRequest {
    /// The tool call's item.
    pub target_item_id: String,
    /// What the clients are shown.
    pub action: GuardianApprovalReviewAction,
    /// What the reviewer reads: the action in full (the patch, the arguments, the reason).
    pub details: serde_json::Value,
}

impl ReviewRequest {
    /// A command the model wants to run (`exec_command`); `unconfined`: outside the sandbox.
    pub fn command(
        item_id: &str,
        command: &str,
        cwd: &str,
        reason: Option<&str>,
        unconfined: bool,
    ) -> ReviewRequest {
        ReviewRequest {
            target_item_id: item_id.to_string(),
            action: GuardianApprovalReviewAction::Command {
                command: command.to_string(),
                cwd: cwd.to_string(),
                source: GuardianCommandSource::UnifiedExec,
            },
            details: serde_json::json!({
                "tool": "exec_command",
                "command": command,
                "cwd": cwd,
                "runs_outside_sandbox": unconfined,
                "agent_justification": reason,
            }),
        }
    }

    /// A patch the model wants to apply: the files it writes and the patch text.
    pub fn patch(
        item_id: &str,
        cwd: &str,
        files: Vec<String>,
        patch: &str,
        reason: Option<&str>,
    ) -> ReviewRequest {
        ReviewRequest {
            target_item_id: item_id.to_string(),
            details: serde_json::json!({
                "tool": "apply_patch",
                "cwd": cwd,
                "files": files,
                "why_approval_is_needed": reason,
                "patch": patch,
            }),
            action: GuardianApprovalReviewAction::ApplyPatch {
                cwd: cwd.to_string(),
                files,
            },
        }
    }

    /// An MCP tool call: the server, the tool (its title and annotations) and the arguments.
    pub fn mcp_tool(
        item_id: &str,
        server: &str,
        tool: &serde_json::Value,
        tool_name: &str,
        arguments: &serde_json::Value,
    ) -> ReviewRequest {
        let title = tool
            .get("title")
            .or_else(|| tool.pointer("/annotations/title"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_string);
        ReviewRequest {
            target_item_id: item_id.to_string(),
            details: serde_json::json!({
                "tool": "mcp",
                "server": server,
                "tool_name": tool_name,
                "tool_description": tool.get("description"),
                "tool_annotations": tool.get("annotations"),
                "arguments": arguments,
            }),
            action: GuardianApprovalReviewAction::McpToolCall {
                server: server.to_string(),
                tool_name: tool_name.to_string(),
                tool_title: title,
                connector_id: None,
                connector_name: None,
            },
        }
    }
}

/// Where a review happens: the turn's sink, ids and interrupt.
pub struct ReviewSite<'a> {
    /// Where the review's events go.
    pub sink: &'a SharedSink,
    /// The thread.
    pub thread_id: &'a ThreadId,
    /// The turn.
    pub turn_id: &'a TurnId,
    /// The turn's interrupt.
    pub cancel: &'a CancellationToken,
}

/// What became of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The reviewer allowed it: go ahead without asking.
    Approved,
    /// The reviewer denied it: do not; the text is for the model.
    Denied(String),
    /// The review failed or timed out: ask the user as without the guardian.
    AskUser,
    /// The turn was interrupted during the review.
    Cancelled,
}

impl Guardian {
    /// The reviewer of a turn: `client` speaks to the reviewer's provider, `model` and
    /// `reasoning_effort` are the turn's unless `[guardian]` names others; the policy is read
    /// now, from `home` and the project at `cwd`.
    pub fn new(
        config: &GuardianConfig,
        client: ModelClient,
        model: &str,
        reasoning_effort: Option<String>,
        home: &Path,
        cwd: &Path,
        history: Arc<Mutex<History>>,
    ) -> Guardian {
        let policy = read_policy(&home.join(HOME_POLICY));
        let project = read_policy(&cwd.join(PROJECT_POLICY));
        Guardian {
            client,
            model: config.model.clone().unwrap_or_else(|| model.to_string()),
            reasoning_effort: config.reasoning_effort.clone().or(reasoning_effort),
            instructions: prompt::instructions(
                policy.as_deref().unwrap_or(prompt::DEFAULT_POLICY),
                project.as_deref(),
            ),
            timeout: Duration::from_secs(config.timeout_secs),
            max_action_bytes: config.max_action_bytes,
            max_transcript_bytes: config.max_transcript_bytes,
            history,
        }
    }

    /// The request the reviewer's model gets: its instructions, one quoted message, no tools.
    fn prompt(&self, request: &ReviewRequest) -> Prompt {
        let transcript = prompt::transcript(self.history.lock().items(), self.max_transcript_bytes);
        Prompt {
            model: self.model.clone(),
            instructions: self.instructions.as_str().into(),
            input: vec![prompt::review_message(
                &transcript,
                &request.details,
                self.max_action_bytes,
            )],
            tools: Default::default(),
            parallel_tool_calls: false,
            reasoning_effort: self.reasoning_effort.clone(),
            output_schema: Some(prompt::output_schema()),
            ..Prompt::default()
        }
    }

    /// Reviews one question, reporting it to the turn's clients.
    pub async fn review(&self, site: ReviewSite<'_>, request: ReviewRequest) -> Verdict {
        let review_id = uuid::Uuid::now_v7().to_string();
        let started_at_ms = now_ms();
        let in_progress = GuardianApprovalReview {
            status: GuardianApprovalReviewStatus::InProgress,
            risk_level: None,
            user_authorization: None,
            rationale: None,
        };
        site.sink
            .emit(
                site.thread_id,
                ThreadEvent::GuardianReviewStarted(Box::new(
                    ItemGuardianApprovalReviewStartedNotification {
                        thread_id: site.thread_id.clone(),
                        turn_id: site.turn_id.clone(),
                        review_id: review_id.clone(),
                        target_item_id: Some(request.target_item_id.clone()),
                        action: request.action.clone(),
                        review: in_progress,
                        started_at_ms,
                    },
                )),
            )
            .await;
        let prompt = self.prompt(&request);
        let attempt = async {
            let stream = self.client.stream(&prompt).await?;
            crate::compact::collect_summary(stream).await
        };
        let answered = tokio::select! {
            answered = tokio::time::timeout(self.timeout, attempt) => answered,
            () = site.cancel.cancelled() => {
                let review = failed(GuardianApprovalReviewStatus::Aborted, None);
                complete(&site, &request, review_id, started_at_ms, review).await;
                return Verdict::Cancelled;
            }
        };
        let (verdict, review, warning) = match answered {
            Err(_) => {
                let why = format!(
                    "Automatic approval review did not answer within {} s; asking the user instead.",
                    self.timeout.as_secs()
                );
                let review = failed(GuardianApprovalReviewStatus::TimedOut, Some(why.clone()));
                (Verdict::AskUser, review, why)
            }
            Ok(Err(err)) => fell_back(&format!("the reviewer's model request failed: {err}")),
            Ok(Ok((text, _usage))) => match prompt::parse_assessment(&text) {
                Err(err) => fell_back(&err),
                Ok(assessment) => decided(assessment),
            },
        };
        site.sink
            .emit(
                site.thread_id,
                ThreadEvent::GuardianWarning { message: warning },
            )
            .await;
        complete(&site, &request, review_id, started_at_ms, review).await;
        verdict
    }
}

/// A review that could not decide: the question goes to the user.
fn fell_back(why: &str) -> (Verdict, GuardianApprovalReview, String) {
    let message =
        format!("Automatic approval review could not decide ({why}); asking the user instead.");
    let review = failed(GuardianApprovalReviewStatus::Aborted, Some(message.clone()));
    (Verdict::AskUser, review, message)
}

/// A review the reviewer decided.
fn decided(assessment: Assessment) -> (Verdict, GuardianApprovalReview, String) {
    let (verdict, status, word) = match assessment.outcome {
        Outcome::Allow => (
            Verdict::Approved,
            GuardianApprovalReviewStatus::Approved,
            "allowed",
        ),
        Outcome::Deny => (
            Verdict::Denied(prompt::denied_text(&assessment.rationale)),
            GuardianApprovalReviewStatus::Denied,
            "denied",
        ),
    };
    let warning = format!(
        "Automatic approval review {word} the action (risk: {}, user authorization: {}): {}",
        wire_name(&assessment.risk_level).unwrap_or_default(),
        wire_name(&assessment.user_authorization).unwrap_or_default(),
        assessment.rationale
    );
    let review = GuardianApprovalReview {
        status,
        risk_level: Some(assessment.risk_level),
        user_authorization: Some(assessment.user_authorization),
        rationale: Some(assessment.rationale),
    };
    (verdict, review, warning)
}

fn failed(
    status: GuardianApprovalReviewStatus,
    rationale: Option<String>,
) -> GuardianApprovalReview {
    GuardianApprovalReview {
        status,
        risk_level: None,
        user_authorization: None,
        rationale,
    }
}

async fn complete(
    site: &ReviewSite<'_>,
    request: &ReviewRequest,
    review_id: String,
    started_at_ms: i64,
    review: GuardianApprovalReview,
) {
    site.sink
        .emit(
            site.thread_id,
            ThreadEvent::GuardianReviewCompleted(Box::new(
                ItemGuardianApprovalReviewCompletedNotification {
                    thread_id: site.thread_id.clone(),
                    turn_id: site.turn_id.clone(),
                    review_id,
                    target_item_id: Some(request.target_item_id.clone()),
                    action: request.action.clone(),
                    review,
                    decision_source: AutoReviewDecisionSource::Agent,
                    started_at_ms,
                    completed_at_ms: now_ms(),
                },
            )),
        )
        .await;
}

/// A policy file's text, when it exists and is not empty (at most [`MAX_POLICY_BYTES`]).
fn read_policy(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    file.take(MAX_POLICY_BYTES).read_to_string(&mut text).ok()?;
    (!text.trim().is_empty()).then_some(text)
}

/// A denied review as `thread/approveGuardianDeniedAction` carries it: the reference's core
/// event, snake_case (docs/protocol.md §9.9). Members Weft does not need are ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct DeniedReview {
    /// The review's id.
    pub id: String,
    /// Where the review ended.
    pub status: ReviewStatus,
    /// What was reviewed (`{"type": …, …}`).
    pub action: ReviewedAction,
}

/// The status member of [`DeniedReview`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    /// Still running.
    InProgress,
    /// Allowed.
    Approved,
    /// Denied.
    Denied,
    /// Timed out.
    TimedOut,
    /// Abandoned.
    Aborted,
}

/// The action member of [`DeniedReview`]: an object with a `type`.
#[derive(Debug, Clone, Deserialize)]
pub struct ReviewedAction {
    /// The kind of action.
    #[serde(rename = "type")]
    pub kind: String,
    /// The rest, as sent.
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
}

impl DeniedReview {
    /// The note for the model's history when the user overrides this denial; `None` when the
    /// review was not a denial (nothing to override).
    pub fn approval_note(&self) -> Option<String> {
        if self.status != ReviewStatus::Denied {
            return None;
        }
        let mut action = self.action.rest.clone();
        action.insert(
            "type".into(),
            serde_json::Value::String(self.action.kind.clone()),
        );
        Some(prompt::user_approved_text(&serde_json::Value::Object(
            action,
        )))
    }
}

#[cfg(test)]
mod tests;
