//! Helpers the model client's tests share: the client's, the decoders' and their property tests.

use super::event::ResponseEvent;
use super::item::ResponseItem;

/// The items a stream's events finished, in order.
pub(crate) fn done_items<'a, E: 'a>(
    events: impl IntoIterator<Item = &'a Result<ResponseEvent, E>>,
) -> Vec<ResponseItem> {
    events
        .into_iter()
        .filter_map(|event| match event {
            Ok(ResponseEvent::OutputItemDone(item)) => Some(item.clone()),
            _ => None,
        })
        .collect()
}

/// A function call the model made (no item id, no namespace).
pub(crate) fn function_call(call_id: &str, name: &str, arguments: &str) -> ResponseItem {
    ResponseItem::FunctionCall {
        id: None,
        name: name.into(),
        namespace: None,
        arguments: arguments.into(),
        call_id: call_id.into(),
    }
}
