//! The compaction driver: when the turn compacts (before a turn whose window is already full,
//! mid-turn between sampling steps, or as a `thread/compact/start` task) and how — a
//! `contextCompaction` item around a summary request with retries. The pure part (the summary
//! request, the rebuilt history) is [`crate::compact`].

use super::{Stop, TurnContext, complete_item, emit, report_usage, start_item};
use crate::compact::{
    Placement, collect_summary, compaction_error, compaction_item, rebuild, summary_prompt,
    summary_text, trimmed_for_summary,
};
use crate::events::ThreadEvent;
use crate::time::now_ms;

/// Ask the model for a hand-off summary and rebuild the history from it (docs/architecture.md §9). The
/// client sees a `contextCompaction` item; a failed summary request leaves the history as it
/// was and fails the turn.
pub(super) async fn compact(ctx: &TurnContext, placement: Placement) -> Result<(), Stop> {
    let mut item = compaction_item();
    item.started_at_ms = Some(now_ms());
    start_item(ctx, item.clone()).await;
    let mut retries = 0u32;
    let mut dropped = 0usize;
    let summary = loop {
        let input = trimmed_for_summary(ctx.history.lock().items(), dropped);
        let droppable = input.len();
        let prompt = summary_prompt(&ctx.step, input);
        let attempt = async {
            let stream = ctx.client.stream(&prompt).await?;
            collect_summary(stream).await
        };
        let result = tokio::select! {
            result = attempt => result,
            () = ctx.cancel.cancelled() => {
                item.completed_at_ms = Some(now_ms());
                complete_item(ctx, item).await;
                return Err(Stop::Aborted);
            }
        };
        match result {
            Ok((summary, usage)) => {
                if let Some(usage) = usage {
                    report_usage(ctx, &usage).await;
                }
                break summary;
            }
            // The history no longer fits the model's real window: leave out the oldest items
            // of the summary request until it does (docs/architecture.md §9.3).
            Err(err) if err.is_context_window_exceeded() && droppable > 1 => dropped += 1,
            Err(err) if err.is_retryable() && retries < ctx.stream_max_retries => {
                retries += 1;
                let delay = err
                    .retry_after()
                    .unwrap_or_else(|| crate::model::backoff(retries));
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = ctx.cancel.cancelled() => {}
                }
            }
            Err(err) => {
                item.completed_at_ms = Some(now_ms());
                complete_item(ctx, item).await;
                return Err(Stop::Failed(compaction_error(&err)));
            }
        }
    };
    if dropped > 0 {
        emit(
            ctx,
            ThreadEvent::Warning {
                turn_id: Some(ctx.turn_id.clone()),
                message: format!(
                    "The conversation no longer fit the model's context window: the {dropped} oldest item(s) were left out of the summary."
                ),
            },
        )
        .await;
    }
    {
        let mut history = ctx.history.lock();
        let rebuilt = rebuild(history.items(), &summary, &ctx.environment, placement);
        history.replace(rebuilt, &summary_text(&summary));
    }
    item.completed_at_ms = Some(now_ms());
    complete_item(ctx, item).await;
    Ok(())
}
