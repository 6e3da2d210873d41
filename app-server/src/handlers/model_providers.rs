//! `modelProvider/list` and `modelProvider/capabilities/read` (docs/protocol.md §7.35).
//!
//! The list is what the reference lists: the providers of the user's `[model_providers]`
//! and OpenAI's, by id (Weft's built-in `ollama` and `lmstudio` appear only when configured,
//! as the reference's built-in local providers do not appear). What may be shown is shown: a
//! `baseUrl` only when it is a plain `http(s)` address without credentials, query or fragment,
//! and of the authentication only its kind and the key variable's name. A provider of the
//! user's `config.toml` can be edited (`canEdit`, `modelProvider/config/write`).

use weft_core::config::Config;
use weft_core::config::provider_write::is_user_provider;
use weft_core::model::ProviderConfig;
use weft_core::model::provider::AddressView;
use weft_protocol::model_provider_api::{
    GatewayAuth, ModelProviderCapabilitiesReadParams, ModelProviderCapabilitiesReadResponse,
    ModelProviderListParams, ModelProviderListResponse, ModelProviderSummary, ProviderSettings,
};

use crate::dispatch::{Context, HandlerResult};

/// The built-in provider listed whether configured or not.
const OPENAI: &str = "openai";

/// `modelProvider/list`.
pub async fn list(
    cx: Context<'_>,
    _params: ModelProviderListParams,
) -> HandlerResult<ModelProviderListResponse> {
    let config = cx.state.threads.services().live.current();
    let data = config
        .model_providers
        .keys()
        .filter_map(|id| listed(&config, id))
        .collect();
    Ok(ModelProviderListResponse {
        data,
        default_provider_id: config.model_provider.clone(),
        // `modelProvider/default/set` writes it (docs/protocol.md §7.35).
        can_change_default: true,
    })
}

/// Provider `id` as listed, when it is listed: OpenAI's always, the others when configured.
pub(super) fn listed(config: &Config, id: &str) -> Option<ModelProviderSummary> {
    let provider = config.provider(id)?;
    let table = config
        .layers
        .merged
        .get("model_providers")
        .and_then(toml::Value::as_table)
        .and_then(|providers| providers.get(id));
    if provider.id != OPENAI && table.is_none() {
        return None;
    }
    let mut summary = summary(provider, table.and_then(toml::Value::as_table));
    summary.can_edit = is_user_provider(config, id);
    Some(summary)
}

/// `modelProvider/capabilities/read`: the hosted tools of the default provider. Weft offers
/// neither OpenAI's hosted web search nor image generation on any provider, so both are false.
pub async fn capabilities_read(
    _cx: Context<'_>,
    _params: ModelProviderCapabilitiesReadParams,
) -> HandlerResult<ModelProviderCapabilitiesReadResponse> {
    Ok(ModelProviderCapabilitiesReadResponse {
        image_generation: false,
        web_search: false,
    })
}

/// One provider as listed; `table` is its `[model_providers.<id>]` as written, if any.
fn summary(provider: &ProviderConfig, table: Option<&toml::Table>) -> ModelProviderSummary {
    let written = |key: &str| table.is_some_and(|table| table.contains_key(key));
    if provider.id == OPENAI {
        return ModelProviderSummary {
            id: provider.id.clone(),
            name: "OpenAI".into(),
            can_edit: false,
            base_url: None,
            settings: ProviderSettings::Openai,
        };
    }
    let name = if written("name") {
        provider.name.clone()
    } else {
        provider.id.clone()
    };
    let address = written("base_url").then(|| AddressView::of(&provider.base_url));
    let plain = address.as_ref().is_some_and(|address| address.displayable);
    let carries_credentials = address.as_ref().is_some_and(|address| address.credentials);
    let external = carries_credentials
        || provider.experimental_bearer_token.is_some()
        || !provider.http_headers.is_empty()
        || !provider.env_http_headers.is_empty()
        || !provider.query_params.is_empty();
    let auth = match (&provider.env_key, external) {
        (env_key, true) => GatewayAuth::ExternallyConfigured {
            env_key: env_key.clone(),
        },
        (Some(env_key), false) => GatewayAuth::EnvironmentVariable {
            env_key: env_key.clone(),
        },
        (None, false) => GatewayAuth::None,
    };
    ModelProviderSummary {
        id: provider.id.clone(),
        name,
        can_edit: false,
        base_url: plain.then(|| provider.base_url.clone()),
        settings: ProviderSettings::CustomGateway { auth },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(toml_text: &str) -> ModelProviderSummary {
        let table: toml::Table = toml_text.parse().unwrap();
        let mut provider: ProviderConfig = toml::Value::Table(table.clone()).try_into().unwrap();
        provider.id = "p".into();
        summary(&provider, Some(&table))
    }

    fn auth(summary: &ModelProviderSummary) -> &GatewayAuth {
        match &summary.settings {
            ProviderSettings::CustomGateway { auth } => auth,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn addresses_and_auth_are_shown_as_the_reference_shows_them() {
        let plain = listed("name = \"P\"\nbase_url = \"http://127.0.0.1:1/v1\"");
        assert_eq!(plain.base_url.as_deref(), Some("http://127.0.0.1:1/v1"));
        assert_eq!(plain.name, "P");
        assert_eq!(auth(&plain), &GatewayAuth::None);

        let keyed = listed("base_url = \"https://h/v1/\"\nenv_key = \"K\"");
        assert_eq!(keyed.name, "p", "an unnamed provider is listed by its id");
        assert_eq!(keyed.base_url.as_deref(), Some("https://h/v1/"));
        assert_eq!(
            auth(&keyed),
            &GatewayAuth::EnvironmentVariable {
                env_key: "K".into()
            }
        );

        for hidden in [
            "http://u:pw@h/v1",
            "http://h/v1?key=s",
            "http://h/v1#f",
            "ftp://h/",
            "x",
        ] {
            let summary = listed(&format!("base_url = \"{hidden}\""));
            assert_eq!(summary.base_url, None, "{hidden}");
        }
        let userinfo = listed("base_url = \"http://u@h/v1\"\nenv_key = \"K\"");
        assert_eq!(
            auth(&userinfo),
            &GatewayAuth::ExternallyConfigured {
                env_key: Some("K".into())
            }
        );
        for external in [
            "experimental_bearer_token = \"t\"",
            "http_headers = { X = \"1\" }",
            "env_http_headers = { X = \"V\" }",
            "query_params = { a = \"1\" }",
            "base_url = \"https://api.openai.com/v1\"",
        ] {
            assert_eq!(
                auth(&listed(external)),
                &GatewayAuth::ExternallyConfigured { env_key: None },
                "{external}"
            );
        }
        assert_eq!(listed("name = \"\"").name, "");
        assert_eq!(listed("").base_url, None, "no address written");
    }
}
