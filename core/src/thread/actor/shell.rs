//! `thread/shellCommand` (docs/protocol.md §7.30): the user's own command. On an idle thread
//! it is a task of its own ([`UserShellTask`], launched like every task); while a task runs it
//! runs inside that task's turn instead, as the reference does: its item is one of the turn's
//! (through the turn's item sink, so the turn's end completes it if it still runs), an
//! interrupt of the turn kills it, and its record reaches the model at the turn's next step
//! (or the next turn's first, when this one does not take another step).

use std::sync::Arc;

use tracing::Instrument;

use super::ThreadActor;
use crate::events::Reply;
use crate::task::{UserShellCommand, UserShellTask, run_user_shell_command};
use crate::thread::error::CoreError;

impl ThreadActor {
    pub(super) async fn shell_command(
        &mut self,
        command: UserShellCommand,
        reply: Reply<Result<(), CoreError>>,
    ) {
        let exec = Arc::clone(&self.tools.exec);
        if let Some(active) = &self.active {
            reply.send(Ok(())).await;
            let ctx = active.task.ctx();
            let turn = ctx.item_tool_turn();
            let mut turn = turn;
            turn.cancel = ctx.cancel.child_token();
            ctx.shared.hold_auxiliary(turn.cancel.clone());
            let shared = Arc::clone(&ctx.shared);
            let span = tracing::info_span!(
                "user_shell",
                thread_id = %self.thread.id,
                turn_id = %ctx.turn_id,
            );
            tokio::spawn(
                async move {
                    let outcome = run_user_shell_command(&exec, &command, &turn).await;
                    // Read at the turn's next step; kept for the next turn if it takes none.
                    shared.push_mail(outcome.record, false);
                    turn.cancel.cancel();
                }
                .instrument(span),
            );
            return;
        }
        // Idle: a task of its own, started as any task (nothing runs to be stopped).
        self.start_task(Arc::new(UserShellTask::new(command, exec)), reply)
            .await;
    }
}
