//! `list`: `thread/list` page latency over 100,000 stored threads (the reference: 10,000),
//! every sort key × direction and every filter clients use, first page and a deep page
//! (the 6th, reached by following `nextCursor`); and, for Weft, the SQLite query plan of each
//! query shape (`EXPLAIN QUERY PLAN` through the `sqlite3` CLI, the SQL reproduced from
//! core/src/state/list.rs).

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

use crate::cli::Reps;
use crate::client::Server;
use crate::report::{Cell, Report, Unit};
use crate::stats::summarize;
use crate::stored::{self, CopySpec, NEEDLE};
use crate::target::{EXIT_TIMEOUT, Kind, REQUEST_TIMEOUT, Target};
use crate::turns::thousands;

pub const GROUP: &str = "Stored threads: thread/list page (request written → answer read)";
/// Rows per page.
const LIMIT: u64 = 50;
/// The deep page is this many `nextCursor`s after the first.
const DEEP: usize = 5;
/// Stored threads per implementation.
pub fn sizes(kind: Kind) -> &'static [usize] {
    match kind {
        Kind::Weft => &[10_000, 100_000],
        Kind::Reference => &[10_000],
    }
}

/// The ceiling of a page's median over `n` stored threads: issue 15's 20 ms over 100,000,
/// and issue 29's 2 ms over 10,000 (both in the regression table).
fn target_ms(n: usize) -> f64 {
    if n <= 10_000 { 2.0 } else { 20.0 }
}

/// One query shape: a label, the `thread/list` params (without cursor and limit) and the
/// matching filter for the SQL reproduction.
struct Shape {
    label: String,
    params: Value,
    sql: SqlShape,
}

#[derive(Default, Clone)]
struct SqlShape {
    column: &'static str,
    desc: bool,
    providers: Vec<String>,
    kinds: Vec<String>,
    archived: bool,
    cwd: Option<String>,
    search: Option<String>,
    parent: Option<String>,
    ancestor: Option<String>,
}

impl SqlShape {
    /// This shape narrowed by the filters of `thread/list` params, as core reads them.
    fn filtered(&self, params: &Value) -> SqlShape {
        let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_string);
        let texts = |key: &str| -> Option<Vec<String>> {
            let list = params.get(key)?.as_array()?;
            Some(
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
            )
        };
        let mut sql = self.clone();
        sql.providers = texts("modelProviders").unwrap_or(sql.providers);
        sql.archived = params
            .get("archived")
            .and_then(Value::as_bool)
            .unwrap_or(sql.archived);
        sql.cwd = text("cwd").or(sql.cwd);
        sql.search = text("searchTerm").or(sql.search);
        sql.parent = text("parentThreadId").or(sql.parent);
        sql.ancestor = text("ancestorThreadId").or(sql.ancestor);
        // A lineage filter with no `sourceKinds` keeps every kind.
        if sql.parent.is_some() || sql.ancestor.is_some() {
            sql.kinds.clear();
        }
        sql.kinds = texts("sourceKinds").unwrap_or(sql.kinds);
        sql
    }
}

fn shapes(copies: &[CopySpec]) -> Vec<Shape> {
    let base = SqlShape {
        column: "created_at",
        desc: true,
        kinds: vec!["cli".into(), "vscode".into()],
        ..SqlShape::default()
    };
    let mut out = Vec::new();
    for (key, column) in [
        ("created_at", "created_at"),
        ("updated_at", "updated_at"),
        ("recency_at", "recency_at"),
    ] {
        for direction in ["desc", "asc"] {
            out.push(Shape {
                label: format!("sortKey {key} {direction}"),
                params: json!({"sortKey": key, "sortDirection": direction}),
                sql: SqlShape {
                    column,
                    desc: direction == "desc",
                    ..base.clone()
                },
            });
        }
    }
    let mut filters = vec![
        (
            "modelProviders [ollama] (1 %)",
            json!({"modelProviders": ["ollama"]}),
        ),
        ("sourceKinds [exec] (8 %)", json!({"sourceKinds": ["exec"]})),
        ("archived: true (5 %)", json!({"archived": true})),
    ];
    if let Some(copy) = copies.first() {
        filters.push(("cwd (one of 50)", json!({"cwd": copy.cwd})));
    }
    filters.push((
        "searchTerm hit (1 % of previews)",
        json!({"searchTerm": NEEDLE}),
    ));
    filters.push(("searchTerm miss", json!({"searchTerm": "no-such-term-qq"})));
    // The parent with the most children.
    let mut counts = std::collections::HashMap::<&str, usize>::new();
    for copy in copies {
        if let Some(parent) = &copy.parent {
            *counts.entry(parent.as_str()).or_default() += 1;
        }
    }
    if let Some((parent, _)) = counts.into_iter().max_by_key(|&(id, n)| (n, id)) {
        filters.push(("parentThreadId", json!({"parentThreadId": parent})));
        filters.push(("ancestorThreadId", json!({"ancestorThreadId": parent})));
    }
    out.extend(filters.into_iter().map(|(label, params)| Shape {
        label: label.to_string(),
        sql: base.filtered(&params),
        params,
    }));
    out
}

/// `initialize` with `experimentalApi` (the lineage filters need it), then `initialized`.
pub async fn initialize_experimental(server: &Server) -> Result<()> {
    let params = json!({
        "clientInfo": {"name": "weft-bench", "title": "Weft benchmarks", "version": "0.1.0"},
        "capabilities": {"experimentalApi": true},
    });
    server
        .request("initialize", params, std::time::Duration::from_secs(900))
        .await?;
    server.notify("initialized").await
}

/// One `thread/list`: (ms, rows, nextCursor), or the error's message.
async fn page(
    server: &Server,
    params: &Value,
) -> Result<std::result::Result<(f64, usize, Option<String>), String>> {
    let (pending, sent) = server.send("thread/list", params.clone()).await?;
    let (answer, at) = pending.answer(REQUEST_TIMEOUT).await?;
    let ms = at.duration_since(sent).as_secs_f64() * 1e3;
    Ok(match answer {
        Ok(result) => {
            let rows = result
                .get("data")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let next = result
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_string);
            Ok((ms, rows, next))
        }
        Err(error) => Err(error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("error")
            .to_string()),
    })
}

fn with(params: &Value, cursor: Option<&str>) -> Value {
    let mut params = params.clone();
    params["limit"] = json!(LIMIT);
    if let Some(cursor) = cursor {
        params["cursor"] = json!(cursor);
    }
    params
}

/// Measure one page `reps` times (after one unmeasured request).
async fn measure(
    server: &Server,
    params: &Value,
    reps: usize,
) -> Result<std::result::Result<(Vec<f64>, usize, Option<String>), String>> {
    let (_, rows, next) = match page(server, params).await? {
        Ok(first) => first,
        Err(message) => return Ok(Err(message)),
    };
    let mut samples = Vec::new();
    for _ in 0..reps {
        match page(server, params).await? {
            Ok((ms, _, _)) => samples.push(ms),
            Err(message) => return Ok(Err(message)),
        }
    }
    Ok(Ok((samples, rows, next)))
}

pub async fn run(target: &Target, reps: &Reps, report: &mut Report) -> Result<()> {
    for &n in sizes(target.kind) {
        run_size(target, reps, report, n).await?;
    }
    Ok(())
}

/// The scenario over `n` stored threads (the query plans: only for Weft's largest size).
async fn run_size(target: &Target, reps: &Reps, report: &mut Report, n: usize) -> Result<()> {
    let (home, copies) = stored::stored_home(target, n).await?;
    let server = target.spawn(&home)?;
    initialize_experimental(&server).await?;
    let reps = reps.startup.max(3);
    let mut over = Vec::new();
    let mut counts = Vec::new();
    let shapes = shapes(&copies);
    for shape in &shapes {
        let label = format!("{} threads, {}", thousands(n), shape.label);
        let first_label = format!("{label}: first page");
        let deep_label = format!("{label}: page {}", DEEP + 1);
        let first = measure(&server, &with(&shape.params, None), reps).await?;
        let (samples, rows, mut next) = match first {
            Ok(ok) => ok,
            Err(message) => {
                for l in [&first_label, &deep_label] {
                    let cell = Cell::Skipped(short(&message));
                    report.record(target.kind, GROUP, l, Unit::Ms, cell);
                }
                continue;
            }
        };
        record(report, target, n, &first_label, &samples, &mut over);
        counts.push(format!("{}: {rows}", shape.label));
        // Follow nextCursor to the deep page.
        let mut reached = 1;
        while reached <= DEEP {
            let Some(cursor) = next.take() else { break };
            if reached == DEEP {
                next = Some(cursor);
                break;
            }
            next = page(&server, &with(&shape.params, Some(&cursor)))
                .await?
                .map_err(|m| anyhow!("{}: {m}", shape.label))?
                .2;
            reached += 1;
        }
        match next {
            Some(cursor) if reached == DEEP => {
                match measure(&server, &with(&shape.params, Some(&cursor)), reps).await? {
                    Ok((samples, _, _)) => {
                        record(report, target, n, &deep_label, &samples, &mut over)
                    }
                    Err(message) => report.record(
                        target.kind,
                        GROUP,
                        &deep_label,
                        Unit::Ms,
                        Cell::Skipped(short(&message)),
                    ),
                }
            }
            _ => report.record(
                target.kind,
                GROUP,
                &deep_label,
                Unit::Ms,
                Cell::Skipped(format!("fewer than {} pages", DEEP + 1)),
            ),
        }
    }
    server.shutdown(EXIT_TIMEOUT).await?;
    report.note(format!(
        "list, {}, {} threads: rows on the first page (limit {LIMIT}): {}",
        target.name(),
        thousands(n),
        counts.join("; ")
    ));
    if target.kind == Kind::Weft {
        let (ms, n) = (target_ms(n), thousands(n));
        if over.is_empty() {
            report.note(format!(
                "target met: every thread/list page over {n} threads ≤ {ms} ms (Weft, median)"
            ));
        } else {
            report.note(format!(
                "target missed: thread/list pages over {n} threads above {ms} ms (Weft, median): {}",
                over.join("; ")
            ));
        }
    }
    if Some(&n) == sizes(target.kind).last() && target.kind == Kind::Weft {
        plans(&home.dir.join("state.sqlite"), &shapes, report);
    }
    Ok(())
}

/// Records a page's samples; for Weft, also its budget ([`target_ms`]).
fn record(
    report: &mut Report,
    target: &Target,
    n: usize,
    label: &str,
    samples: &[f64],
    over: &mut Vec<String>,
) {
    if let Some(s) = summarize(samples) {
        if target.kind == Kind::Weft {
            if s.median > target_ms(n) {
                over.push(format!("{label} {:.1} ms", s.median));
            }
            report.budget(GROUP, label, Unit::Ms, target_ms(n), "issues 15, 29");
        }
        report.value(target.kind, GROUP, label, Unit::Ms, s);
    }
}

fn short(message: &str) -> String {
    message.chars().take(100).collect()
}

fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// The SQL `StateDb::list` builds for `shape` (core/src/state/list.rs, whose tests check the
/// plans of the builder's own statements), values inlined; with `deep`, the keyset condition
/// of a next cursor.
fn weft_sql(shape: &SqlShape, deep: bool) -> String {
    let (cmp, order) = if shape.desc {
        ("<", "DESC")
    } else {
        (">", "ASC")
    };
    // A search of 3 or more characters that the trigram index narrows to fewer than 2,000
    // candidates (every search shape here: the hit matches 1 %), and an ancestor filter, are
    // read from their candidates: `+` keeps SQLite off the sort indexes.
    let narrowed = shape
        .search
        .as_ref()
        .is_some_and(|t| t.chars().count() >= 3)
        || shape.ancestor.is_some();
    let (plus, column) = if narrowed {
        ("+", format!("+{}", shape.column))
    } else {
        ("", shape.column.to_string())
    };
    let key = shape.column;
    let mut sql = format!(
        "SELECT * FROM threads WHERE {plus}archived = {}",
        i32::from(shape.archived)
    );
    let list = |values: &[String]| {
        values
            .iter()
            .map(|v| quote(v))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !shape.providers.is_empty() {
        let plus = if shape.cwd.is_some() || shape.parent.is_some() || shape.ancestor.is_some() {
            "+"
        } else {
            ""
        };
        sql += &format!(" AND {plus}model_provider IN ({})", list(&shape.providers));
    }
    if !shape.kinds.is_empty() {
        sql += &format!(" AND source IN ({})", list(&shape.kinds));
    }
    if let Some(cwd) = &shape.cwd {
        sql += &format!(" AND cwd IN ({})", quote(cwd));
    }
    if let Some(term) = &shape.search {
        if narrowed {
            sql += &format!(
                " AND rowid IN (SELECT rowid FROM threads_search WHERE threads_search MATCH {})",
                quote(&format!("\"{}\"", term.replace('"', "\"\"")))
            );
        }
        let pattern = quote(&format!("%{term}%"));
        sql += &format!(
            " AND (name LIKE {pattern} ESCAPE '\\' OR preview LIKE {pattern} ESCAPE '\\')"
        );
    }
    if let Some(parent) = &shape.parent {
        sql += &format!(" AND parent_thread_id = {}", quote(parent));
    }
    if let Some(ancestor) = &shape.ancestor {
        sql += &format!(
            " AND id IN (WITH RECURSIVE descendants(id) AS (SELECT id FROM threads WHERE parent_thread_id = {} UNION SELECT t.id FROM threads t JOIN descendants d ON t.parent_thread_id = d.id) SELECT id FROM descendants)",
            quote(ancestor)
        );
    }
    if deep {
        sql +=
            &format!(" AND ({key} {cmp} 1780000000 OR ({key} = 1780000000 AND id {cmp} '0197'))");
    }
    sql + &format!(" ORDER BY {column} {order}, id {order} LIMIT 51")
}

/// `EXPLAIN QUERY PLAN` of `sql` on `db` through the `sqlite3` CLI, one line.
fn query_plan(db: &Path, sql: &str) -> Result<String> {
    let out = std::process::Command::new("sqlite3")
        .arg("-readonly")
        .arg(db)
        .arg(format!("EXPLAIN QUERY PLAN {sql};"))
        .output()
        .context("run sqlite3 (is it installed?)")?;
    if !out.status.success() {
        bail!("sqlite3: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter(|l| *l != "QUERY PLAN")
        .map(|l| l.trim_start_matches(['|', '`', '-', ' ']))
        .collect::<Vec<_>>()
        .join(" → "))
}

/// Record the plan of every shape's first and deep page; say which scan the table.
fn plans(db: &Path, shapes: &[Shape], report: &mut Report) {
    let mut scans = Vec::new();
    for shape in shapes {
        for deep in [false, true] {
            let sql = weft_sql(&shape.sql, deep);
            let page = if deep { "cursor page" } else { "first page" };
            match query_plan(db, &sql) {
                Ok(plan) => {
                    let scan = plan.contains("SCAN threads") || plan.contains("TEMP B-TREE");
                    let unindexed = unindexed_filters(&shape.sql, &plan);
                    if scan {
                        scans.push(format!("{} ({page}): scans", shape.label));
                    } else if !unindexed.is_empty() {
                        scans.push(format!(
                            "{} ({page}): walks the sort index, tests {} row by row",
                            shape.label,
                            unindexed.join(", ")
                        ));
                    }
                    report.note(format!("plan, {} ({page}): {plan}", shape.label));
                }
                Err(err) => {
                    report.note(format!("plan, {}: not available: {err:#}", shape.label));
                    return;
                }
            }
        }
    }
    report.note(format!(
        "query shapes that scan the table, sort in a temporary B-tree, or test a selective filter row by row: {}",
        if scans.is_empty() {
            "none".to_string()
        } else {
            scans.join("; ")
        }
    ));
}

/// The selective filters of `shape` that no index condition of `plan` covers (the
/// interactive default `source IN ('cli', 'vscode')` keeps 90 % of the rows and is left out).
fn unindexed_filters(shape: &SqlShape, plan: &str) -> Vec<&'static str> {
    let covered = |column: &str| {
        plan.contains(&format!("({column}=")) || plan.contains(&format!(" {column}="))
    };
    let mut out = Vec::new();
    if !shape.providers.is_empty() && !covered("model_provider") {
        out.push("model_provider");
    }
    if shape.kinds.len() == 1 && !covered("source") {
        out.push("source");
    }
    if shape.cwd.is_some() && !covered("cwd") {
        out.push("cwd");
    }
    if shape.search.is_some() && !plan.contains("threads_search VIRTUAL TABLE") {
        out.push("name/preview LIKE");
    }
    if shape.parent.is_some() && !covered("parent_thread_id") {
        out.push("parent_thread_id");
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{SqlShape, unindexed_filters, weft_sql};

    #[test]
    fn filters_narrow_the_base_as_core_reads_them() {
        let base = SqlShape {
            kinds: vec!["cli".into(), "vscode".into()],
            ..SqlShape::default()
        };
        let exec = base.filtered(&json!({"sourceKinds": ["exec"]}));
        assert_eq!(exec.kinds, ["exec"]);
        let found = base.filtered(&json!({"searchTerm": "x", "archived": true, "cwd": "/w"}));
        assert!(found.archived);
        assert_eq!(found.search.as_deref(), Some("x"));
        assert_eq!(found.cwd.as_deref(), Some("/w"));
        assert_eq!(found.kinds, base.kinds);
        let children = base.filtered(&json!({"parentThreadId": "p"}));
        assert_eq!(children.parent.as_deref(), Some("p"));
        assert!(
            children.kinds.is_empty(),
            "a lineage filter keeps every kind"
        );
        let tree = base.filtered(&json!({"ancestorThreadId": "p", "modelProviders": ["o"]}));
        assert_eq!(tree.ancestor.as_deref(), Some("p"));
        assert_eq!(tree.providers, ["o"]);
        assert!(tree.kinds.is_empty());
    }

    #[test]
    fn finds_unindexed_filters() {
        let shape = SqlShape {
            cwd: Some("/w".into()),
            parent: Some("p".into()),
            ..SqlShape::default()
        };
        let plan = "SEARCH threads USING INDEX threads_parent (parent_thread_id=?)";
        assert_eq!(unindexed_filters(&shape, plan), ["cwd"]);
    }

    #[test]
    fn sql_mirrors_the_builder() {
        let shape = SqlShape {
            column: "updated_at",
            desc: false,
            kinds: vec!["cli".into(), "vscode".into()],
            search: Some("x".into()),
            ..SqlShape::default()
        };
        let sql = weft_sql(&shape, true);
        assert!(sql.starts_with(
            "SELECT * FROM threads WHERE archived = 0 AND source IN ('cli', 'vscode')"
        ));
        assert!(sql.contains("(name LIKE '%x%' ESCAPE '\\' OR preview LIKE '%x%' ESCAPE '\\')"));
        assert!(sql.contains(
            "AND (updated_at > 1780000000 OR (updated_at = 1780000000 AND id > '0197'))"
        ));
        assert!(sql.ends_with("ORDER BY updated_at ASC, id ASC LIMIT 51"));

        let narrowed = weft_sql(
            &SqlShape {
                search: Some("zebra".into()),
                ..shape
            },
            false,
        );
        assert!(narrowed.starts_with("SELECT * FROM threads WHERE +archived = 0"));
        assert!(narrowed.contains("threads_search MATCH '\"zebra\"'"));
        assert!(narrowed.ends_with("ORDER BY +updated_at ASC, id ASC LIMIT 51"));
    }
}
