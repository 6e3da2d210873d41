//! Issue 11, security and durability: what a hostile model, a stranger on the socket or a full
//! disk must not get away with, end to end (the real daemon, the scripted mock model). Each
//! module holds the regression tests of one area.

mod backpressure;
mod commands;
mod connections;
mod durability;
mod fs;
mod hostile_files;
mod search_terms;
