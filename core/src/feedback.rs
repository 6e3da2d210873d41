//! `feedback/save` (docs/protocol.md §7.37): a local feedback bundle, a ZIP at the absolute,
//! unused path the caller names, laid out as the reference lays its own: `report.json` (the
//! classification, the user's reason and tags, the thread), `attachments/NNNN/<file>` and a
//! `manifest.json` naming each attachment. With `includeLogs`, the thread's rollout goes in
//! (Weft keeps no log file of its own: its log is the daemon's stderr); each of
//! `extraLogFiles` always does.
//!
//! Never in a bundle: anything under `$WEFT_HOME` but the thread's own rollout (the
//! WebSocket tokens, the state DB, `config.toml` with its provider headers); an extra file
//! there is refused. Nothing from the config is written into the report. The bundle's files
//! are bounded by `[limits] feedback_bundle_bytes`. The ZIP is written beside its final path
//! and moved there without replacing anything, so a refused or failed save leaves nothing.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use weft_protocol::ThreadId;
use weft_protocol::jsonrpc::JsonRpcError;
use zip::write::SimpleFileOptions;

use crate::rollout::{RolloutLine, RolloutRecord, find_rollout};

/// What `feedback/save` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeedbackRequest {
    /// `bug`, `bad_result`, `good_result`, `safety_check`, or another word.
    pub classification: String,
    /// The user's words.
    pub reason: Option<String>,
    /// The caller's tags.
    pub tags: BTreeMap<String, String>,
    /// The thread the feedback is about.
    pub thread_id: Option<String>,
    /// Add the thread's rollout.
    pub include_logs: bool,
    /// Files to add.
    pub extra_log_files: Vec<String>,
    /// Where the ZIP goes.
    pub save_path: String,
}

/// What a save wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedbackSaved {
    /// The ZIP.
    pub saved_path: String,
    /// The thread the report names.
    pub thread_id: String,
    /// SHA-256 of the thread's replacement base instructions, whitespace-normalized; `None`
    /// when its rollout has none.
    pub prompt_hash: Option<String>,
}

/// Why a save failed.
#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    /// The request cannot be saved as asked (`-32600`).
    #[error("{0}")]
    Invalid(String),
    /// Writing the bundle failed (`-32603`).
    #[error("failed to save feedback: {0}")]
    Failed(String),
}

impl From<FeedbackError> for JsonRpcError {
    fn from(err: FeedbackError) -> JsonRpcError {
        match err {
            FeedbackError::Invalid(message) => JsonRpcError::invalid_request(message),
            failed @ FeedbackError::Failed(_) => JsonRpcError::internal(failed.to_string()),
        }
    }
}

/// A file going into the bundle.
struct Attachment {
    name: String,
    content_type: &'static str,
    bytes: Vec<u8>,
}

/// Write the bundle (blocking I/O: call it on the blocking pool). `home` is `$WEFT_HOME`,
/// `max_bytes` the bound on the files it holds.
pub fn save(
    home: &Path,
    request: &FeedbackRequest,
    max_bytes: u64,
) -> Result<FeedbackSaved, FeedbackError> {
    let save_path = PathBuf::from(&request.save_path);
    if !save_path.is_absolute() {
        return Err(FeedbackError::Invalid(
            "feedback savePath must be an absolute host path".into(),
        ));
    }
    let thread_id = match &request.thread_id {
        Some(id) => {
            uuid::Uuid::parse_str(id)
                .map_err(|err| FeedbackError::Invalid(format!("invalid thread id: {err}")))?;
            id.clone()
        }
        None => format!("no-active-thread-{}", uuid::Uuid::now_v7()),
    };
    let rollout = match &request.thread_id {
        Some(id) => find_rollout(home, &ThreadId::from(id.clone()))
            .map_err(|err| FeedbackError::Failed(err.to_string()))?
            .map(|found| found.path),
        None => None,
    };
    let prompt_hash = rollout.as_deref().and_then(prompt_hash);
    let mut files = Vec::new();
    let mut budget = max_bytes;
    if request.include_logs
        && let Some(path) = &rollout
    {
        files.push(read_attachment(path, &mut budget, max_bytes)?);
    }
    let secret_root = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    for extra in &request.extra_log_files {
        let path = Path::new(extra);
        if !path.is_absolute() {
            return Err(FeedbackError::Invalid(format!(
                "extraLogFiles must be absolute host paths: {extra}"
            )));
        }
        let real = std::fs::canonicalize(path)
            .map_err(|err| FeedbackError::Failed(format!("{extra}: {err}")))?;
        if real.starts_with(&secret_root) {
            return Err(FeedbackError::Invalid(format!(
                "{extra} is inside $WEFT_HOME, whose files are never put in a feedback bundle"
            )));
        }
        files.push(read_attachment(&real, &mut budget, max_bytes)?);
    }
    let report = report(request, &thread_id);
    write_zip(&save_path, &report, &files)?;
    Ok(FeedbackSaved {
        saved_path: request.save_path.clone(),
        thread_id,
        prompt_hash,
    })
}

/// The reference's label of a classification (`bad_result` is `Bad result`).
fn label(classification: &str) -> String {
    match classification {
        "bug" => "Bug".into(),
        "bad_result" => "Bad result".into(),
        "good_result" => "Good result".into(),
        "safety_check" => "Safety check".into(),
        other => {
            let spaced = other.replace('_', " ");
            let mut chars = spaced.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        }
    }
}

/// `report.json`: the event the reference would send, with nothing from the config.
fn report(request: &FeedbackRequest, thread_id: &str) -> serde_json::Value {
    let label = label(&request.classification);
    let mut tags: serde_json::Map<String, serde_json::Value> = request
        .tags
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().into()))
        .collect();
    tags.insert(
        "classification".into(),
        request.classification.clone().into(),
    );
    tags.insert("cli_version".into(), env!("CARGO_PKG_VERSION").into());
    tags.insert("thread_id".into(), thread_id.into());
    if let Some(reason) = &request.reason {
        tags.insert("reason".into(), reason.clone().into());
    }
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let message = format!("[{label}]: Weft session {thread_id}");
    let mut report = serde_json::json!({
        "event_id": uuid::Uuid::now_v7().simple().to_string(),
        "message": message,
        "timestamp": timestamp,
        "tags": tags,
    });
    if matches!(request.classification.as_str(), "bug" | "safety_check") {
        if let Some(reason) = &request.reason {
            report["exception"] =
                serde_json::json!({"values": [{"type": message, "value": reason}]});
        }
    } else {
        report["level"] = "info".into();
    }
    report
}

/// A regular file, counted against `budget`.
fn read_attachment(path: &Path, budget: &mut u64, max: u64) -> Result<Attachment, FeedbackError> {
    let shown = path.display();
    let meta =
        std::fs::metadata(path).map_err(|err| FeedbackError::Failed(format!("{shown}: {err}")))?;
    if !meta.is_file() {
        return Err(FeedbackError::Invalid(format!(
            "{shown} is not a regular file"
        )));
    }
    if meta.len() > *budget {
        return Err(FeedbackError::Invalid(format!(
            "the feedback bundle would exceed {max} bytes ([limits] feedback_bundle_bytes)"
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|err| FeedbackError::Failed(format!("{shown}: {err}")))?;
    *budget = budget.saturating_sub(bytes.len() as u64);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let content_type = if name.ends_with(".json") {
        "application/json"
    } else {
        "text/plain"
    };
    Ok(Attachment {
        name,
        content_type,
        bytes,
    })
}

/// The ZIP, written beside `path` and moved there only if nothing is there yet.
fn write_zip(
    path: &Path,
    report: &serde_json::Value,
    files: &[Attachment],
) -> Result<(), FeedbackError> {
    let failed = |err: &dyn std::fmt::Display| FeedbackError::Failed(err.to_string());
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(FeedbackError::Failed(
            "feedback save path already exists".into(),
        ));
    }
    let dir = path.parent().unwrap_or(Path::new("/"));
    let temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| failed(&e))?;
    let mut zip = zip::ZipWriter::new(temp.as_file());
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut put = |name: &str, bytes: &[u8]| -> Result<(), FeedbackError> {
        zip.start_file(name, options).map_err(|e| failed(&e))?;
        zip.write_all(bytes).map_err(|e| failed(&e))
    };
    put("report.json", report.to_string().as_bytes())?;
    let mut manifest = Vec::new();
    for (n, file) in files.iter().enumerate() {
        let entry = format!("attachments/{n:04}/{}", file.name);
        put(&entry, &file.bytes)?;
        manifest.push(serde_json::json!({
            "entry": entry,
            "filename": file.name,
            "contentType": file.content_type,
        }));
    }
    put(
        "manifest.json",
        serde_json::Value::from(manifest).to_string().as_bytes(),
    )?;
    zip.finish().map_err(|e| failed(&e))?;
    temp.as_file().sync_all().map_err(|e| failed(&e))?;
    temp.persist_noclobber(path).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            FeedbackError::Failed("feedback save path already exists".into())
        } else {
            failed(&e.error)
        }
    })?;
    Ok(())
}

/// The prompt hash of a rollout: SHA-256 (hex) of its replacement base instructions with
/// each run of whitespace made one space; `None` when it has none.
fn prompt_hash(rollout: &Path) -> Option<String> {
    let file = std::fs::File::open(rollout).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(file).read_line(&mut first).ok()?;
    let line: RolloutLine = serde_json::from_str(&first).ok()?;
    let RolloutRecord::SessionMeta(meta) = line.record else {
        return None;
    };
    let instructions = meta.base_instructions?;
    Some(hash_prompt(&instructions))
}

fn hash_prompt(text: &str) -> String {
    let normalized = text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{:x}", Sha256::digest(normalized.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: &Path) -> FeedbackRequest {
        FeedbackRequest {
            classification: "bad_result".into(),
            reason: Some("wrong".into()),
            save_path: dir.join("fb.zip").display().to_string(),
            ..FeedbackRequest::default()
        }
    }

    fn entries(path: &Path) -> Vec<String> {
        let archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
        archive
            .file_names()
            .map(|n| n.unwrap().to_string())
            .collect()
    }

    #[test]
    fn a_bundle_without_a_thread_holds_the_report_and_its_extra_files() {
        let home = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let extra = out.path().join("extra.log");
        std::fs::write(&extra, "hello").unwrap();
        let mut req = request(out.path());
        req.extra_log_files = vec![extra.display().to_string()];
        let saved = save(home.path(), &req, 1024).unwrap();
        assert!(saved.thread_id.starts_with("no-active-thread-"));
        assert_eq!(saved.prompt_hash, None);
        let mut names = entries(Path::new(&saved.saved_path));
        names.sort();
        assert_eq!(
            names,
            ["attachments/0000/extra.log", "manifest.json", "report.json"]
        );
        // Never over what is there.
        let err = save(home.path(), &req, 1024).unwrap_err();
        assert_eq!(
            err.to_string(),
            "failed to save feedback: feedback save path already exists"
        );
    }

    #[test]
    fn refusals_leave_nothing_behind() {
        let home = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("ws-token"), "secret").unwrap();
        let mut req = request(out.path());
        req.save_path = "rel.zip".into();
        let err = JsonRpcError::from(save(home.path(), &req, 1024).unwrap_err());
        assert_eq!(
            (err.code, err.message.as_str()),
            (-32600, "feedback savePath must be an absolute host path")
        );
        let mut req = request(out.path());
        req.extra_log_files = vec![home.path().join("ws-token").display().to_string()];
        assert!(matches!(
            save(home.path(), &req, 1024),
            Err(FeedbackError::Invalid(_))
        ));
        let big = out.path().join("big.log");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        req.extra_log_files = vec![big.display().to_string()];
        assert!(matches!(
            save(home.path(), &req, 1024),
            Err(FeedbackError::Invalid(_))
        ));
        req.extra_log_files = vec![out.path().display().to_string()];
        assert!(save(home.path(), &req, 1024).is_err());
        req.extra_log_files.clear();
        req.thread_id = Some("nope".into());
        assert!(save(home.path(), &req, 1024).is_err());
        assert!(!out.path().join("fb.zip").exists());
    }

    #[test]
    fn labels_and_the_prompt_hash() {
        assert_eq!(label("bad_result"), "Bad result");
        assert_eq!(label("other"), "Other");
        assert_eq!(hash_prompt(" a \n b "), hash_prompt("a b"));
        assert_eq!(hash_prompt("a b"), format!("{:x}", Sha256::digest(b"a b")));
    }
}
