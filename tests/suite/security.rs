//! Issue 11, security and durability: a hostile model, a stranger on the socket and a full disk
//! get nowhere. One module per area; each test is the regression test of one defect the issue
//! names, driven end to end against the real daemon.

mod durability;
