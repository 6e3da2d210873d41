//! `thread/inject_items` (docs/protocol.md §7.36): an OpenAI-compatible gateway replays a
//! conversation's history into a loaded thread as raw Responses API items. Here they are
//! checked — each a response item, the request within `[limits] max_injected_items` and
//! `max_injected_bytes` — and handed to the thread's actor.

use weft_protocol::ThreadId;

use super::ThreadManager;
use crate::model::ResponseItem;
use crate::thread::error::CoreError;
use crate::thread::handle::Op;

impl ThreadManager {
    /// Append raw Responses API items to a loaded thread's model-visible history, refused
    /// with the reference's texts: `thread not found` for a thread that is not loaded, then
    /// `items[i] is not a valid response item: …`, then `items must not be empty`. Items of
    /// a type Weft does not know are accepted, as the reference accepts them, and dropped:
    /// no model request could carry them.
    pub async fn inject_items(
        &self,
        id: &ThreadId,
        raw: Vec<serde_json::Value>,
    ) -> Result<(), CoreError> {
        let handle = self
            .get(id)
            .ok_or_else(|| CoreError::ThreadNotFound(id.to_string()))?;
        let limits = &self.services.config.limits;
        if raw.len() > limits.max_injected_items {
            return Err(CoreError::Refused(format!(
                "items must not hold more than {} items ([limits] max_injected_items)",
                limits.max_injected_items
            )));
        }
        let empty = raw.is_empty();
        let mut bytes = 0usize;
        let mut items = Vec::with_capacity(raw.len());
        for (index, value) in raw.into_iter().enumerate() {
            bytes = bytes.saturating_add(serde_json::to_string(&value).map_or(0, |s| s.len()));
            let item: ResponseItem = serde_json::from_value(value).map_err(|err| {
                CoreError::Refused(format!(
                    "items[{index}] is not a valid response item: {err}"
                ))
            })?;
            if item != ResponseItem::Other {
                items.push(item);
            }
        }
        if bytes > limits.max_injected_bytes {
            return Err(CoreError::Refused(format!(
                "items must not be larger than {} bytes ([limits] max_injected_bytes)",
                limits.max_injected_bytes
            )));
        }
        if empty {
            return Err(CoreError::Refused("items must not be empty".into()));
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        handle.send(Op::InjectItems { items, reply: tx }).await?;
        rx.await
            .map_err(|_| CoreError::ThreadNotFound(id.to_string()))?
    }
}
