//! Issue 11, security and durability: a hostile model, a stranger on the socket and a full disk
//! get nowhere. One module per area; each test is a regression test for a defect found.

mod connections;
