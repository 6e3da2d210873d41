//! `config/value/write` and `config/batchWrite` (docs/protocol.md §7.34): edits of the user's
//! `config.toml`, one write at a time, through `weft_core::config::write` (comments and order
//! kept, checked by loading the result, replaced atomically). After a write the daemon's
//! current config is the written one: `config/read` reports it and new threads start from it.

use std::sync::Arc;

use serde_json::json;
use weft_core::config::Config;
use weft_core::config::write::{Edit, WriteError, write};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{ConfigBatchWriteParams, ConfigValueWriteParams, ConfigWriteResponse};

use crate::dispatch::{Context, HandlerResult};

/// `config/value/write`: one edit.
pub async fn value_write(
    cx: Context<'_>,
    params: ConfigValueWriteParams,
) -> HandlerResult<ConfigWriteResponse> {
    let edit = Edit {
        key_path: params.key_path,
        value: params.value,
        merge_strategy: params.merge_strategy,
    };
    apply(&cx, params.file_path, params.expected_version, vec![edit]).await
}

/// `config/batchWrite`: every edit, in order, or none. `reloadUserConfig` asks nothing more
/// of Weft: a loaded thread keeps its settings, and the one runtime setting it reads at each
/// turn (`[features] tool_search`) comes from the current config anyway (§7.34).
pub async fn batch_write(
    cx: Context<'_>,
    params: ConfigBatchWriteParams,
) -> HandlerResult<ConfigWriteResponse> {
    let edits = params
        .edits
        .into_iter()
        .map(|edit| Edit {
            key_path: edit.key_path,
            value: edit.value,
            merge_strategy: edit.merge_strategy,
        })
        .collect();
    apply(&cx, params.file_path, params.expected_version, edits).await
}

async fn apply(
    cx: &Context<'_>,
    file_path: Option<String>,
    expected_version: Option<String>,
    edits: Vec<Edit>,
) -> HandlerResult<ConfigWriteResponse> {
    let (response, _, ()) =
        write_edits(cx, file_path, expected_version, move |_| Ok((edits, ()))).await?;
    Ok(response)
}

/// One write at a time: the edits `edits` makes from the config as it is now (with what it
/// wants to keep of them), applied; after it the daemon's current config, also returned, is
/// the written one.
pub(super) async fn write_edits<C: Send + 'static>(
    cx: &Context<'_>,
    file_path: Option<String>,
    expected_version: Option<String>,
    edits: impl FnOnce(&Config) -> Result<(Vec<Edit>, C), WriteError> + Send + 'static,
) -> HandlerResult<(ConfigWriteResponse, Arc<Config>, C)> {
    let live = Arc::clone(&cx.state.threads.services().live);
    let _one_at_a_time = live.lock_writes().await;
    let current = live.current();
    let (written, kept) = tokio::task::spawn_blocking(move || {
        let (edits, kept) = edits(&current)?;
        let written = write(
            &current,
            file_path.as_deref(),
            expected_version.as_deref(),
            &edits,
        )?;
        Ok::<_, WriteError>((written, kept))
    })
    .await
    .map_err(|err| JsonRpcError::internal(format!("config write failed: {err}")))?
    .map_err(write_error)?;
    live.replace(written.config);
    Ok((written.response, live.current(), kept))
}

/// The reference's error: `-32600` with `data.config_write_error_code` when the request is at
/// fault, else an internal error.
fn write_error(err: WriteError) -> JsonRpcError {
    match err.code {
        Some(code) => JsonRpcError::invalid_request(err.message)
            .with_data(json!({ "config_write_error_code": code })),
        None => JsonRpcError::internal(err.message),
    }
}

#[cfg(test)]
mod tests {
    use weft_protocol::ConfigWriteErrorCode;

    use super::*;

    #[test]
    fn refusals_carry_the_reference_code() {
        let err = write_error(WriteError {
            code: Some(ConfigWriteErrorCode::ConfigVersionConflict),
            message: "m".into(),
        });
        assert_eq!(err.code, -32600);
        assert_eq!(
            err.data,
            Some(json!({"config_write_error_code": "configVersionConflict"}))
        );
        let err = write_error(WriteError {
            code: None,
            message: "io".into(),
        });
        assert_eq!((err.code, err.data), (-32603, None));
    }
}
