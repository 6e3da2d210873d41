//! Validation of every message Weft sends, against Weft's own schema (`<root>/schema`, always)
//! and the reference schema (`<root>/../shared/reference/codex-app-server-schema`, for the
//! methods we share with Codex).
//!
//! - notifications → the `ServerNotification.json` branch for their method (plus a check that
//!   `emittedAtMs` is an integer);
//! - server requests → the `ServerRequest.json` branch for their method;
//! - responses → the response schema of the request's method: `XResponse.json` where `XParams`
//!   is the method's params type in `ClientRequest.json` (so `thread/name/set` →
//!   `v2/ThreadSetNameResponse.json`), else the name derived from the method
//!   (`thread/loaded/list` → `ThreadLoadedListResponse`), looked up in `v1/`, `v2/` and the top
//!   level;
//! - errors → `JSONRPCError.json`.
//!
//! Every message must also carry `"jsonrpc":"2.0"`. Schemas are compiled once per process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::Validator;
use serde_json::{Map, Value};

use crate::binary::workspace_root;

/// What kind of message the server sent, by shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `{method, params}` without an id.
    Notification,
    /// `{id, method, params}`.
    ServerRequest,
    /// `{id, result}`.
    Response,
    /// `{id, error}`.
    Error,
}

/// Classify a message by its members; `None` if it is none of the four shapes.
pub fn kind_of(msg: &Value) -> Option<Kind> {
    let obj = msg.as_object()?;
    let has = |key: &str| obj.contains_key(key);
    match (has("id"), has("method"), has("result"), has("error")) {
        (false, true, false, false) => Some(Kind::Notification),
        (true, true, false, false) => Some(Kind::ServerRequest),
        (true, false, true, false) => Some(Kind::Response),
        (true, false, false, true) => Some(Kind::Error),
        _ => None,
    }
}

/// Validate one message received from the daemon. `request_method` is the method of the
/// request this message answers (for responses and errors), if known.
pub fn validate_message(msg: &Value, request_method: Option<&str>) -> Result<(), String> {
    if msg.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err("missing `\"jsonrpc\":\"2.0\"`".into());
    }
    let kind = kind_of(msg).ok_or("not a JSON-RPC request, response, error or notification")?;
    match kind {
        Kind::Notification => {
            if !msg
                .get("emittedAtMs")
                .is_some_and(|v| v.is_i64() || v.is_u64())
            {
                return Err("notification without an integer `emittedAtMs`".into());
            }
            validate_union(msg, "ServerNotification.json")
        }
        Kind::ServerRequest => validate_union(msg, "ServerRequest.json"),
        Kind::Response => {
            let method = request_method.ok_or("a response to an id the client never sent")?;
            validate_response(&msg["result"], method)
        }
        Kind::Error => {
            if request_method.is_none() {
                return Err("an error response to an id the client never sent".into());
            }
            validate_error(msg)
        }
    }
}

fn validate_union(msg: &Value, file: &str) -> Result<(), String> {
    let method = msg["method"].as_str().ok_or("`method` is not a string")?;
    match weft().union_branch(file, method)? {
        Some(validator) => check(&validator, msg, &format!("Weft's {file} ({method})"))?,
        None => return Err(format!("method `{method}` is not in Weft's {file}")),
    }
    if let Some(reference) = reference()
        && let Some(validator) = reference.union_branch(file, method)?
    {
        check(&validator, msg, &format!("the reference {file} ({method})"))?;
    }
    Ok(())
}

fn validate_response(result: &Value, method: &str) -> Result<(), String> {
    match weft().response_validator(method)? {
        Some((file, validator)) => check(&validator, result, &format!("Weft's {file}"))?,
        None => {
            return Err(format!(
                "no response schema for `{method}` in Weft's schema ({})",
                weft().root.display()
            ));
        }
    }
    if let Some(reference) = reference()
        && let Some((file, validator)) = reference.response_validator(method)?
    {
        check(&validator, result, &format!("the reference {file}"))?;
    }
    Ok(())
}

fn validate_error(msg: &Value) -> Result<(), String> {
    let file = "JSONRPCError.json";
    match weft().file_validator(file)? {
        Some(validator) => check(&validator, msg, &format!("Weft's {file}"))?,
        None => note_once(&format!(
            "Weft's schema has no {file}; error responses are checked against the reference only"
        )),
    }
    let validator = match reference() {
        Some(reference) => reference.file_validator(file)?,
        None => None,
    };
    if let Some(validator) = validator {
        check(&validator, msg, &format!("the reference {file}"))?;
    }
    let error = &msg["error"];
    if !error["code"].is_i64() || !error["message"].is_string() {
        return Err("`error` needs an integer `code` and a string `message`".into());
    }
    Ok(())
}

fn check(validator: &Validator, instance: &Value, what: &str) -> Result<(), String> {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(8)
        .map(|err| {
            format!(
                "  at `{}` (schema `{}`): {}",
                err.instance_path(),
                err.schema_path(),
                crate::clip(&err.masked().to_string(), 400)
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "does not validate against {what}:\n{}",
            errors.join("\n")
        ))
    }
}

/// Which schema folder to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Weft's own, `<root>/schema`.
    Weft,
    /// The Codex reference (absent folders read as empty).
    Reference,
}

fn dir(which: Which) -> Option<&'static SchemaDir> {
    match which {
        Which::Weft => Some(weft()),
        Which::Reference => reference(),
    }
}

/// The file holding the response schema of `method` (e.g. `v2/ThreadSetNameResponse.json`).
pub fn response_schema_file(which: Which, method: &str) -> Result<Option<String>, String> {
    match dir(which) {
        Some(dir) => Ok(dir.response_validator(method)?.map(|(file, _)| file)),
        None => Ok(None),
    }
}

/// Whether the method union `file` (`ServerNotification.json`, `ServerRequest.json`,
/// `ClientRequest.json`) has a branch for `method`.
pub fn union_has_method(which: Which, file: &str, method: &str) -> Result<bool, String> {
    match dir(which) {
        Some(dir) => Ok(dir.union_branch(file, method)?.is_some()),
        None => Ok(false),
    }
}

/// Weft's own schema folder, `<root>/schema`.
pub fn weft_schema_dir() -> PathBuf {
    workspace_root().join("schema")
}

/// The reference schema folder, `<root>/../shared/reference/codex-app-server-schema`.
pub fn reference_schema_dir() -> PathBuf {
    workspace_root().join("../shared/reference/codex-app-server-schema")
}

fn weft() -> &'static SchemaDir {
    static WEFT: OnceLock<SchemaDir> = OnceLock::new();
    WEFT.get_or_init(|| SchemaDir::new(weft_schema_dir()))
}

fn reference() -> Option<&'static SchemaDir> {
    static REFERENCE: OnceLock<Option<SchemaDir>> = OnceLock::new();
    REFERENCE
        .get_or_init(|| {
            let dir = reference_schema_dir();
            if dir.is_dir() {
                Some(SchemaDir::new(dir))
            } else {
                note_once(&format!(
                    "reference schema not found at {}; skipping reference validation",
                    dir.display()
                ));
                None
            }
        })
        .as_ref()
}

fn note_once(note: &str) {
    static NOTED: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut noted = NOTED.lock().unwrap_or_else(|e| e.into_inner());
    if !noted.iter().any(|n| n == note) {
        eprintln!("weft-test-support: note: {note}");
        noted.push(note.to_owned());
    }
}

type Compiled = Result<Option<Arc<Validator>>, String>;
type Loaded = Result<Option<Arc<Value>>, String>;

/// One schema folder with lazily compiled, cached validators.
struct SchemaDir {
    root: PathBuf,
    documents: Mutex<HashMap<String, Loaded>>,
    validators: Mutex<HashMap<String, Compiled>>,
}

impl SchemaDir {
    fn new(root: PathBuf) -> SchemaDir {
        SchemaDir {
            root,
            documents: Mutex::new(HashMap::new()),
            validators: Mutex::new(HashMap::new()),
        }
    }

    /// The parsed JSON of `relative`, `None` if the file does not exist.
    fn document(&self, relative: &str) -> Loaded {
        let mut documents = self.documents.lock().unwrap_or_else(|e| e.into_inner());
        documents
            .entry(relative.to_owned())
            .or_insert_with(|| load(&self.root.join(relative)))
            .clone()
    }

    fn cached(&self, key: String, build: impl FnOnce() -> Compiled) -> Compiled {
        if let Some(found) = self
            .validators
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return found.clone();
        }
        // Compile outside the lock: big unions take a moment and other tests may wait.
        let compiled = build();
        self.validators
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_insert(compiled)
            .clone()
    }

    /// A validator for a whole file, `None` if the file does not exist.
    fn file_validator(&self, relative: &str) -> Compiled {
        self.cached(relative.to_owned(), || match self.document(relative)? {
            Some(doc) => compile(&doc, &self.root.join(relative)).map(Some),
            None => Ok(None),
        })
    }

    /// A validator for the branch of a method union (`ServerNotification.json`, …) whose
    /// `method` is `method`, together with the union's own top-level keywords (such as
    /// `emittedAtMs`). Narrowing to the branch gives precise errors instead of "not valid under
    /// any of the schemas listed in oneOf". `None` if the method is not in the union.
    fn union_branch(&self, file: &str, method: &str) -> Compiled {
        self.cached(format!("{file}#{method}"), || {
            let path = self.root.join(file);
            let doc = self
                .document(file)?
                .ok_or_else(|| format!("schema file {} is missing", path.display()))?;
            let Some(branches) = doc.get("oneOf").or_else(|| doc.get("anyOf")) else {
                // Not a union: validate against the whole file.
                return compile(&doc, &path).map(Some);
            };
            let branches = branches.as_array().cloned().unwrap_or_default();
            let Some(branch) = branches
                .into_iter()
                .find(|b| branch_method(&doc, b).as_deref() == Some(method))
            else {
                return Ok(None);
            };
            let mut sub: Map<String, Value> = doc
                .as_object()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|(k, _)| !matches!(k.as_str(), "oneOf" | "anyOf" | "title"))
                .collect();
            sub.insert("allOf".into(), Value::Array(vec![branch]));
            compile(&Value::Object(sub), &path).map(Some)
        })
    }

    /// The validator of the response schema of `method`, with its file name; `None` if this
    /// folder has no such file.
    fn response_validator(&self, method: &str) -> Result<Option<(String, Arc<Validator>)>, String> {
        for name in self.response_names(method)? {
            for dir in ["v2/", "v1/", ""] {
                let relative = format!("{dir}{name}.json");
                if let Some(validator) = self.file_validator(&relative)? {
                    return Ok(Some((relative, validator)));
                }
            }
        }
        Ok(None)
    }

    /// Candidate response type names for `method`: from the params type named in
    /// `ClientRequest.json` first, then derived from the method name.
    fn response_names(&self, method: &str) -> Result<Vec<String>, String> {
        let mut names = Vec::new();
        if let Some(doc) = self.document("ClientRequest.json")? {
            let branches = doc.get("oneOf").or_else(|| doc.get("anyOf"));
            for branch in branches.and_then(Value::as_array).into_iter().flatten() {
                if branch_method(&doc, branch).as_deref() != Some(method) {
                    continue;
                }
                let branch = resolve(&doc, branch);
                let params_ref = branch
                    .pointer("/properties/params/$ref")
                    .or_else(|| branch.pointer("/properties/params/allOf/0/$ref"))
                    .and_then(Value::as_str);
                if let Some(params) = params_ref.and_then(|r| r.rsplit('/').next())
                    && let Some(stem) = params.strip_suffix("Params")
                {
                    names.push(format!("{stem}Response"));
                }
            }
        }
        names.push(derived_response_name(method));
        names.dedup();
        Ok(names)
    }
}

/// `thread/loaded/list` → `ThreadLoadedListResponse`.
fn derived_response_name(method: &str) -> String {
    let mut name = String::new();
    for segment in method.split('/') {
        let mut chars = segment.chars();
        if let Some(first) = chars.next() {
            name.extend(first.to_uppercase());
            name.push_str(chars.as_str());
        }
    }
    name.push_str("Response");
    name
}

/// The `method` constant of a union branch (`enum: [m]` or `const: m`), following one `$ref`.
fn branch_method(doc: &Value, branch: &Value) -> Option<String> {
    let branch = resolve(doc, branch);
    let method = branch.pointer("/properties/method")?;
    let method = resolve(doc, method);
    method
        .get("const")
        .or_else(|| method.pointer("/enum/0"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Follow a local `$ref` (`#/definitions/X` or `#/$defs/X`) once.
fn resolve<'a>(doc: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix('#')
            .and_then(|pointer| doc.pointer(pointer))
            .unwrap_or(node),
        None => node,
    }
}

fn load(path: &Path) -> Loaded {
    if !path.is_file() {
        return Ok(None);
    }
    let text =
        std::fs::read_to_string(path).map_err(|err| format!("read {}: {err}", path.display()))?;
    serde_json::from_str(&text)
        .map(|doc| Some(Arc::new(doc)))
        .map_err(|err| format!("{} is not JSON: {err}", path.display()))
}

fn compile(schema: &Value, path: &Path) -> Result<Arc<Validator>, String> {
    jsonschema::validator_for(schema)
        .map(Arc::new)
        .map_err(|err| format!("cannot compile schema {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn derives_response_names() {
        assert_eq!(
            derived_response_name("thread/loaded/list"),
            "ThreadLoadedListResponse"
        );
        assert_eq!(derived_response_name("model/list"), "ModelListResponse");
        assert_eq!(derived_response_name("initialize"), "InitializeResponse");
    }

    #[test]
    fn classifies_shapes() {
        assert_eq!(kind_of(&json!({"method": "x"})), Some(Kind::Notification));
        assert_eq!(
            kind_of(&json!({"id": 1, "method": "x"})),
            Some(Kind::ServerRequest)
        );
        assert_eq!(
            kind_of(&json!({"id": 1, "result": {}})),
            Some(Kind::Response)
        );
        assert_eq!(kind_of(&json!({"id": 1, "error": {}})), Some(Kind::Error));
        assert_eq!(kind_of(&json!({"id": 1, "result": 1, "error": {}})), None);
        assert_eq!(kind_of(&json!([])), None);
    }

    #[test]
    fn reference_union_branches_and_responses_resolve() {
        let dir = reference_schema_dir();
        if !dir.is_dir() {
            return;
        }
        let reference = SchemaDir::new(dir);
        let names = reference.response_names("thread/name/set").unwrap();
        assert_eq!(names[0], "ThreadSetNameResponse");
        let (file, _) = reference
            .response_validator("thread/loaded/list")
            .unwrap()
            .unwrap();
        assert_eq!(file, "v2/ThreadLoadedListResponse.json");
        let (file, init) = reference.response_validator("initialize").unwrap().unwrap();
        assert_eq!(file, "v1/InitializeResponse.json");
        assert!(init.is_valid(&json!({
            "userAgent": "a", "codexHome": "/h", "platformFamily": "unix", "platformOs": "linux"
        })));
        assert!(!init.is_valid(&json!({"userAgent": "a"})));

        let started = reference
            .union_branch("ServerNotification.json", "thread/name/updated")
            .unwrap()
            .unwrap();
        let good =
            json!({"method": "thread/name/updated", "params": {"threadId": "t"}, "emittedAtMs": 1});
        assert!(started.is_valid(&good));
        let bad_time = json!({"method": "thread/name/updated", "params": {"threadId": "t"}, "emittedAtMs": "1"});
        assert!(!started.is_valid(&bad_time));
        let missing = json!({"method": "thread/name/updated", "params": {}});
        assert!(!started.is_valid(&missing));
        assert!(
            reference
                .union_branch("ServerNotification.json", "no/such/method")
                .unwrap()
                .is_none()
        );
    }
}
