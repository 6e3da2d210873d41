//! `fs/readFile`, `fs/writeFile`, `fs/readDirectory`, `fs/getMetadata`,
//! `fs/createDirectory`, `fs/remove`, `fs/copy`, `fs/watch`, `fs/unwatch` and the
//! `fs/changed` notifications a watch sends (docs/protocol.md §7.31). The file access itself
//! (roots, `$WEFT_HOME`, sizes, special files) is core's `fs` module; these handlers run it
//! off the runtime's threads and word its errors as the reference does.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use weft_core::fs::{FsAccess, FsError, WatchError, WatchSubscription};
use weft_protocol::fs_api::{
    AbsolutePathBuf, FsChangedNotification, FsCopyParams, FsCopyResponse, FsCreateDirectoryParams,
    FsCreateDirectoryResponse, FsGetMetadataParams, FsGetMetadataResponse, FsReadDirectoryParams,
    FsReadDirectoryResponse, FsReadFileParams, FsReadFileResponse, FsRemoveParams,
    FsRemoveResponse, FsUnwatchParams, FsUnwatchResponse, FsWatchParams, FsWatchResponse,
    FsWriteFileParams, FsWriteFileResponse,
};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::notifications::ServerNotification;

use crate::connection::Connection;
use crate::dispatch::{Answer, Context, HandlerResult};
use crate::outgoing;

/// `fs/readFile`: the file's bytes, base64.
pub async fn read_file(
    cx: Context<'_>,
    params: FsReadFileParams,
) -> HandlerResult<FsReadFileResponse> {
    let bytes = blocking(cx, move |fs| fs.read_file(&params.path)).await?;
    Ok(FsReadFileResponse {
        data_base64: STANDARD.encode(bytes),
    })
}

/// `fs/writeFile`: the decoded bytes become the file's contents.
pub async fn write_file(
    cx: Context<'_>,
    params: FsWriteFileParams,
) -> HandlerResult<FsWriteFileResponse> {
    let max = cx.state.fs.max_file_bytes();
    // Refused before decoding when even the shortest decoding would be too large.
    let shortest = (params.data_base64.len() / 4 * 3).saturating_sub(2) as u64;
    let data = if shortest > max {
        None
    } else {
        Some(
            STANDARD
                .decode(params.data_base64.as_bytes())
                .map_err(|err| {
                    JsonRpcError::invalid_request(format!(
                        "fs/writeFile requires valid base64 dataBase64: {err}"
                    ))
                })?,
        )
    };
    let path = params.path;
    blocking(cx, move |fs| match data {
        Some(data) => fs.write_file(&path, &data),
        None => Err(FsError::Invalid(format!(
            "`{path}` is larger than limits.max_fs_file_bytes ({max} bytes)"
        ))),
    })
    .await?;
    Ok(FsWriteFileResponse {})
}

/// `fs/readDirectory`: the directory's direct entries.
pub async fn read_directory(
    cx: Context<'_>,
    params: FsReadDirectoryParams,
) -> HandlerResult<FsReadDirectoryResponse> {
    blocking(cx, move |fs| fs.read_directory(&params.path)).await
}

/// `fs/getMetadata`: what the path is, and its times.
pub async fn get_metadata(
    cx: Context<'_>,
    params: FsGetMetadataParams,
) -> HandlerResult<FsGetMetadataResponse> {
    blocking(cx, move |fs| fs.metadata(&params.path)).await
}

/// `fs/createDirectory`: recursive unless `recursive: false`.
pub async fn create_directory(
    cx: Context<'_>,
    params: FsCreateDirectoryParams,
) -> HandlerResult<FsCreateDirectoryResponse> {
    let recursive = params.recursive.unwrap_or(true);
    blocking(cx, move |fs| fs.create_directory(&params.path, recursive)).await?;
    Ok(FsCreateDirectoryResponse {})
}

/// `fs/remove`: recursive and forced unless said otherwise.
pub async fn remove(cx: Context<'_>, params: FsRemoveParams) -> HandlerResult<FsRemoveResponse> {
    let recursive = params.recursive.unwrap_or(true);
    let force = params.force.unwrap_or(true);
    blocking(cx, move |fs| fs.remove(&params.path, recursive, force)).await?;
    Ok(FsRemoveResponse {})
}

/// `fs/copy`: a file, a link, or (with `recursive`) a directory tree.
pub async fn copy(cx: Context<'_>, params: FsCopyParams) -> HandlerResult<FsCopyResponse> {
    blocking(cx, move |fs| {
        fs.copy(
            &params.source_path,
            &params.destination_path,
            params.recursive,
        )
    })
    .await?;
    Ok(FsCopyResponse {})
}

/// `fs/watch`: a watch of this connection on the path; its `fs/changed` notifications start
/// once the response is queued, and end with `fs/unwatch` or the connection.
pub async fn watch(
    cx: Context<'_>,
    params: FsWatchParams,
) -> HandlerResult<Answer<FsWatchResponse>> {
    let path = params.path.clone();
    blocking(cx, move |fs| fs.check_watch(&path)).await?;
    let subscription = cx
        .state
        .fs_watches
        .watch(
            cx.connection.id,
            params.watch_id.clone(),
            params.path.as_path().to_path_buf(),
        )
        .map_err(|err| match err {
            WatchError::Watcher(message) => JsonRpcError::internal(message),
            refused => JsonRpcError::invalid_request(refused.to_string()),
        })?;
    let connection = cx.connection.clone();
    let watch_id = params.watch_id;
    Ok(
        Answer::new(FsWatchResponse { path: params.path }).then_run(move |_| async move {
            tokio::spawn(forward(connection, watch_id, subscription));
        }),
    )
}

/// `fs/unwatch`: answered once no notification of the watch is in flight (an unknown id is
/// fine, as in the reference).
pub async fn unwatch(cx: Context<'_>, params: FsUnwatchParams) -> HandlerResult<FsUnwatchResponse> {
    cx.state
        .fs_watches
        .unwatch(cx.connection.id, &params.watch_id)
        .await;
    Ok(FsUnwatchResponse {})
}

/// Send one watch's batches to its connection until the watch or the connection ends.
async fn forward(connection: Arc<Connection>, watch_id: String, subscription: WatchSubscription) {
    loop {
        let batch = tokio::select! {
            batch = subscription.next() => batch,
            () = connection.closed.cancelled() => None,
        };
        let Some(paths) = batch else {
            return;
        };
        let Some(_sending) = subscription.sending().await else {
            return;
        };
        let changed_paths = paths.into_iter().filter_map(AbsolutePathBuf::new).collect();
        let notification = ServerNotification::FsChanged(FsChangedNotification {
            watch_id: watch_id.clone(),
            changed_paths,
        });
        if connection.wants_notification(notification.method())
            && !connection.send_notification(&outgoing::notification(&notification), None)
        {
            return;
        }
    }
}

/// Run a file operation on a blocking thread, its error worded as the reference's: a refusal
/// `-32600`, an OS error `-32603` with the OS's text.
async fn blocking<T, F>(cx: Context<'_>, op: F) -> HandlerResult<T>
where
    T: Send + 'static,
    F: FnOnce(&FsAccess) -> Result<T, FsError> + Send + 'static,
{
    let fs = cx.state.fs.clone();
    tokio::task::spawn_blocking(move || op(&fs))
        .await
        .map_err(|err| JsonRpcError::internal(format!("filesystem task failed: {err}")))?
        .map_err(|err| match err {
            FsError::Invalid(message) => JsonRpcError::invalid_request(message),
            FsError::Io(err) => JsonRpcError::internal(err.to_string()),
        })
}
