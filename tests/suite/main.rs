//! Weft's end-to-end suite: one test binary, one module per feature area. Every test drives the
//! real `weft` binary through `weft-test-support`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// Declare one test per transport for each listed `async fn name(Transport)` in the current
/// module: `name::stdio` and `name::ws`.
macro_rules! on_both_transports {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test]
                async fn stdio() {
                    super::$name(weft_test_support::Transport::Stdio).await;
                }

                #[tokio::test]
                async fn ws() {
                    super::$name(weft_test_support::Transport::Ws).await;
                }
            }
        )*
    };
}

mod agents;
mod attachments;
mod client_surface;
mod commands;
mod context;
mod files;
mod foundation;
mod mcp;
mod models;
mod modes;
mod persistence;
mod requests;
mod search;
mod security;
mod settings;
mod tasks;
mod thread_manage;
mod thread_state;
mod tools;
mod turns;
mod web;
