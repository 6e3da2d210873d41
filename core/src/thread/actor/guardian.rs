//! The actor's side of the guardian (docs/protocol.md §9.8): the reviewer a turn's tools ask
//! when the thread's `approvalsReviewer` is `auto_review`, and the user's override of a
//! denial (`thread/approveGuardianDeniedAction`), which leaves a note for the model.

use std::sync::Arc;

use weft_protocol::{ApprovalsReviewer, AskForApproval};

use super::ThreadActor;
use crate::guardian::{DeniedReview, Guardian};
use crate::model::{ModelClient, ProviderConfig, ResponseItem};

impl ThreadActor {
    /// The reviewer of a turn about to start on `provider`, when approvals go to the guardian:
    /// `[guardian]`'s provider and model when set, else the turn's.
    pub(super) fn guardian(&self, provider: &ProviderConfig) -> Option<Arc<Guardian>> {
        // As the reference: only `on-request` (and `granular`) questions go to the guardian;
        // `untrusted` asks the user about each command itself.
        let reviewed_policy = matches!(
            self.settings.approval_policy,
            AskForApproval::OnRequest | AskForApproval::Granular { .. }
        );
        if self.settings.approvals_reviewer == ApprovalsReviewer::User || !reviewed_policy {
            return None;
        }
        let config = &self.services.config;
        let provider = config
            .guardian
            .model_provider
            .as_deref()
            .and_then(|id| config.provider(id))
            .unwrap_or(provider)
            .clone();
        Some(Arc::new(Guardian::new(
            &config.guardian,
            ModelClient::new(provider, self.services.http()),
            &self.settings.model,
            self.settings.reasoning_effort.as_ref().map(|e| e.0.clone()),
            &config.home,
            &self.settings.cwd,
            self.history.clone(),
        )))
    }

    /// The user approves one action the guardian denied: a note for the model (and for the
    /// reviewer's next look at the conversation), at the running turn's next step or in the
    /// history now. A review that was not a denial changes nothing, as in the reference.
    pub(super) fn approve_guardian_denial(&mut self, denial: &DeniedReview) {
        let Some(note) = denial.approval_note() else {
            tracing::warn!(review = %denial.id, "ignoring an override of a review that was not a denial");
            return;
        };
        match &self.active {
            Some(active) => active.shared().push_note(note),
            None => self.history.lock().record(ResponseItem::user_text(note)),
        }
    }
}
