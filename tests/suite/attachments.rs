//! Issue 28: thread attachments (`thread/attachment/add|list|remove`,
//! `thread/attachmentOwner/list`, `thread/attachment/updated`) and `feedback/save`, on both
//! transports (docs/protocol.md §7.37). Every message the clients see is checked against the
//! schemas by the support crate.

mod feedback;
mod store;
