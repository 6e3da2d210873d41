//! Client-side `tool_search` (docs/mcp.md §4): with `[features] tool_search` on the Responses
//! API, MCP tools are *deferred*. The model is offered one `tool_search` tool (`execution:
//! "client"`) instead of the `mcp__NAME` namespaces, and the developer context lists the
//! deferred namespaces in a `<tools>` section. When the model answers with a
//! `tool_search_call`, Weft ranks the deferred tools itself (BM25, below) and records a
//! `tool_search_output` holding the best ones as `defer_loading` functions grouped by
//! namespace; the model then calls them as ordinary namespaced functions, which
//! `mcp_tool::resolve` serves from the pool whether or not they were ever offered.
//!
//! **Ranking.** Each deferred tool is one document: its name, its description, its server's
//! name and its server's instructions, cut into lowercase ASCII-alphanumeric words (so
//! `read_file` is `read` and `file`). The query is cut the same way; each document is scored
//! with Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5) / (df + 0.5))). Documents
//! scoring above zero are returned best first (ties in the servers' and tools' own order),
//! at most `limit` of them (default 8).

use serde_json::{Value, json};

use super::mcp_tool;
use crate::mcp::{McpPool, OfferedServer};
use crate::model::{ContentItem, ResponseItem, Role};

/// The tool's name (its `type` on the wire).
pub const TOOL_NAME: &str = "tool_search";
/// How many tools a search returns when the model gives no `limit`.
pub const DEFAULT_LIMIT: usize = 8;
/// The opening tag of the developer section listing the deferred namespaces.
pub const SECTION_OPEN_TAG: &str = "<tools>";

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// One server whose tools are deferred.
#[derive(Debug, Clone)]
pub struct Deferred {
    /// `mcp__NAME`.
    pub namespace: String,
    /// The server's name as configured.
    pub server: String,
    /// The namespace's description (the server's instructions, or a line naming it).
    pub description: String,
    /// Its tools (MCP `Tool` JSON).
    pub tools: Vec<Value>,
}

impl Deferred {
    fn of(server: &OfferedServer) -> Deferred {
        Deferred {
            namespace: mcp_tool::namespace_name(server),
            server: server.config.name.clone(),
            description: mcp_tool::namespace_description(server),
            tools: server.tools.clone(),
        }
    }
}

/// The running servers with at least one tool: what `tool_search` searches.
pub fn deferred(pool: &McpPool) -> Vec<Deferred> {
    pool.offered()
        .iter()
        .filter(|server| !server.tools.is_empty())
        .map(Deferred::of)
        .collect()
}

/// The `tool_search` tool definition.
pub fn spec() -> Value {
    json!({
        "type": TOOL_NAME,
        "execution": "client",
        "description": "# Finding more tools\n\nThe tools of the namespaces listed under \
            \"Deferred tool namespaces\" are not in your tool list yet. Describe what you need \
            in a few keywords; the best-matching deferred tools are returned and you can call \
            them from then on. To find MCP tools, search with `tool_search` rather than \
            `list_mcp_resources` or `list_mcp_resource_templates`.",
        "parameters": {
            "type": "object",
            "properties": {
                "limit": {
                    "type": "number",
                    "description": format!("How many tools to return at most (default {DEFAULT_LIMIT})."),
                },
                "query": {
                    "type": "string",
                    "description": "Keywords describing the tool you need.",
                },
            },
            "required": ["query"],
            "additionalProperties": false,
        },
    })
}

/// The `<tools>` section: one line per deferred namespace; `None` when nothing is deferred.
pub fn section(deferred: &[Deferred]) -> Option<String> {
    if deferred.is_empty() {
        return None;
    }
    let mut text = format!("{SECTION_OPEN_TAG}\nDeferred tool namespaces:\n");
    for server in deferred {
        let description = server.description.split_whitespace().collect::<Vec<_>>();
        text.push_str(&format!(
            "- {}: {}\n",
            server.namespace,
            description.join(" ")
        ));
    }
    text.push_str("</tools>");
    Some(text)
}

/// Put the `<tools>` section into a request's input as a developer message, after the
/// leading developer messages (the thread's instructions), so the prefix stays stable.
pub fn insert_section(input: &mut Vec<ResponseItem>, section: String) {
    let at = input
        .iter()
        .position(|item| {
            !matches!(
                item,
                ResponseItem::Message {
                    role: Role::Developer,
                    ..
                }
            )
        })
        .unwrap_or(input.len());
    input.insert(
        at,
        ResponseItem::message(
            Role::Developer,
            vec![ContentItem::InputText { text: section }],
        ),
    );
}

/// The query and limit of a call's arguments (an object; a JSON string of one is accepted).
pub fn arguments(arguments: &Value) -> (String, usize) {
    let parsed;
    let arguments = match arguments {
        Value::String(text) => {
            parsed = serde_json::from_str(text).unwrap_or(Value::Null);
            &parsed
        }
        other => other,
    };
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let limit = arguments
        .get("limit")
        .and_then(Value::as_f64)
        .filter(|limit| limit.is_finite() && *limit >= 1.0)
        .map_or(DEFAULT_LIMIT, |limit| limit.min(1e6) as usize);
    (query, limit)
}

/// Run a client `tool_search_call`: the `tool_search_output` answering it.
pub fn run(deferred: &[Deferred], call_id: &str, call_arguments: &Value) -> ResponseItem {
    let (query, limit) = arguments(call_arguments);
    ResponseItem::ToolSearchOutput {
        id: None,
        call_id: Some(call_id.to_string()),
        status: Some("completed".into()),
        execution: Some("client".into()),
        tools: search(deferred, &query, limit),
    }
}

/// The best `limit` tools for `query`, as namespaces of `defer_loading` functions (the
/// namespaces in the order of their best tool, each one's tools best first).
pub fn search(deferred: &[Deferred], query: &str, limit: usize) -> Vec<Value> {
    let mut groups: Vec<(usize, Vec<Value>)> = Vec::new();
    for (server, tool) in rank(deferred, query).into_iter().take(limit) {
        let Some(mut function) = mcp_tool::function_spec(&deferred[server].tools[tool]) else {
            continue;
        };
        function["defer_loading"] = json!(true);
        match groups.iter_mut().find(|(index, _)| *index == server) {
            Some((_, functions)) => functions.push(function),
            None => groups.push((server, vec![function])),
        }
    }
    groups
        .into_iter()
        .map(|(server, functions)| {
            json!({
                "type": "namespace",
                "name": deferred[server].namespace,
                "description": deferred[server].description,
                "tools": functions,
            })
        })
        .collect()
}

/// (server index, tool index) of every tool scoring above zero, best first.
fn rank(deferred: &[Deferred], query: &str) -> Vec<(usize, usize)> {
    let mut terms = words(query);
    terms.sort();
    terms.dedup();
    let documents: Vec<((usize, usize), Vec<String>)> = deferred
        .iter()
        .enumerate()
        .flat_map(|(s, server)| {
            server.tools.iter().enumerate().map(move |(t, tool)| {
                let text = |key: &str| tool.get(key).and_then(Value::as_str).unwrap_or_default();
                let mut document = words(text("name"));
                document.extend(words(text("description")));
                document.extend(words(&server.server));
                document.extend(words(&server.description));
                ((s, t), document)
            })
        })
        .collect();
    if terms.is_empty() || documents.is_empty() {
        return Vec::new();
    }
    let count = documents.len() as f64;
    let average = documents.iter().map(|(_, d)| d.len()).sum::<usize>() as f64 / count;
    let idf: Vec<f64> = terms
        .iter()
        .map(|term| {
            let df = documents.iter().filter(|(_, d)| d.contains(term)).count() as f64;
            (1.0 + (count - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mut scored: Vec<((usize, usize), f64)> = documents
        .iter()
        .map(|(at, document)| {
            let length = document.len() as f64;
            let score = terms
                .iter()
                .zip(&idf)
                .map(|(term, idf)| {
                    let tf = document.iter().filter(|word| *word == term).count() as f64;
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average.max(1.0)))
                })
                .sum::<f64>();
            (*at, score)
        })
        .filter(|(_, score)| *score > 0.0)
        .collect();
    // A stable sort: equal scores keep the servers' and tools' order.
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.into_iter().map(|(at, _)| at).collect()
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description, "title": "T",
               "inputSchema": {"type": "object", "title": "Args",
                               "properties": {"text": {"type": "string", "title": "Text"}}}})
    }

    fn servers() -> Vec<Deferred> {
        vec![
            Deferred {
                namespace: "mcp__files".into(),
                server: "files".into(),
                description: "File system access.".into(),
                tools: vec![
                    tool("read_file", "Read a file and return its contents."),
                    tool("write_file", "Write text to a file."),
                    tool("list_dir", "List the entries of a directory."),
                ],
            },
            Deferred {
                namespace: "mcp__tracker".into(),
                server: "tracker".into(),
                description: "Issue tracker:\n  tickets and comments.".into(),
                tools: vec![
                    tool("create_issue", "Open a new issue in the tracker."),
                    tool("comment", "Add a comment to an issue."),
                ],
            },
        ]
    }

    fn names(found: &[Value]) -> Vec<String> {
        found
            .iter()
            .flat_map(|namespace| {
                let ns = namespace["name"].as_str().unwrap().to_string();
                namespace["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(move |t| format!("{ns}.{}", t["name"].as_str().unwrap()))
            })
            .collect()
    }

    #[test]
    fn ranking_prefers_the_tools_whose_words_match_and_respects_the_limit() {
        let servers = servers();
        // `read` only matches read_file; `file` every tool of `files` (its instructions say it).
        let found = search(&servers, "read file", 8);
        let found = names(&found);
        assert_eq!(found[0], "mcp__files.read_file", "{found:?}");
        assert_eq!(found.len(), 3, "{found:?}");
        // A term no tool has finds nothing; an empty query finds nothing.
        assert!(search(&servers, "kubernetes", 8).is_empty());
        assert!(search(&servers, "  ", 8).is_empty());
        // The server's instructions count: `tickets` names only the tracker's tools.
        let mut tickets = names(&search(&servers, "tickets", 8));
        tickets.sort();
        assert_eq!(
            tickets,
            ["mcp__tracker.comment", "mcp__tracker.create_issue"]
        );
        // Best first across servers (the rare `directory` outweighs the common `issue`),
        // grouped by namespace in the order of each one's best tool; the limit cuts.
        let found = search(&servers, "comment on an issue directory", 2);
        assert_eq!(
            names(&found),
            ["mcp__tracker.comment", "mcp__files.list_dir"]
        );
        assert_eq!(found[0]["name"], "mcp__tracker");
        let found = search(&servers, "issue file", 8);
        assert_eq!(found.len(), 2);
        assert_eq!(names(&found).len(), 5, "{:?}", names(&found));
        assert_eq!(names(&search(&servers, "file", 1)).len(), 1);
    }

    #[test]
    fn found_tools_are_deferred_functions_with_clean_schemas() {
        let found = search(&servers(), "write", 8);
        assert_eq!(
            found,
            vec![json!({
                "type": "namespace", "name": "mcp__files", "description": "File system access.",
                "tools": [{"type": "function", "name": "write_file",
                           "description": "Write text to a file.", "strict": false,
                           "defer_loading": true,
                           "parameters": {"type": "object",
                                          "properties": {"text": {"type": "string"}}}}]
            })]
        );
    }

    #[test]
    fn arguments_and_the_output_item() {
        assert_eq!(
            arguments(&json!({"query": "q"})),
            ("q".into(), DEFAULT_LIMIT)
        );
        assert_eq!(
            arguments(&json!({"query": "q", "limit": 2})),
            ("q".into(), 2)
        );
        assert_eq!(
            arguments(&json!({"query": "q", "limit": 3.7})),
            ("q".into(), 3)
        );
        assert_eq!(
            arguments(&json!({"query": "q", "limit": 0})).1,
            DEFAULT_LIMIT
        );
        assert_eq!(
            arguments(&json!("{\"query\":\"s\",\"limit\":1}")),
            ("s".into(), 1)
        );
        assert_eq!(arguments(&json!(null)), (String::new(), DEFAULT_LIMIT));
        let output = run(
            &servers(),
            "call_1",
            &json!({"query": "comment", "limit": 1}),
        );
        assert_eq!(
            serde_json::to_value(&output).unwrap(),
            json!({"type": "tool_search_output", "call_id": "call_1", "status": "completed",
                   "execution": "client", "tools": search(&servers(), "comment", 1)})
        );
    }

    #[test]
    fn the_spec_and_the_tools_section() {
        let spec = spec();
        assert_eq!(spec["type"], "tool_search");
        assert_eq!(spec["execution"], "client");
        assert_eq!(spec["parameters"]["required"], json!(["query"]));
        assert_eq!(spec["parameters"]["additionalProperties"], json!(false));
        assert_eq!(spec["parameters"]["properties"]["limit"]["type"], "number");
        assert_eq!(spec["parameters"]["properties"]["query"]["type"], "string");
        assert!(
            spec["description"]
                .as_str()
                .unwrap()
                .contains("tool_search")
        );
        assert_eq!(section(&[]), None);
        assert_eq!(
            section(&servers()).unwrap(),
            "<tools>\nDeferred tool namespaces:\n- mcp__files: File system access.\n\
             - mcp__tracker: Issue tracker: tickets and comments.\n</tools>"
        );
        let mut input = vec![
            ResponseItem::text_message(Role::Developer, "dev"),
            ResponseItem::user_text("hi"),
        ];
        insert_section(&mut input, "<tools>x</tools>".into());
        assert_eq!(input[1].message_text().as_deref(), Some("<tools>x</tools>"));
        let mut empty = Vec::new();
        insert_section(&mut empty, "s".into());
        assert_eq!(empty.len(), 1);
        assert!(deferred(&McpPool::empty()).is_empty());
    }
}
