//! When a tool call must ask the user first (docs/protocol.md §9), how the question is asked,
//! and what the answer means.
//!
//! | policy | `exec_command` | `apply_patch` |
//! |---|---|---|
//! | `untrusted` | asks unless the invocation is known-safe read-only ([`is_known_safe_invocation`]: a bash-family shell running a plain command list of read-only commands) | always asks |
//! | `on-request` | runs sandboxed without asking; `sandbox_permissions: "require_escalated"` asks, then runs unconfined | asks only when it writes outside the writable roots |
//! | `never` | never asks; an escalation request is refused | never asks; writes outside the roots are refused |
//!
//! `granular` (refused by the API) behaves as `on-request` when `sandbox_approval` is set and
//! as `never` otherwise. `accept` covers the one call it answers: nothing granted inside a
//! turn outlives it, except `acceptForSession`, which the thread's runtime remembers (for the
//! exact command line, working directory and sandboxing; for patches, per file) until the
//! thread ends; nothing is persisted.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use weft_protocol::server_requests::{
    CommandExecutionApprovalDecision, CommandExecutionRequestApprovalResponse,
    FileChangeApprovalDecision, FileChangeRequestApprovalResponse, NetworkPolicyRuleAction,
};
use weft_protocol::{AskForApproval, ThreadActiveFlag, ThreadStatus};

use super::command_actions::is_known_safe_invocation;
use super::context::ToolTurn;
use crate::events::{ServerRequestOutcome, ServerRequestParams, ThreadEvent};

/// The approval behaviour a policy reduces to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `untrusted`: ask before anything not known to be safe.
    Untrusted,
    /// `on-request`: sandboxed without asking; escalations ask.
    OnRequest,
    /// `never`: never ask.
    Never,
}

impl Mode {
    /// The mode of a policy.
    pub fn of(policy: &AskForApproval) -> Mode {
        match policy {
            AskForApproval::Untrusted => Mode::Untrusted,
            AskForApproval::OnRequest => Mode::OnRequest,
            AskForApproval::Never => Mode::Never,
            AskForApproval::Granular {
                sandbox_approval, ..
            } => {
                if *sandbox_approval {
                    Mode::OnRequest
                } else {
                    Mode::Never
                }
            }
        }
    }
}

/// What to do with an `exec_command` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPlan {
    /// Run now; `unconfined` without the sandbox.
    Run {
        /// Run outside the sandbox.
        unconfined: bool,
    },
    /// Ask first; if accepted, run (`unconfined` without the sandbox).
    Ask {
        /// Run outside the sandbox once approved.
        unconfined: bool,
        /// Shown to the user (the model's justification).
        reason: Option<String>,
    },
    /// Do not run; tell the model this.
    Refuse(String),
}

/// Decides how an `exec_command` runs. `argv`: what would be run (`[shell, "-lc", script]`);
/// `escalate`: the model asked to run outside the
/// sandbox; `confined`: the turn's sandbox restricts anything; `approved_for_session`: the
/// user already chose `acceptForSession` for this exact command.
pub fn plan_command(
    mode: Mode,
    argv: &[String],
    escalate: bool,
    justification: Option<&str>,
    confined: bool,
    approved_for_session: bool,
) -> CommandPlan {
    let escalate = escalate && confined;
    let reason = || {
        justification
            .map(str::trim)
            .filter(|j| !j.is_empty())
            .map(str::to_string)
    };
    match mode {
        Mode::Never if escalate => CommandPlan::Refuse(
            "exec_command failed: the approval policy is `never`, so running outside the sandbox cannot be approved; run the command without `sandbox_permissions` (inside the sandbox) or do without it".to_string(),
        ),
        Mode::Never => CommandPlan::Run { unconfined: false },
        Mode::OnRequest if !escalate => CommandPlan::Run { unconfined: false },
        Mode::Untrusted if !escalate && is_known_safe_invocation(argv) => {
            CommandPlan::Run { unconfined: false }
        }
        Mode::OnRequest | Mode::Untrusted => {
            // Under `untrusted` the user approves the command itself, and an approved command
            // runs outside the sandbox, as the reference runs it (docs/protocol.md §9.2): the
            // approval is the check, so a read-only sandbox does not make it fail afterwards.
            let unconfined = escalate || (mode == Mode::Untrusted && confined);
            if approved_for_session {
                CommandPlan::Run { unconfined }
            } else {
                CommandPlan::Ask {
                    unconfined,
                    reason: reason(),
                }
            }
        }
    }
}

/// What to do with a verified patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchPlanDecision {
    /// Apply now.
    Apply,
    /// Ask first.
    Ask {
        /// Shown to the user.
        reason: Option<String>,
    },
    /// Do not apply: this path is outside the writable roots and nobody may be asked.
    Refuse(PathBuf),
}

/// Decides whether a patch needs approval. `outside`: the written paths the sandbox does not
/// allow; `all_approved`: every written path was approved for the session already.
pub fn plan_patch_approval(
    mode: Mode,
    outside: &[PathBuf],
    all_approved: bool,
) -> PatchPlanDecision {
    match mode {
        Mode::Never => match outside.first() {
            Some(path) => PatchPlanDecision::Refuse(path.clone()),
            None => PatchPlanDecision::Apply,
        },
        Mode::OnRequest if outside.is_empty() || all_approved => PatchPlanDecision::Apply,
        Mode::Untrusted if all_approved => PatchPlanDecision::Apply,
        Mode::OnRequest | Mode::Untrusted => PatchPlanDecision::Ask {
            reason: outside.first().map(|path| {
                format!(
                    "the patch writes outside the sandbox's writable roots: {}",
                    path.display()
                )
            }),
        },
    }
}

/// The user's answer, reduced to what Weft does with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Go ahead, once.
    Accept,
    /// Go ahead, and do not ask again for the same thing in this thread.
    AcceptForSession,
    /// Do not do it; the turn goes on.
    Decline,
    /// Do not do it; the turn ends `interrupted` (also: nobody can answer, or the turn was
    /// interrupted while waiting).
    Cancel,
    /// The answer was an error or could not be understood: do not do it; the turn goes on.
    Failed(String),
}

/// Reads the answer to `item/commandExecution/requestApproval`. Execpolicy amendments are not
/// persisted by Weft: `acceptWithExecpolicyAmendment` runs the command once; a network policy
/// amendment accepts (`allow`) or declines (`deny`).
pub fn command_decision(outcome: ServerRequestOutcome) -> Decision {
    decision(
        outcome,
        |response: CommandExecutionRequestApprovalResponse| match response.decision {
            CommandExecutionApprovalDecision::Accept
            | CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment { .. } => {
                Decision::Accept
            }
            CommandExecutionApprovalDecision::AcceptForSession => Decision::AcceptForSession,
            CommandExecutionApprovalDecision::ApplyNetworkPolicyAmendment {
                network_policy_amendment,
            } => match network_policy_amendment.action {
                NetworkPolicyRuleAction::Allow => Decision::Accept,
                NetworkPolicyRuleAction::Deny => Decision::Decline,
            },
            CommandExecutionApprovalDecision::Decline => Decision::Decline,
            CommandExecutionApprovalDecision::Cancel => Decision::Cancel,
        },
    )
}

/// Reads the answer to `item/fileChange/requestApproval`.
pub fn file_change_decision(outcome: ServerRequestOutcome) -> Decision {
    decision(
        outcome,
        |response: FileChangeRequestApprovalResponse| match response.decision {
            FileChangeApprovalDecision::Accept => Decision::Accept,
            FileChangeApprovalDecision::AcceptForSession => Decision::AcceptForSession,
            FileChangeApprovalDecision::Decline => Decision::Decline,
            FileChangeApprovalDecision::Cancel => Decision::Cancel,
        },
    )
}

/// Reads an approval answer: nobody answering cancels, an error fails, and an answer is
/// parsed as `R` and read by `read` (an unparsable one fails).
fn decision<R: serde::de::DeserializeOwned>(
    outcome: ServerRequestOutcome,
    read: impl FnOnce(R) -> Decision,
) -> Decision {
    match outcome {
        ServerRequestOutcome::Cancelled => Decision::Cancel,
        ServerRequestOutcome::Failed(message) => Decision::Failed(message),
        ServerRequestOutcome::Answered(value) => match serde_json::from_value::<R>(value) {
            Ok(response) => read(response),
            Err(err) => Decision::Failed(format!("unparsable approval response: {err}")),
        },
    }
}

/// Sends one approval request and waits for the answer; an interrupt of the turn while
/// waiting withdraws the request (the clients get `serverRequest/resolved`) and counts as
/// `cancel`.
pub async fn ask(turn: &ToolTurn, params: ServerRequestParams) -> ServerRequestOutcome {
    if turn.cancel.is_cancelled() {
        return ServerRequestOutcome::Cancelled;
    }
    tokio::select! {
        outcome = turn.sink.request(&turn.thread_id, params) => outcome,
        () = turn.cancel.cancelled() => ServerRequestOutcome::Cancelled,
    }
}

/// What the user approved for the rest of the thread's session (`acceptForSession`).
#[derive(Debug, Default)]
pub struct SessionApprovals {
    commands: Mutex<HashSet<String>>,
    files: Mutex<HashSet<PathBuf>>,
}

impl SessionApprovals {
    /// The key of a command: its display line, where it runs, and whether it is sandboxed.
    pub fn command_key(display: &str, workdir: &Path, unconfined: bool) -> String {
        format!("{unconfined}\u{0}{}\u{0}{display}", workdir.display())
    }

    /// Whether this command was approved for the session.
    pub fn command_approved(&self, key: &str) -> bool {
        self.commands.lock().contains(key)
    }

    /// Remember a command approved for the session.
    pub fn approve_command(&self, key: String) {
        self.commands.lock().insert(key);
    }

    /// Whether every path was approved for the session (false for none).
    pub fn files_approved(&self, paths: &[PathBuf]) -> bool {
        !paths.is_empty() && {
            let files = self.files.lock();
            paths.iter().all(|p| files.contains(p))
        }
    }

    /// Remember files approved for the session.
    pub fn approve_files(&self, paths: &[PathBuf]) {
        self.files.lock().extend(paths.iter().cloned());
    }
}

/// Counts the thread's pending approvals, so its status carries `waitingOnApproval` while at
/// least one is pending.
#[derive(Debug, Default)]
pub struct ApprovalWaits {
    pending: Mutex<usize>,
}

impl ApprovalWaits {
    /// Whether an approval is pending.
    pub fn any(&self) -> bool {
        *self.pending.lock() > 0
    }

    /// One more approval is pending: the thread becomes `active ["waitingOnApproval"]` when it
    /// is the first.
    pub async fn begin<'a>(&'a self, turn: &'a ToolTurn) -> WaitGuard<'a> {
        let first = {
            let mut pending = self.pending.lock();
            *pending += 1;
            *pending == 1
        };
        if first {
            turn.sink
                .emit(
                    &turn.thread_id,
                    ThreadEvent::StatusChanged(ThreadStatus::Active {
                        active_flags: vec![ThreadActiveFlag::WaitingOnApproval],
                    }),
                )
                .await;
        }
        WaitGuard {
            waits: self,
            turn,
            done: false,
        }
    }

    /// Returns true when this was the last pending approval.
    fn end(&self) -> bool {
        let mut pending = self.pending.lock();
        *pending = pending.saturating_sub(1);
        *pending == 0
    }
}

/// One pending approval; [`WaitGuard::release`] clears the flag (`active []`) when it was the
/// last one. Dropped without release (the task was aborted), it only updates the count.
pub struct WaitGuard<'a> {
    waits: &'a ApprovalWaits,
    turn: &'a ToolTurn,
    done: bool,
}

impl WaitGuard<'_> {
    /// The approval is resolved.
    pub async fn release(mut self) {
        self.done = true;
        if self.waits.end() {
            self.turn
                .sink
                .emit(
                    &self.turn.thread_id,
                    ThreadEvent::StatusChanged(ThreadStatus::active()),
                )
                .await;
        }
    }
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.waits.end();
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn bash(script: &str) -> Vec<String> {
        vec!["/bin/bash".into(), "-lc".into(), script.into()]
    }

    #[test]
    fn command_plans_follow_the_policy() {
        let run = CommandPlan::Run { unconfined: false };
        let unconfined = CommandPlan::Run { unconfined: true };
        let ask = |unconfined, reason: Option<&str>| CommandPlan::Ask {
            unconfined,
            reason: reason.map(str::to_string),
        };
        // (mode, script, escalate, justification, confined, approved for the session)
        let plan = |mode, script, escalate, justification, confined, approved| {
            plan_command(
                mode,
                &bash(script),
                escalate,
                justification,
                confined,
                approved,
            )
        };
        // never: runs sandboxed, refuses escalation.
        assert_eq!(plan(Mode::Never, "touch x", false, None, true, false), run);
        assert!(matches!(
            plan(Mode::Never, "touch x", true, Some("why"), true, false),
            CommandPlan::Refuse(_)
        ));
        // on-request: sandboxed without asking; escalation asks with the justification.
        assert_eq!(
            plan(Mode::OnRequest, "touch x", false, None, true, false),
            run
        );
        assert_eq!(
            plan(Mode::OnRequest, "touch x", true, Some(" why "), true, false),
            ask(true, Some("why"))
        );
        assert_eq!(
            plan(Mode::OnRequest, "touch x", true, None, true, true),
            unconfined
        );
        // Escalating when nothing is confined is just running.
        assert_eq!(
            plan(Mode::OnRequest, "touch x", true, None, false, false),
            run
        );
        // untrusted: safe reads run, the rest asks.
        assert_eq!(
            plan(Mode::Untrusted, "ls -la", false, None, true, false),
            run
        );
        assert_eq!(
            plan(Mode::Untrusted, "echo hi > f", false, None, true, false),
            ask(true, None)
        );
        assert_eq!(
            plan(Mode::Untrusted, "echo hi > f", false, None, true, true),
            unconfined
        );
        // Nothing confined: nothing to leave.
        assert_eq!(
            plan(Mode::Untrusted, "echo hi > f", false, None, false, false),
            ask(false, None)
        );
    }

    #[test]
    fn untrusted_asks_for_shell_expansions() {
        let ask = CommandPlan::Ask {
            unconfined: true,
            reason: None,
        };
        let exploit = "echo ${x:='$(touch /tmp/PWNED)'} ; echo ${x@P}";
        assert_eq!(
            plan_command(Mode::Untrusted, &bash(exploit), false, None, true, false),
            ask
        );
        // A safe script under a shell that is not read with bash's grammar asks too.
        let python = vec!["python3".to_string(), "-c".to_string(), "ls".to_string()];
        assert_eq!(
            plan_command(Mode::Untrusted, &python, false, None, true, false),
            ask
        );
    }

    #[test]
    fn patch_plans_follow_the_policy() {
        let outside = vec![PathBuf::from("/elsewhere/f")];
        let inside: &[PathBuf] = &[];
        assert!(matches!(
            plan_patch_approval(Mode::OnRequest, &outside, false),
            PatchPlanDecision::Ask { reason: Some(_) }
        ));
        // (mode, paths outside the roots, approved for the session, decision)
        let cases = [
            (Mode::Never, inside, false, PatchPlanDecision::Apply),
            (
                Mode::Never,
                &outside[..],
                false,
                PatchPlanDecision::Refuse(outside[0].clone()),
            ),
            (Mode::OnRequest, inside, false, PatchPlanDecision::Apply),
            (
                Mode::OnRequest,
                &outside[..],
                true,
                PatchPlanDecision::Apply,
            ),
            (
                Mode::Untrusted,
                inside,
                false,
                PatchPlanDecision::Ask { reason: None },
            ),
            (Mode::Untrusted, inside, true, PatchPlanDecision::Apply),
        ];
        for (mode, paths, approved, decision) in cases {
            assert_eq!(
                plan_patch_approval(mode, paths, approved),
                decision,
                "{mode:?} {paths:?} {approved}"
            );
        }
    }

    #[test]
    fn decisions_are_read() {
        let answered = |v| ServerRequestOutcome::Answered(v);
        let amendment = json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["ls"]}});
        for (decision, expected) in [
            (json!("accept"), Decision::Accept),
            (json!("acceptForSession"), Decision::AcceptForSession),
            (json!("decline"), Decision::Decline),
            (json!("cancel"), Decision::Cancel),
            (amendment, Decision::Accept),
        ] {
            let answer = json!({ "decision": decision });
            assert_eq!(
                command_decision(answered(answer.clone())),
                expected,
                "{answer}"
            );
        }
        assert!(matches!(
            command_decision(answered(json!({"decision": "maybe"}))),
            Decision::Failed(_)
        ));
        assert_eq!(
            command_decision(ServerRequestOutcome::Failed("boom".into())),
            Decision::Failed("boom".into())
        );
        assert_eq!(
            command_decision(ServerRequestOutcome::Cancelled),
            Decision::Cancel
        );
        assert_eq!(
            file_change_decision(answered(json!({"decision": "acceptForSession"}))),
            Decision::AcceptForSession
        );
        assert!(matches!(
            file_change_decision(answered(json!({}))),
            Decision::Failed(_)
        ));
    }

    #[test]
    fn granular_maps_to_a_mode() {
        let granular = |sandbox_approval| AskForApproval::Granular {
            sandbox_approval,
            rules: true,
            mcp_elicitations: false,
            request_permissions: false,
            skill_approval: false,
        };
        assert_eq!(Mode::of(&granular(true)), Mode::OnRequest);
        assert_eq!(Mode::of(&granular(false)), Mode::Never);
    }

    #[test]
    fn session_approvals_are_exact() {
        let approvals = SessionApprovals::default();
        let key = SessionApprovals::command_key("bash -lc 'touch x'", Path::new("/w"), false);
        assert!(!approvals.command_approved(&key));
        approvals.approve_command(key.clone());
        assert!(approvals.command_approved(&key));
        assert!(!approvals.command_approved(&SessionApprovals::command_key(
            "bash -lc 'touch x'",
            Path::new("/w"),
            true
        )));
        let files = vec![PathBuf::from("/w/a"), PathBuf::from("/w/b")];
        assert!(!approvals.files_approved(&files));
        approvals.approve_files(&files[..1]);
        assert!(!approvals.files_approved(&files));
        approvals.approve_files(&files);
        assert!(approvals.files_approved(&files));
        assert!(!approvals.files_approved(&[]));
    }
}
