//! What enters a turn from outside the model: user input (with local images read and sent
//! inline) and a stop hook's continuation prompts. Each is recorded in history for the model
//! and as an item (started and completed at once) for the client.

use weft_protocol::{
    HookPromptFragment, HookPromptItem, ImageDetail, ThreadItem, UserInput, UserMessageItem,
};

use super::{PendingInput, TurnContext, start_and_complete};
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
        fragments: prompts,
    };
    start_and_complete(ctx, ThreadItem::from(item), now_ms()).await;
}

/// The largest local image sent inline (20 MiB). A named constant rather than a config key:
/// the turn does not see the daemon's config.
pub const MAX_LOCAL_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

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
            UserInput::LocalImage { path, detail } => match read_local_image(path).await {
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

/// Reads a local image: a regular file (checked on the opened file, opened non-blocking so a
/// FIFO cannot hang the turn) of at most [`MAX_LOCAL_IMAGE_BYTES`], read through a bounded
/// reader so a file that grows (or lies about its size) is never read past the limit.
async fn read_local_image(path: &str) -> std::io::Result<Vec<u8>> {
    let path = std::path::PathBuf::from(path);
    tokio::task::spawn_blocking(move || read_bounded(&path, MAX_LOCAL_IMAGE_BYTES))
        .await
        .unwrap_or_else(|err| Err(std::io::Error::other(err.to_string())))
}

fn read_bounded(path: &std::path::Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind, Read};
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    let too_large = || {
        Error::new(
            ErrorKind::InvalidData,
            format!(
                "larger than the {} MiB limit for images",
                limit / (1024 * 1024)
            ),
        )
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn note(content: &[ContentItem]) -> String {
        match content {
            [ContentItem::InputText { text }] => text.clone(),
            other => panic!("expected one note, got {other:?}"),
        }
    }

    fn local(path: &str) -> Vec<UserInput> {
        vec![UserInput::LocalImage {
            path: path.to_string(),
            detail: None,
        }]
    }

    #[tokio::test]
    async fn devices_are_refused_without_reading_them() {
        let text = note(&user_content(&local("/dev/zero")).await);
        assert_eq!(
            text,
            "[the image /dev/zero could not be read: not a regular file]"
        );
    }

    #[tokio::test]
    async fn oversized_images_are_refused_without_reading_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.png");
        let file = std::fs::File::create(&path).unwrap();
        // Sparse: 1 GiB of size, no data blocks.
        file.set_len(1 << 30).unwrap();
        let shown = path.display().to_string();
        let text = note(&user_content(&local(&shown)).await);
        assert_eq!(
            text,
            format!(
                "[the image {shown} could not be read: larger than the 20 MiB limit for images]"
            )
        );
    }

    #[test]
    fn the_bounded_reader_stops_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("img.png");
        std::fs::write(&path, [7u8; 10]).unwrap();
        assert_eq!(read_bounded(&path, 10).unwrap().len(), 10);
        assert!(read_bounded(&path, 9).is_err());
    }

    #[tokio::test]
    async fn regular_images_are_sent_inline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pixel.png");
        std::fs::write(&path, b"png").unwrap();
        let content = user_content(&local(&path.display().to_string())).await;
        match content.as_slice() {
            [ContentItem::InputImage { image_url, .. }] => {
                assert_eq!(image_url, "data:image/png;base64,cG5n");
            }
            other => panic!("{other:?}"),
        }
    }
}
