//! `thread/settings/update` (docs/protocol.md §7.34): the thread's settings for its next
//! turns, changed without starting one. The same overrides as `turn/start`'s, checked the same
//! way; a running turn keeps the context it started with. The answer goes first, then
//! `thread/settings/updated` when something changed, as the reference sends them.

use super::ThreadActor;
use crate::events::{Reply, ThreadEvent};
use crate::thread::error::CoreError;
use crate::thread::handle::TurnOverrides;

impl ThreadActor {
    pub(super) async fn update_settings(
        &mut self,
        overrides: TurnOverrides,
        reply: Reply<Result<(), CoreError>>,
    ) {
        let overrides = match overrides
            .resolved()
            .and_then(|o| o.check_against(&self.settings).map(|()| o))
        {
            Ok(overrides) => overrides,
            Err(err) => {
                reply.send(Err(err)).await;
                return;
            }
        };
        let mut settings = self.settings.clone();
        overrides.apply(&mut settings);
        if settings.model_provider != self.settings.model_provider
            && let Err(err) = self.provider_config(&settings.model_provider)
        {
            reply.send(Err(err)).await;
            return;
        }
        let changed = settings != self.settings;
        self.settings = settings;
        reply.send(Ok(())).await;
        if changed {
            self.emit(ThreadEvent::SettingsChanged(Box::new(
                self.settings.clone(),
            )))
            .await;
        }
    }
}
