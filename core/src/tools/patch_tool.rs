//! `apply_patch` as a tool: verify, ask when the policy says so, write, and report.
//!
//! 1. The patch is parsed and verified against the files ([`plan_patch`]) — nothing is
//!    written, and a patch that fails gets `apply_patch verification failed: …` with no item
//!    (as the reference: the `fileChange` item starts only for a verified patch).
//! 2. The written paths are checked against the sandbox's writable roots
//!    ([`SandboxSpec::can_write`], symlinks resolved; a root's `.git` and Weft's home count as
//!    outside); the approval policy decides whether to ask (`approval.rs`). Under `never`, a
//!    path outside the roots rejects the patch:
//!    `patch rejected: writing outside of the sandbox's writable roots: <path>`.
//! 3. `item/started {fileChange, inProgress}` with every change and its diff; if asking,
//!    `waitingOnApproval` and `item/fileChange/requestApproval`.
//! 4. The plan is written ([`apply_plan_with`]; it refuses if a file changed since step 1), the
//!    item completes (`completed`, `failed`, or `declined`), and `turn/diff/updated` carries
//!    the turn's aggregate diff ([`TurnDiffTracker`]).
//!
//! Files are read and written through [`SandboxFiles`]: a path inside the writable roots
//! only beneath its root's directory handle, following no symlink, so what step 2 checked is
//! what step 4 writes even if a sandboxed command swaps a directory for a symlink meanwhile
//! (the write then fails). Approved paths outside the roots, and everything under
//! `danger-full-access`, are written by path as they are.
//!
//! What the model gets on success mirrors the reference: the freeform variant's
//! `Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n…`,
//! the function variant's `{"output": "Success. …", "metadata": {"exit_code": 0,
//! "duration_seconds": 0.0}}`. A declined or cancelled patch: `patch rejected by user`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::Value;
use weft_protocol::server_requests::FileChangeRequestApprovalParams;
use weft_protocol::{FileChangeItem, ItemId, PatchApplyStatus, ThreadItem, TurnId};

use super::apply_patch::{
    self, PatchError, PatchPlan, SandboxFiles, TurnDiffTracker, apply_plan_with, path_is_writable,
    plan_patch_with,
};
use super::approval::{self, ApprovalWaits, Decision, Mode, PatchPlanDecision, SessionApprovals};
use super::context::{ToolCall, ToolInput, ToolTurn};
use super::tool::{Concurrency, Effects, Tool};
use crate::events::{ServerRequestParams, ThreadEvent};
use crate::guardian::{ReviewRequest, Verdict};
use crate::model::ToolOutput;
use crate::sandbox::SandboxSpec;
use crate::time::now_ms;

/// What the model is told when the user declines or cancels a patch.
pub const PATCH_REJECTED: &str = "patch rejected by user";

/// What a model that calls `apply_patch` in Plan mode is told.
pub const PLAN_MODE_NO_PATCH: &str = "apply_patch is not available in Plan mode: the workspace is read-only. Propose the change in your plan instead.";

/// The running turn's aggregate diff (kept by the thread: a new turn starts a new one).
pub(crate) type TurnDiff = Mutex<Option<(TurnId, TurnDiffTracker)>>;

/// `apply_patch`, as a function (the variant offered) or a custom (freeform) tool call; in
/// Plan mode neither offered nor served (docs/protocol.md §7.25). Exclusive.
pub(crate) struct ApplyPatchTool {
    /// `acceptForSession` grants.
    pub approvals: Arc<SessionApprovals>,
    /// Pending approvals (the `waitingOnApproval` flag).
    pub waits: Arc<ApprovalWaits>,
    /// The turn's aggregate diff.
    pub diff: Arc<TurnDiff>,
    /// Plan mode: every call is refused.
    pub plan_mode: bool,
}

#[async_trait]
impl Tool for ApplyPatchTool {
    fn name(&self) -> &str {
        apply_patch::TOOL_NAME
    }

    fn specs(&self) -> Vec<Value> {
        if self.plan_mode {
            Vec::new()
        } else {
            vec![apply_patch::function_tool_spec()]
        }
    }

    /// Either variant: a model may call it as a custom tool though the function is offered.
    fn claims(&self, call: &ToolCall) -> bool {
        call.name == apply_patch::TOOL_NAME
    }

    fn effects(&self) -> Effects {
        Effects {
            mutates: true,
            concurrency: Concurrency::Exclusive,
        }
    }

    async fn call(&self, call: &ToolCall, turn: &ToolTurn) -> ToolOutput {
        let text = if self.plan_mode {
            PLAN_MODE_NO_PATCH.to_string()
        } else {
            match &call.input {
                ToolInput::Function(args) => {
                    match apply_patch::patch_from_function_arguments(args) {
                        Ok(patch) => {
                            apply(self, &call.call_id, &patch, Variant::Function, turn).await
                        }
                        Err(err) => format!("failed to parse function arguments: {err}"),
                    }
                }
                ToolInput::Custom(patch) => {
                    apply(self, &call.call_id, patch, Variant::Freeform, turn).await
                }
            }
        };
        ToolOutput::Text(text)
    }
}

/// How the model called the tool (decides the shape of the answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// JSON arguments `{"input": …}`.
    Function,
    /// A custom tool call with the raw patch.
    Freeform,
}

/// A shell-like result: `exit_code` and `text`, shaped for the variant.
fn result_text(variant: Variant, exit_code: i32, text: &str, elapsed: Duration) -> String {
    let seconds = (elapsed.as_secs_f64() * 10.0).round() / 10.0;
    match variant {
        Variant::Freeform => {
            format!("Exit code: {exit_code}\nWall time: {seconds} seconds\nOutput:\n{text}")
        }
        Variant::Function => serde_json::json!({
            "output": text,
            "metadata": {"exit_code": exit_code, "duration_seconds": seconds},
        })
        .to_string(),
    }
}

struct PatchItem<'a> {
    id: &'a str,
    plan: &'a PatchPlan,
    started_at: i64,
}

impl PatchItem<'_> {
    fn wire(&self, status: PatchApplyStatus) -> ThreadItem {
        let mut item = ThreadItem::from(FileChangeItem {
            id: ItemId::from(self.id.to_string()),
            changes: self.plan.protocol_changes(),
            status,
        });
        item.started_at_ms = Some(self.started_at);
        if status != PatchApplyStatus::InProgress {
            item.completed_at_ms = Some(now_ms());
        }
        item
    }

    async fn start(&self, turn: &ToolTurn) {
        turn.item_started(self.wire(PatchApplyStatus::InProgress))
            .await;
    }

    async fn complete(&self, turn: &ToolTurn, status: PatchApplyStatus) {
        turn.item_completed(self.wire(status)).await;
    }
}

/// `apply_patch` (either variant).
async fn apply(
    rt: &ApplyPatchTool,
    call_id: &str,
    patch: &str,
    variant: Variant,
    turn: &ToolTurn,
) -> String {
    let started = Instant::now();
    let spec = SandboxSpec::from_policy(&turn.sandbox, &turn.cwd);
    let reader = SandboxFiles::new(spec.clone(), Vec::new());
    let plan = match plan_patch_with(patch, &turn.cwd, &|_| true, &reader) {
        Ok(plan) => plan,
        Err(err) => return err.model_text(),
    };
    let written = plan.written_paths();
    let outside: Vec<PathBuf> = written
        .iter()
        .filter(|path| !path_is_writable(path, &|p| spec.can_write(p)))
        .cloned()
        .collect();
    let mode = Mode::of(&turn.approval_policy);
    let decision =
        approval::plan_patch_approval(mode, &outside, rt.approvals.files_approved(&written));
    let item = PatchItem {
        id: call_id,
        plan: &plan,
        started_at: now_ms(),
    };
    match decision {
        PatchPlanDecision::Refuse(path) if spec.is_protected_path(&path) => {
            return PatchError::Protected { path }.model_text();
        }
        PatchPlanDecision::Refuse(path) => return PatchError::NotWritable { path }.model_text(),
        PatchPlanDecision::Apply => item.start(turn).await,
        PatchPlanDecision::Ask { reason } => 'ask: {
            // Reference order: the item, then the status flag, then the request.
            item.start(turn).await;
            // With the guardian, its review comes first (docs/protocol.md §9.8).
            if turn.reviewer.is_some() {
                let files = written.iter().map(|p| p.display().to_string()).collect();
                let cwd = turn.cwd.display().to_string();
                let review = ReviewRequest::patch(call_id, &cwd, files, patch, reason.as_deref());
                match turn.guardian_review(review).await {
                    Some(Verdict::Approved) => break 'ask,
                    Some(Verdict::Denied(text)) => {
                        item.complete(turn, PatchApplyStatus::Declined).await;
                        return text;
                    }
                    Some(Verdict::Cancelled) => {
                        item.complete(turn, PatchApplyStatus::Declined).await;
                        return PATCH_REJECTED.to_string();
                    }
                    Some(Verdict::AskUser) | None => {}
                }
            }
            let wait = rt.waits.begin(turn).await;
            let params = FileChangeRequestApprovalParams {
                thread_id: turn.thread_id.clone(),
                turn_id: turn.turn_id.clone(),
                item_id: ItemId::from(call_id.to_string()),
                started_at_ms: now_ms(),
                reason,
                grant_root: None,
            };
            let outcome =
                approval::ask(turn, ServerRequestParams::FileChangeApproval(params)).await;
            let decision = approval::file_change_decision(outcome);
            wait.release().await;
            match decision {
                Decision::Accept => {}
                Decision::AcceptForSession => rt.approvals.approve_files(&written),
                Decision::Decline => {
                    item.complete(turn, PatchApplyStatus::Declined).await;
                    return PATCH_REJECTED.to_string();
                }
                Decision::Cancel => {
                    item.complete(turn, PatchApplyStatus::Declined).await;
                    turn.cancel.cancel();
                    return PATCH_REJECTED.to_string();
                }
                Decision::Failed(reason) => {
                    item.complete(turn, PatchApplyStatus::Failed).await;
                    return format!(
                        "apply_patch failed: the approval request failed ({reason}); the patch was not applied"
                    );
                }
            }
        }
    }
    let to_apply = plan.clone();
    // Reaching here, every path outside the roots (or protected) was approved.
    let files = SandboxFiles::new(spec, outside);
    let applied = tokio::task::spawn_blocking(move || apply_plan_with(&to_apply, &files))
        .await
        .unwrap_or_else(|err| {
            Err(PatchError::Write {
                context: "Failed to apply the patch".to_string(),
                source: std::io::Error::other(err.to_string()),
            })
        });
    match applied {
        Ok(outcome) => {
            item.complete(turn, PatchApplyStatus::Completed).await;
            emit_turn_diff(rt, turn, &plan).await;
            result_text(variant, 0, &outcome.success_text(), started.elapsed())
        }
        Err(err) if err.wrote_nothing() => {
            item.complete(turn, PatchApplyStatus::Failed).await;
            err.model_text()
        }
        Err(err) => {
            item.complete(turn, PatchApplyStatus::Failed).await;
            result_text(variant, 1, &err.model_text(), started.elapsed())
        }
    }
}

/// Adds an applied plan to the turn's aggregate diff and sends it.
async fn emit_turn_diff(rt: &ApplyPatchTool, turn: &ToolTurn, plan: &PatchPlan) {
    let diff = {
        let mut slot = rt.diff.lock();
        if slot.as_ref().is_none_or(|(id, _)| *id != turn.turn_id) {
            *slot = Some((
                turn.turn_id.clone(),
                TurnDiffTracker::new(Some(turn.cwd.clone())),
            ));
        }
        match slot.as_mut() {
            Some((_, tracker)) => {
                tracker.track(plan);
                tracker.unified_diff()
            }
            None => None,
        }
    };
    turn.sink
        .emit(
            &turn.thread_id,
            ThreadEvent::TurnDiffUpdated {
                turn_id: turn.turn_id.clone(),
                diff: diff.unwrap_or_default(),
            },
        )
        .await;
}
