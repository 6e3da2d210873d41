//! Issue 11, security and durability: what a hostile model, a stranger on the socket or a full
//! disk must not get, end to end against the real daemon. One module per area.

mod fs;
