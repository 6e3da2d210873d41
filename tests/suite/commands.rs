//! Issue 28, commands outside a turn: `command/exec` and its follow-ups (docs/protocol.md
//! §7.32), end to end on both transports.

mod exec;
mod harness;
mod streams;
