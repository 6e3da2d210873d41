//! Conformance tests against the Codex reference: real messages from the transcript catalog
//! must decode into our types and re-encode to equivalent JSON, and everything we produce must
//! validate against both the reference schema and our own generated schema, with every key the
//! reference lists present (`null` when absent).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use jsonschema::Validator;
use serde::Serialize;
use serde_json::{Value, json};

use crate::jsonrpc::RequestId;
use crate::notifications::{SERVER_NOTIFICATION_METHODS, ServerNotification};
use crate::requests::{CLIENT_METHODS, ClientNotification, ClientRequest};
use crate::schema::schema_files;
use crate::server_requests::{
    CommandExecutionRequestApprovalResponse, FileChangeRequestApprovalResponse,
    SERVER_REQUEST_METHODS, ServerRequest,
};
use crate::test_support::{read_reference_json, reference_dir};
use crate::*;

const REF: &str = "codex-app-server-schema/";
/// The reference's schema with its experimental surface.
const REF_EXPERIMENTAL: &str = "codex-app-server-schema-experimental/";

/// Thread keys Codex sends that are experimental (absent from the stable reference schema).
const EXPERIMENTAL_KEYS: &[&str] = &[
    "environments",
    "extra",
    "attachedToThreadId",
    "canAcceptDirectInput",
    "daybreakEnabled",
];

struct Schemas {
    // Boxed so that the values never move: validators are cached by address.
    reference: BTreeMap<String, Box<Value>>,
    ours: BTreeMap<String, Box<Value>>,
    /// Compiled validators, keyed by (schema file, JSON pointer-ish branch key).
    compiled: RefCell<HashMap<(usize, usize), Rc<Validator>>>,
}

impl Schemas {
    fn load() -> Self {
        // Fail early, with the path, when the reference is missing.
        read_reference_json(&format!("{REF}RequestId.json"));
        let ours = schema_files()
            .into_iter()
            .map(|(path, text)| {
                let key = path.to_string_lossy().replace('\\', "/");
                (key, Box::new(serde_json::from_str(&text).unwrap()))
            })
            .collect();
        Self {
            reference: BTreeMap::new(),
            ours,
            compiled: RefCell::new(HashMap::new()),
        }
    }

    fn load_reference(&mut self, file: &str) {
        if !self.reference.contains_key(file) {
            // Methods the stable reference lacks are checked against its experimental schema.
            let dir = if reference_dir().join(REF).join(file).exists() {
                REF
            } else {
                REF_EXPERIMENTAL
            };
            let value = read_reference_json(&format!("{dir}{file}"));
            self.reference.insert(file.to_owned(), Box::new(value));
        }
    }

    fn ours(&self, file: &str) -> &Value {
        self.ours
            .get(file)
            .unwrap_or_else(|| panic!("we generate no {file}"))
    }

    /// A validator for `schema` (a node inside `root`), compiled once.
    fn validator(&self, root: &Value, schema: &Value) -> Rc<Validator> {
        let key = (
            root as *const Value as usize,
            schema as *const Value as usize,
        );
        if let Some(v) = self.compiled.borrow().get(&key) {
            return v.clone();
        }
        let mut standalone = schema.clone();
        if let (Value::Object(map), Some(defs)) = (&mut standalone, root.get("definitions"))
            && !std::ptr::eq(root, schema)
        {
            map.insert("definitions".into(), defs.clone());
        }
        let compiled = Rc::new(
            jsonschema::validator_for(&standalone)
                .unwrap_or_else(|e| panic!("schema does not compile: {e}")),
        );
        self.compiled.borrow_mut().insert(key, compiled.clone());
        compiled
    }

    fn assert_valid_in(&self, root: &Value, instance: &Value, what: &str) {
        let v = self.validator(root, root);
        let errors: Vec<String> = v
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{what}: {errors:#?}\ninstance: {instance:#}"
        );
    }

    /// [`Schemas::check`] of `value` as it is serialised.
    fn check_serialized<T: Serialize>(&mut self, file: &str, value: &T, what: &str) {
        self.check(file, &to_value(value), what);
    }

    /// [`Schemas::check`] of params of the client method `M`, against its `v2/<Params>.json`.
    fn check_params<M: Method>(&mut self, params: &M::Params) {
        self.check_serialized(&v2_file::<M::Params>(), params, M::NAME);
    }

    /// [`Schemas::check`] of a result of the client method `M`, against its
    /// `v2/<Response>.json`.
    fn check_result<M: Method>(&mut self, result: &M::Response) {
        self.check_serialized(&v2_file::<M::Response>(), result, M::NAME);
    }

    /// Validates `instance` against `file` in the reference and in our schema, and checks that
    /// every key the reference lists is present.
    fn check(&mut self, file: &str, instance: &Value, what: &str) {
        self.load_reference(file);
        let ours = self.ours(file);
        self.assert_valid_in(ours, instance, &format!("{what} vs our {file}"));
        let reference = &self.reference[file];
        self.assert_valid_in(reference, instance, &format!("{what} vs reference {file}"));
        let mut missing = Vec::new();
        self.all_keys_present(instance, reference, reference, "$", &mut missing);
        assert!(
            missing.is_empty(),
            "{what}: keys listed by reference {file} but not written: {missing:?}"
        );
    }

    /// Validates against a whole schema file of ours and of the reference (no key check).
    fn validate_both(&mut self, file: &str, instance: &Value, what: &str) {
        self.load_reference(file);
        self.assert_valid_in(self.ours(file), instance, &format!("{what} vs our {file}"));
        self.assert_valid_in(
            &self.reference[file],
            instance,
            &format!("{what} vs reference {file}"),
        );
    }

    /// Collects the paths of keys that the (reference) schema lists but `instance` lacks.
    fn all_keys_present(
        &self,
        instance: &Value,
        schema: &Value,
        root: &Value,
        path: &str,
        out: &mut Vec<String>,
    ) {
        let schema = resolve(schema, root);
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            for part in parts {
                self.all_keys_present(instance, part, root, path, out);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = schema.get(key).and_then(Value::as_array)
                && let Some(branch) = branches
                    .iter()
                    .find(|b| self.validator(root, b).is_valid(instance))
            {
                self.all_keys_present(instance, branch, root, path, out);
            }
        }
        if let (Some(props), Some(obj)) = (
            schema.get("properties").and_then(Value::as_object),
            instance.as_object(),
        ) {
            for (key, prop) in props {
                match obj.get(key) {
                    None => out.push(format!("{path}.{key}")),
                    Some(value) => {
                        self.all_keys_present(value, prop, root, &format!("{path}.{key}"), out)
                    }
                }
            }
        }
        if let (Some(items), Some(array)) = (schema.get("items"), instance.as_array()) {
            for (i, value) in array.iter().enumerate() {
                self.all_keys_present(value, items, root, &format!("{path}[{i}]"), out);
            }
        }
    }
}

/// The `v2/` schema file of `T`, named after the type as the schema files are.
fn v2_file<T>() -> String {
    let type_name = std::any::type_name::<T>();
    let name = type_name.rsplit("::").next().unwrap_or(type_name);
    format!("v2/{name}.json")
}

fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    while let Some(reference) = current.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or_default();
        current = &root["definitions"][name];
    }
    current
}

/// `ours` must carry every key of `codex` (except experimental ones) with the same value; keys
/// only we write must be `null`.
fn assert_equivalent(codex: &Value, ours: &Value, path: &str) {
    equivalent(codex, ours, path, false);
}

/// Like [`assert_equivalent`], but keys only we write may also hold a default (`false`).
fn assert_equivalent_params(codex: &Value, ours: &Value, path: &str) {
    equivalent(codex, ours, path, true);
}

fn equivalent(codex: &Value, ours: &Value, path: &str, defaults: bool) {
    match (codex, ours) {
        (Value::Object(c), Value::Object(o)) => {
            for (key, value) in c {
                if EXPERIMENTAL_KEYS.contains(&key.as_str()) || key == "jsonrpc" {
                    continue;
                }
                let Some(mine) = o.get(key) else {
                    panic!("{path}.{key}: dropped (codex: {value})");
                };
                equivalent(value, mine, &format!("{path}.{key}"), defaults);
            }
            for (key, value) in o {
                if !c.contains_key(key) && key != "jsonrpc" {
                    let ok = value.is_null() || (defaults && value == &Value::Bool(false));
                    assert!(ok, "{path}.{key}: we write {value}, codex omits it");
                }
            }
        }
        (Value::Array(c), Value::Array(o)) => {
            assert_eq!(c.len(), o.len(), "{path}: array length");
            for (i, (a, b)) in c.iter().zip(o).enumerate() {
                equivalent(a, b, &format!("{path}[{i}]"), defaults);
            }
        }
        _ => assert_eq!(codex, ours, "{path}"),
    }
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

mod catalog;
mod client_requests;
mod collab;
mod command;
mod external_agent;
mod fs;
mod guardian;
mod mcp;
mod mcp_shapes;
mod notifications;
mod responses;
mod schema;
mod server_requests;
mod settings;
mod startup;

// ---- synthetic values for everything the catalog does not show --------------------------

fn sample_items() -> Vec<ThreadItem> {
    let mut items: Vec<ThreadItem> = vec![
        UserMessageItem {
            id: "u1".into(),
            client_id: Some("c1".into()),
            content: vec![
                UserInput::text("hi"),
                UserInput::Image {
                    url: Some("data:image/png;base64,AA".into()),
                    file_id: None,
                    detail: Some(ImageDetail::High),
                },
                UserInput::LocalImage {
                    path: "/tmp/x.png".into(),
                    detail: None,
                },
                UserInput::Skill {
                    name: "s".into(),
                    path: "/s".into(),
                },
                UserInput::Mention {
                    name: "m".into(),
                    path: "app://m".into(),
                },
                UserInput::Text {
                    text: "with span".into(),
                    text_elements: vec![TextElement {
                        byte_range: ByteRange { start: 0, end: 4 },
                        placeholder: None,
                    }],
                },
            ],
        }
        .into(),
        HookPromptItem {
            id: "h1".into(),
            fragments: vec![HookPromptFragment {
                text: "t".into(),
                hook_run_id: "r".into(),
            }],
        }
        .into(),
        AgentMessageItem::new("m1", "Hello").into(),
        AgentMessageItem {
            phase: Some(MessagePhase::FinalAnswer),
            delivery: Some(AgentMessageDelivery::Async),
            questions: Some(vec![AsyncUserInputQuestion {
                title: "q".into(),
                options: None,
            }]),
            memory_citation: Some(MemoryCitation {
                entries: vec![MemoryCitationEntry {
                    path: "p".into(),
                    line_start: 1,
                    line_end: 2,
                    note: "n".into(),
                }],
                thread_ids: vec!["t".into()],
            }),
            moderation: Some(AgentMessageModeration {
                moderated: false,
                display: None,
            }),
            ..AgentMessageItem::new("m2", "x")
        }
        .into(),
        PlanItem {
            id: "p1".into(),
            text: "plan".into(),
        }
        .into(),
        ReasoningItem {
            id: "r1".into(),
            summary: vec!["a".into()],
            content: vec![],
        }
        .into(),
        CommandExecutionItem {
            id: "call1".into(),
            command: "/bin/bash -lc 'ls'".into(),
            cwd: "/w".into(),
            process_id: None,
            source: CommandExecutionSource::Agent,
            status: CommandExecutionStatus::InProgress,
            command_actions: vec![
                CommandAction::Read {
                    command: "cat a".into(),
                    name: "a".into(),
                    path: "/w/a".into(),
                },
                CommandAction::ListFiles {
                    command: "ls".into(),
                    path: None,
                },
                CommandAction::Search {
                    command: "rg x".into(),
                    query: Some("x".into()),
                    path: None,
                },
                CommandAction::Unknown {
                    command: "make".into(),
                },
            ],
            aggregated_output: None,
            exit_code: None,
            duration_ms: None,
            plugin_id: None,
            script_path: None,
        }
        .into(),
        FileChangeItem {
            id: "call2".into(),
            changes: vec![
                FileUpdateChange {
                    path: "/w/a".into(),
                    kind: PatchChangeKind::Add,
                    diff: "x\n".into(),
                },
                FileUpdateChange {
                    path: "/w/b".into(),
                    kind: PatchChangeKind::Delete,
                    diff: "y\n".into(),
                },
                FileUpdateChange {
                    path: "/w/c".into(),
                    kind: PatchChangeKind::Update {
                        move_path: Some("/w/d".into()),
                    },
                    diff: "@@ -1 +1 @@\n-a\n+b\n".into(),
                },
            ],
            status: PatchApplyStatus::Declined,
        }
        .into(),
        ThreadItem::new(ThreadItemDetails::EnteredReviewMode(ReviewModeItem {
            id: "e".into(),
            review: "current changes".into(),
        })),
        ThreadItem::new(ThreadItemDetails::ExitedReviewMode(ReviewModeItem {
            id: "x".into(),
            review: "ok".into(),
        })),
        ContextCompactionItem { id: "cc".into() }.into(),
        mcp::sample_item().into(),
    ];
    items.extend(collab::sample_items());
    for (i, item) in items.iter_mut().enumerate() {
        item.started_at_ms = Some(1_000 + i as i64);
        item.completed_at_ms = if i % 2 == 0 { Some(2_000) } else { None };
    }
    items
}

fn sample_turn(status: TurnStatus) -> Turn {
    Turn {
        id: "turn1".into(),
        root_turn_id: Some("turn1".into()),
        items: if status == TurnStatus::InProgress {
            vec![]
        } else {
            sample_items()
        },
        items_view: TurnItemsView::Full,
        status,
        error: (status == TurnStatus::Failed).then(|| TurnError {
            message: "boom".into(),
            codex_error_info: Some(CodexErrorInfo::ResponseStreamDisconnected {
                http_status_code: Some(502),
            }),
            additional_details: Some("d".into()),
            misalignment: Some(MisalignmentErrorDetails::default()),
        }),
        started_at: Some(1),
        completed_at: None,
        duration_ms: None,
    }
}

fn sample_thread(turns: Vec<Turn>) -> Thread {
    Thread {
        id: "01a228b2-f93c-73c2-a52c-b7056a5fa526".into(),
        session_id: "01a228b2-f93c-73c2-a52c-b7056a5fa526".into(),
        forked_from_id: None,
        parent_thread_id: None,
        preview: "".into(),
        ephemeral: false,
        section: None,
        section_entered_at: None,
        project_id: None,
        history_mode: ThreadHistoryMode::Paginated,
        model_provider: "openai".into(),
        model: Some("gpt-5.5".into()),
        reasoning_effort: Some("high".into()),
        created_at: 1,
        updated_at: 2,
        recency_at: None,
        status: ThreadStatus::Active {
            active_flags: vec![ThreadActiveFlag::WaitingOnApproval],
        },
        path: None,
        cwd: "/w".into(),
        cli_version: "0.1.0".into(),
        originator: Some("x".into()),
        source: SessionSource::Vscode,
        thread_source: None,
        agent_nickname: None,
        agent_role: None,
        git_info: Some(GitInfo {
            sha: None,
            branch: Some("main".into()),
            origin_url: None,
        }),
        name: None,
        turns,
    }
}

fn sample_model() -> Model {
    Model {
        id: "gpt-5.5".into(),
        model: "gpt-5.5".into(),
        upgrade: None,
        upgrade_info: None,
        availability_nux: None,
        display_name: "GPT-5.5".into(),
        description: "d".into(),
        hidden: false,
        supported_reasoning_efforts: vec![ReasoningEffortOption {
            reasoning_effort: "low".into(),
            description: "fast".into(),
        }],
        default_reasoning_effort: "medium".into(),
        input_modalities: vec![InputModality::Text, InputModality::Image],
        supports_personality: false,
        additional_speed_tiers: vec![],
        service_tiers: vec![ModelServiceTier {
            id: "flex".into(),
            name: "Flex".into(),
            description: "d".into(),
        }],
        default_service_tier: None,
        model_specialty: None,
        multi_agent_version: None,
        available_access_programs: None,
        is_default: true,
    }
}
