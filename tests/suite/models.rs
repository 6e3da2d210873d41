//! Issue 28 parts 5, 8 and 7's first item: the model catalog (`model/list` over the built-in
//! catalog, `[model_catalog]` and the provider's `/models`), `modelProvider/list` and
//! `modelProvider/capabilities/read` (docs/protocol.md §7.16, §7.35), Chat Completions for
//! strict chat templates (merged roles, the folded system prompt, `max_tokens`;
//! docs/architecture.md §7.3) and the reference's `session-id` / `thread-id` headers.

mod chat_roles;
mod features;
mod headers;
mod list;
mod provider_writes;
mod providers;

use weft_mock_model::{MockModel, WireApi};
use weft_test_support::{Daemon, TestHome, Transport};

use crate::turns::{Harness, toml_string};

/// What goes into `config.toml` around the mock's provider table.
#[derive(Default)]
pub struct Config<'a> {
    /// The default model (`mock-model` when unset).
    pub model: Option<&'a str>,
    /// Top-level keys (before any table).
    pub top: &'a str,
    /// More keys of `[model_providers.mock]`.
    pub provider: &'a str,
    /// More tables, after the provider's.
    pub tables: &'a str,
}

/// A mock model on `wire`, a daemon configured by `config` with the mock as its default
/// provider (model `mock-model`, retries off), and one initialized client.
pub async fn harness(transport: Transport, wire: WireApi, config: Config<'_>) -> Harness {
    let mock = MockModel::start().await.expect("start the mock model");
    let home = TestHome::new();
    let wire_name = match wire {
        WireApi::Responses => "responses",
        WireApi::Chat => "chat",
    };
    home.write_config(&format!(
        "model = {}\nmodel_provider = \"mock\"\n{}\n\n\
         [model_providers.mock]\nname = \"Mock model\"\nbase_url = {}\nwire_api = \"{wire_name}\"\n\
         request_max_retries = 0\nstream_max_retries = 0\nstream_idle_timeout_ms = 10000\n{}\n\n{}\n",
        toml_string(config.model.unwrap_or("mock-model")),
        config.top,
        toml_string(&mock.base_url()),
        config.provider,
        config.tables,
    ));
    let mut daemon = Daemon::builder(&home)
        .listen(transport.listen_url())
        .env_remove("OPENAI_API_KEY")
        .start()
        .await;
    let mut client = daemon.client().await;
    client.initialize().await;
    Harness {
        mock,
        home,
        daemon,
        client,
        wire_api: wire,
    }
}
