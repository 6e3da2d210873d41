//! What the model is told before a turn's input: the step prompt every request is built from,
//! the instruction messages (once per thread) and the environment context (when it changed).

use super::ThreadActor;
use crate::collaboration;
use crate::env_context::EnvironmentContext;
use crate::instructions::{base_instructions, discover_agents_md, render_user_instructions};
use crate::model::{ContentItem, Prompt, ResponseItem};
use crate::settings::{ThreadSettings, approval_policy_name, sandbox_mode_name};

impl ThreadActor {
    /// The step context: what every request of the next turn is built from.
    pub(super) fn step_prompt(&self) -> Prompt {
        let instructions = match &self.settings.base_instructions {
            Some(own) => own.as_str().into(),
            None => base_instructions(),
        };
        Prompt {
            model: self.settings.model.clone(),
            instructions,
            input: Vec::new(),
            tools: Default::default(),
            parallel_tool_calls: false,
            reasoning_effort: self.settings.reasoning_effort.as_ref().map(|e| e.0.clone()),
            reasoning_summary: self
                .settings
                .reasoning_summary
                .and_then(|s| serde_json::to_value(s).ok())
                .and_then(|v| v.as_str().map(str::to_string)),
            prompt_cache_key: Some(self.thread.id.to_string()),
            output_schema: None,
            headers: Vec::new(),
        }
    }

    /// Record the context messages the model needs before this turn's input: the developer
    /// instructions and AGENTS.md once, and the environment context whenever it changed.
    pub(super) fn record_context(&mut self) {
        let mut history = self.history.lock();
        if !self.instructions_recorded {
            self.instructions_recorded = true;
            if let Some(developer) = &self.settings.developer_instructions {
                history.record(ResponseItem::message(
                    crate::model::Role::Developer,
                    vec![ContentItem::InputText {
                        text: developer.clone(),
                    }],
                ));
            }
            if let Some(text) = render_user_instructions(&discover_agents_md(&self.settings.cwd)) {
                history.record(ResponseItem::user_message(vec![ContentItem::InputText {
                    text,
                }]));
            }
            for item in self.team_messages() {
                history.record(item);
            }
        }
        // The collaboration mode, whenever its text differs from the last one the model saw
        // (docs/protocol.md §7.25).
        if let Some(text) = self
            .settings
            .collaboration_mode
            .as_ref()
            .and_then(collaboration::render)
            && collaboration::last_in(history.items()).as_deref() != Some(text.as_str())
        {
            history.record(collaboration::message(text));
        }
        // The environment context: in full the first time (and after a resume), then only
        // what changed since the last one the model saw.
        let environment = self.environment();
        let text = match &self.last_environment {
            None => Some(environment.render()),
            Some(previous) => environment.diff(previous),
        };
        if let Some(text) = text {
            history.record(ResponseItem::user_message(vec![ContentItem::InputText {
                text,
            }]));
        }
        self.last_environment = Some(environment);
    }

    /// A v2 team's developer messages (docs/agents.md §6.2): the root's, or a fresh member's
    /// (a forked member got its own with its inherited history).
    fn team_messages(&self) -> Vec<ResponseItem> {
        let agents = &self.services.agents;
        if agents.surface != crate::config::AgentSurface::V2 || !agents.attached() {
            return Vec::new();
        }
        match &self.place.parent {
            None => crate::agents::prompts::root_messages(
                agents.limits().max_threads.map(|children| children + 1),
            ),
            Some(_) => crate::agents::prompts::member_messages(),
        }
    }

    pub(super) fn environment(&self) -> EnvironmentContext {
        EnvironmentContext::capture(
            self.settings.cwd.clone(),
            approval_policy_name(&self.settings.approval_policy),
            sandbox_mode_name(self.settings.sandbox_mode()),
        )
    }
}

/// The environment context a restored history already gives the model: when its last
/// environment message is the full context as it is now, the next turn need not repeat it.
/// Otherwise (it changed, or only a diff was last) the next turn sends it in full.
pub(super) fn last_environment_in(
    history: &[ResponseItem],
    settings: &ThreadSettings,
) -> Option<EnvironmentContext> {
    let current = EnvironmentContext::capture(
        settings.cwd.clone(),
        approval_policy_name(&settings.approval_policy),
        sandbox_mode_name(settings.sandbox_mode()),
    );
    let rendered = current.render();
    let last = history.iter().rev().find_map(|item| {
        item.message_text()
            .filter(|text| text.starts_with(crate::env_context::ENVIRONMENT_CONTEXT_OPEN_TAG))
    })?;
    (last == rendered).then_some(current)
}
