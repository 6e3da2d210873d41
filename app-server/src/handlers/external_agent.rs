//! `externalAgentConfig/detect`, `externalAgentConfig/import`,
//! `externalAgentConfig/import/recordHistory` and `externalAgentConfig/import/readHistories`
//! (docs/protocol.md §7.39; what maps onto what: `weft_core::external_agent`). An import is
//! answered with its id at once; its items then run one at a time, under the config write lock,
//! each followed by `externalAgentConfig/import/progress` to every connection, and the whole
//! by its history entry and `externalAgentConfig/import/completed`, as the reference sends them.

use std::path::Path;
use std::sync::Arc;

use weft_core::external_agent::detect::detect as detect_items;
use weft_core::external_agent::history::{AppendError, History};
use weft_core::external_agent::import::{MEMORY_DISABLED, completed, import_item};
use weft_core::external_agent::session_import::{
    Pending, Requested, SessionBounds, detect_sessions, ledger_record, not_detected, not_stored,
    prepare, record_import, stored,
};
use weft_core::external_agent::{Homes, repo_root};
use weft_protocol::config_api::NoParams;
use weft_protocol::external_agent_api::{
    ExternalAgentConfigDetectParams, ExternalAgentConfigDetectResponse,
    ExternalAgentConfigImportCompletedNotification, ExternalAgentConfigImportHistoriesReadResponse,
    ExternalAgentConfigImportHistory, ExternalAgentConfigImportHistoryRecordParams,
    ExternalAgentConfigImportHistoryRecordResponse, ExternalAgentConfigImportItemTypeFailure,
    ExternalAgentConfigImportItemTypeSuccess, ExternalAgentConfigImportParams,
    ExternalAgentConfigImportProgressNotification, ExternalAgentConfigImportResponse,
    ExternalAgentConfigImportTypeResult, ExternalAgentConfigMigrationItem,
    ExternalAgentConfigMigrationItemType,
};
use weft_protocol::fs_api::AbsolutePathBuf;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::notifications::ServerNotification;

use crate::dispatch::{Answer, Context, HandlerResult};
use crate::state::AppState;

/// Why a repository may not be touched: outside `[fs] roots`, or beneath `$WEFT_HOME`, as the
/// `fs/*` methods refuse it (docs/protocol.md §7.31).
fn refused_repo(state: &AppState, cwd: &str) -> Option<String> {
    let root = repo_root(Path::new(cwd))?;
    let absolute = AbsolutePathBuf::new(&root)?;
    state
        .fs
        .check_watch(&absolute)
        .err()
        .map(|err| err.to_string())
}

fn homes(state: &AppState) -> Homes {
    let config = state.threads.services().live.current();
    Homes::from_env(state.home.clone(), config.layers.file_path.clone())
}

async fn blocking<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, JsonRpcError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| JsonRpcError::internal(format!("{what} failed: {err}")))
}

/// `externalAgentConfig/detect`.
pub async fn detect(
    cx: Context<'_>,
    params: ExternalAgentConfigDetectParams,
) -> HandlerResult<ExternalAgentConfigDetectResponse> {
    let homes = homes(cx.state);
    let cwds: Vec<String> = params
        .cwds
        .unwrap_or_default()
        .into_iter()
        .filter(|cwd| refused_repo(cx.state, cwd).is_none())
        .collect();
    let include_home = params.include_home;
    let sessions = SessionBounds::new(
        params.max_sessions,
        params.max_session_age_days,
        &cx.state.config.limits,
    );
    let items = blocking("external agent detection", move || {
        detect_items(&homes, include_home, &cwds, sessions)
    })
    .await?
    .map_err(JsonRpcError::internal)?;
    Ok(ExternalAgentConfigDetectResponse {
        items,
        connectors: Vec::new(),
    })
}

/// `externalAgentConfig/import`: `{importId}`, then the import.
pub async fn import(
    cx: Context<'_>,
    params: ExternalAgentConfigImportParams,
) -> HandlerResult<Answer<ExternalAgentConfigImportResponse>> {
    let items = params.migration_items;
    if items
        .iter()
        .any(|item| item.item_type == ExternalAgentConfigMigrationItemType::Memory)
    {
        return Err(JsonRpcError::invalid_request(MEMORY_DISABLED));
    }
    let import_id = uuid::Uuid::now_v7().to_string();
    let answer = Answer::new(ExternalAgentConfigImportResponse {
        import_id: import_id.clone(),
    });
    if items.is_empty() {
        return Ok(answer);
    }
    let provider_id = params.provider_id;
    let originator = cx
        .connection
        .initialize_choices()
        .map(|c| c.client_name.clone());
    Ok(answer.then_run(move |state| run(state, import_id, provider_id, originator, items)))
}

/// The sessions the `SESSIONS` items name, checked against what detect offers now (with the
/// default bounds) and the ledger: those to import, or, as the reference answers, the first
/// one detect does not offer (and then none is imported).
async fn prepare_sessions(
    state: &AppState,
    homes: &Homes,
    items: &[ExternalAgentConfigMigrationItem],
) -> Result<Vec<Pending>, Box<ExternalAgentConfigImportItemTypeFailure>> {
    // Each file once, however often it is named.
    let mut named = std::collections::HashSet::new();
    let requested: Vec<_> = items
        .iter()
        .filter(|item| item.item_type == ExternalAgentConfigMigrationItemType::Sessions)
        .flat_map(|item| item.details.iter().flat_map(|d| d.sessions.iter().cloned()))
        .filter(|session| named.insert(session.path.clone()))
        .collect();
    let bounds = SessionBounds::new(None, None, &state.config.limits);
    let homes = homes.clone();
    let prepared = tokio::task::spawn_blocking(move || {
        let detected = detect_sessions(&homes, bounds, weft_core::time::now_secs());
        let mut pending: Vec<Pending> = Vec::new();
        for session in &requested {
            match prepare(&homes, session, &detected, bounds.max_bytes) {
                Requested::Import(found) => {
                    if !pending.iter().any(|p| p.source == found.source) {
                        pending.push(*found);
                    }
                }
                Requested::NotDetected => return Err(Box::new(not_detected(&session.path))),
                Requested::AlreadyImported | Requested::Skipped => {}
            }
        }
        Ok(pending)
    })
    .await;
    prepared.unwrap_or_else(|err| {
        tracing::warn!(%err, "external agent session import failed");
        Ok(Vec::new())
    })
}

/// Store each pending session as a thread (the oldest conversation first) and record it in
/// the ledger; the outcomes listed last requested first, as the reference lists them.
async fn import_sessions(
    state: &AppState,
    homes: &Homes,
    originator: Option<String>,
    pending: Vec<Pending>,
) -> ExternalAgentConfigImportTypeResult {
    let mut order: Vec<usize> = (0..pending.len()).collect();
    order.sort_by(|a, b| {
        let key = |p: &Pending| (p.thread.created_at, p.source.clone());
        key(&pending[*a]).cmp(&key(&pending[*b]))
    });
    let mut outcomes: Vec<Option<Result<ExternalAgentConfigImportItemTypeSuccess, _>>> =
        vec![None; pending.len()];
    for index in order {
        let session = &pending[index];
        let mut thread = session.thread.clone();
        thread.originator = originator.clone();
        let outcome = match state.threads.import_thread(thread).await {
            Ok(id) => {
                let record = ledger_record(session, id.as_str());
                let ledger_homes = homes.clone();
                match tokio::task::spawn_blocking(move || record_import(&ledger_homes, record))
                    .await
                {
                    Ok(Ok(())) => {}
                    Ok(Err(err)) => tracing::warn!(%err, "could not record the session import"),
                    Err(err) => tracing::warn!(%err, "could not record the session import"),
                }
                Ok(stored(session, id.as_str()))
            }
            Err(err) => Err(not_stored(session, &err.to_string())),
        };
        outcomes[index] = Some(outcome);
    }
    let mut result = sessions_result();
    for outcome in outcomes.into_iter().rev().flatten() {
        match outcome {
            Ok(success) => result.successes.push(success),
            Err(failure) => result.failures.push(failure),
        }
    }
    result
}

fn sessions_result() -> ExternalAgentConfigImportTypeResult {
    ExternalAgentConfigImportTypeResult {
        item_type: ExternalAgentConfigMigrationItemType::Sessions,
        successes: Vec::new(),
        failures: Vec::new(),
    }
}

async fn run(
    state: Arc<AppState>,
    import_id: String,
    provider_id: Option<String>,
    originator: Option<String>,
    items: Vec<ExternalAgentConfigMigrationItem>,
) {
    let progress = |result: &ExternalAgentConfigImportTypeResult| {
        ServerNotification::from(ExternalAgentConfigImportProgressNotification {
            import_id: import_id.clone(),
            item_type_results: vec![result.clone()],
        })
    };
    let live = Arc::clone(&state.threads.services().live);
    let _one_at_a_time = live.lock_writes().await;
    let homes = homes(&state);
    let mut results = Vec::new();
    if items
        .iter()
        .any(|item| item.item_type == ExternalAgentConfigMigrationItemType::Sessions)
    {
        // As the reference: a session detect does not offer fails the item at once; else an
        // empty `SESSIONS` progress comes first, then the outcome once the threads are stored.
        let sessions = match prepare_sessions(&state, &homes, &items).await {
            Err(failure) => {
                let mut result = sessions_result();
                result.failures.push(*failure);
                result
            }
            Ok(pending) => {
                state
                    .connections
                    .broadcast(&progress(&sessions_result()))
                    .await;
                import_sessions(&state, &homes, originator, pending).await
            }
        };
        state.connections.broadcast(&progress(&sessions)).await;
        results.push(sessions);
    }
    for item in items
        .into_iter()
        .filter(|item| item.item_type != ExternalAgentConfigMigrationItemType::Sessions)
    {
        let kind = item.item_type;
        if let Some(cwd) = item.cwd.as_deref().filter(|cwd| !cwd.is_empty())
            && let Some(reason) = refused_repo(&state, cwd)
        {
            let result = ExternalAgentConfigImportTypeResult {
                item_type: kind,
                successes: Vec::new(),
                failures: vec![ExternalAgentConfigImportItemTypeFailure {
                    item_type: kind,
                    error_type: None,
                    sub_error_type: None,
                    failure_stage: "repository_refused".into(),
                    message: reason,
                    cwd: Some(cwd.to_owned()),
                    source: None,
                }],
            };
            state.connections.broadcast(&progress(&result)).await;
            results.push(result);
            continue;
        }
        let current = live.current();
        let homes = homes.clone();
        let imported =
            tokio::task::spawn_blocking(move || import_item(&homes, &item, &current)).await;
        let result = match imported {
            Ok(imported) => {
                if let Some(config) = imported.config {
                    live.replace(config);
                }
                imported.result
            }
            // The item's import died (a panic): it failed, it is not reported as empty.
            Err(err) => {
                tracing::warn!(%err, "external agent import item failed");
                ExternalAgentConfigImportTypeResult {
                    item_type: kind,
                    successes: Vec::new(),
                    failures: vec![ExternalAgentConfigImportItemTypeFailure {
                        item_type: kind,
                        error_type: None,
                        sub_error_type: None,
                        failure_stage: "import".into(),
                        message: format!("the import stopped: {err}"),
                        cwd: None,
                        source: None,
                    }],
                }
            }
        };
        state.connections.broadcast(&progress(&result)).await;
        results.push(result);
    }
    let item_type_results = completed(&results);
    let entry = ExternalAgentConfigImportHistory {
        import_id: import_id.clone(),
        provider_id,
        completed_at_ms: weft_core::time::now_ms(),
        successes: item_type_results
            .iter()
            .flat_map(|r| r.successes.iter().cloned())
            .collect(),
        failures: item_type_results
            .iter()
            .flat_map(|r| r.failures.iter().cloned())
            .collect(),
    };
    let history = History::new(&state.home, &state.config.limits);
    match tokio::task::spawn_blocking(move || history.append(entry)).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => tracing::warn!(%err, "could not record the external agent import"),
        Err(err) => tracing::warn!(%err, "could not record the external agent import"),
    }
    let notification = ServerNotification::from(ExternalAgentConfigImportCompletedNotification {
        import_id,
        item_type_results,
    });
    state.connections.broadcast(&notification).await;
}

/// `externalAgentConfig/import/recordHistory`: an import done elsewhere, recorded.
pub async fn record_history(
    cx: Context<'_>,
    params: ExternalAgentConfigImportHistoryRecordParams,
) -> HandlerResult<ExternalAgentConfigImportHistoryRecordResponse> {
    let import_id = uuid::Uuid::now_v7().to_string();
    let mut successes = Vec::new();
    let mut failures = Vec::new();
    for result in params.item_type_results {
        successes.extend(result.successes.into_iter().map(|success| {
            ExternalAgentConfigImportItemTypeSuccess {
                item_type: success.item_type,
                cwd: success.cwd,
                source: success.source,
                target: success.target,
                title: success.title,
            }
        }));
        failures.extend(result.failures);
    }
    let entry = ExternalAgentConfigImportHistory {
        import_id: import_id.clone(),
        provider_id: Some(params.provider_id),
        completed_at_ms: weft_core::time::now_ms(),
        successes,
        failures,
    };
    let history = History::new(&cx.state.home, &cx.state.config.limits);
    blocking("recording the import", move || history.append(entry))
        .await?
        .map_err(|err| match err {
            AppendError::TooLarge { .. } => JsonRpcError::invalid_request(err.to_string()),
            AppendError::Io(err) => {
                JsonRpcError::internal(format!("failed to record the import: {err}"))
            }
        })?;
    Ok(ExternalAgentConfigImportHistoryRecordResponse { import_id })
}

/// `externalAgentConfig/import/readHistories`: past imports, newest first.
pub async fn read_histories(
    cx: Context<'_>,
    _params: NoParams,
) -> HandlerResult<ExternalAgentConfigImportHistoriesReadResponse> {
    let history = History::new(&cx.state.home, &cx.state.config.limits);
    let data = blocking("reading the import history", move || history.read())
        .await?
        .map_err(|err| {
            JsonRpcError::internal(format!("failed to read the import history: {err}"))
        })?;
    Ok(ExternalAgentConfigImportHistoriesReadResponse {
        data,
        connectors: Vec::new(),
    })
}
