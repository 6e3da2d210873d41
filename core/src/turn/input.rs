//! What enters a turn from outside the model: user input (with local images read and sent
//! inline) and a stop hook's continuation prompts. Each is recorded in history for the model
//! and as an item (started and completed at once) for the client.

use weft_protocol::{
    HookPromptFragment as WireHookFragment, HookPromptItem, ImageDetail, ThreadItem, UserInput,
    UserMessageItem,
};

use super::{PendingInput, TurnContext, start_and_complete};
use crate::hooks::HookPromptFragment;
use crate::model::{ContentItem, ResponseItem};
use crate::time::{new_item_id, now_ms};

/// Record one user input: history, and the `userMessage` item's start and completion.
pub(super) async fn record_user_input(ctx: &TurnContext, pending: PendingInput) {
    let content = user_content(&pending.input).await;
    ctx.history
        .lock()
        .record(ResponseItem::user_message(content));
    let started = now_ms();
    let item = UserMessageItem {
        id: pending.item_id,
        content: pending.input,
        client_id: pending.client_id,
    };
    start_and_complete(ctx, ThreadItem::from(item), started).await;
}

/// Record a stop hook's continuation prompt: a user message for the model, a `hookPrompt`
/// item for the client.
pub(super) async fn record_hook_prompt(ctx: &TurnContext, prompts: Vec<HookPromptFragment>) {
    let text = prompts
        .iter()
        .map(|p| {
            format!(
                "<hook_prompt hook_run_id=\"{}\">{}</hook_prompt>",
                p.hook_run_id, p.text
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    ctx.history
        .lock()
        .record(ResponseItem::user_message(vec![ContentItem::InputText {
            text,
        }]));
    let item = HookPromptItem {
        id: new_item_id(),
        fragments: prompts
            .into_iter()
            .map(|p| WireHookFragment {
                text: p.text,
                hook_run_id: p.hook_run_id,
            })
            .collect(),
    };
    start_and_complete(ctx, ThreadItem::from(item), now_ms()).await;
}

/// The model-facing content of user input. Local images are read and sent inline as
/// `data:` URLs; one that cannot be read is replaced by a note the model can see.
async fn user_content(input: &[UserInput]) -> Vec<ContentItem> {
    let mut content = Vec::with_capacity(input.len());
    for part in input {
        match part {
            UserInput::Text { text, .. } => {
                content.push(ContentItem::InputText { text: text.clone() })
            }
            UserInput::Image {
                url: Some(url),
                detail,
                ..
            } => content.push(ContentItem::InputImage {
                image_url: url.clone(),
                detail: detail_name(detail.as_ref()),
            }),
            UserInput::LocalImage { path, detail } => match tokio::fs::read(path).await {
                Ok(bytes) => {
                    use base64::Engine as _;
                    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                    content.push(ContentItem::InputImage {
                        image_url: format!("data:{};base64,{data}", image_mime(path)),
                        detail: detail_name(detail.as_ref()),
                    });
                }
                Err(err) => content.push(ContentItem::InputText {
                    text: format!("[the image {path} could not be read: {err}]"),
                }),
            },
            _ => {}
        }
    }
    content
}

fn detail_name(detail: Option<&ImageDetail>) -> Option<String> {
    detail.and_then(weft_protocol::wire_name)
}

fn image_mime(path: &str) -> &'static str {
    let lower = path.to_ascii_lowercase();
    match lower.rsplit('.').next() {
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => "image/png",
    }
}
