//! `thread/list`: the page request, its filters, and keyset pagination over the index.

use std::str::FromStr;

use sqlx::{QueryBuilder, Row, Sqlite};
use weft_protocol::SortDirection;

use super::{COLUMNS, StateDb, StateError, ThreadRow, decode_row};

#[cfg(test)]
mod tests;

/// Page size used when a [`ListQuery`] asks for 0 rows.
pub const DEFAULT_LIST_LIMIT: u32 = 25;

/// Largest page [`StateDb::list`] returns.
pub const MAX_LIST_LIMIT: u32 = 1000;

/// The source kinds `thread/list` shows when the request names none (docs/protocol.md §7.5).
pub const INTERACTIVE_SOURCE_KINDS: &[&str] = &["cli", "vscode"];

/// The sub-agent kinds the `subAgent` filter stands for.
const SUB_AGENT_KINDS: &[&str] = &[
    "subAgentReview",
    "subAgentCompact",
    "subAgentThreadSpawn",
    "subAgentOther",
];

/// What `thread/list` orders by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListSortKey {
    /// Creation time (default).
    #[default]
    CreatedAt,
    /// Last update time.
    UpdatedAt,
    /// Last user activity (creation, then each turn started).
    RecencyAt,
    /// The thread's position in its section (docs/protocol.md §7.36); only with a
    /// [`ListQuery::section`] naming one.
    SectionPosition,
}

impl ListSortKey {
    fn column(self) -> &'static str {
        match self {
            ListSortKey::CreatedAt => "created_at",
            ListSortKey::UpdatedAt => "updated_at",
            ListSortKey::RecencyAt => "recency_at",
            ListSortKey::SectionPosition => {
                "(SELECT position FROM thread_section_members WHERE thread_id = threads.id)"
            }
        }
    }
}

/// Which threads a lineage filter keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lineage {
    /// Threads spawned directly by this one.
    Parent(String),
    /// Threads spawned by this one at any depth.
    Ancestor(String),
    /// Nothing: a filter no Weft thread can match (attached threads).
    Nothing,
    /// The threads of this section (docs/protocol.md §7.36).
    Section(String),
    /// The threads in no section.
    Unsectioned,
}

/// One page of [`StateDb::list`].
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The rows.
    pub rows: Vec<ThreadRow>,
    /// Cursor of the next page (`None` on the last page).
    pub next_cursor: Option<String>,
    /// Cursor that, with the opposite direction, pages back from this page's first row (that
    /// row included); `None` for an empty page.
    pub backwards_cursor: Option<String>,
}

/// A `thread/list` page request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Page size (0 = [`DEFAULT_LIST_LIMIT`]; at most [`MAX_LIST_LIMIT`]).
    pub limit: u32,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Order (ties broken by id, same direction).
    pub sort_key: ListSortKey,
    /// `desc` (newest first, default) or `asc`.
    pub direction: SortDirection,
    /// Providers to keep; `None` or empty = all.
    pub model_providers: Option<Vec<String>>,
    /// Source kinds to keep ([`source_kind`](super::source_kind) spellings; `subAgent` = every
    /// sub-agent kind); `None` or empty = [`INTERACTIVE_SOURCE_KINDS`].
    pub source_kinds: Option<Vec<String>>,
    /// `true` = archived threads only; `false` = non-archived only.
    pub archived: bool,
    /// Working directories to keep (exact match on any); `None` or empty = all.
    pub cwd: Option<Vec<String>>,
    /// Case-sensitive substring of the name or the preview.
    pub search_term: Option<String>,
    /// Only these ids (`Some(empty)` matches nothing).
    pub included_ids: Option<Vec<String>>,
    /// Never these ids.
    pub excluded_ids: Vec<String>,
    /// Parent / ancestor filter.
    pub lineage: Option<Lineage>,
}

#[cfg(test)]
impl ListPage {
    /// The rows and the next cursor.
    pub(crate) fn into_pair(self) -> (Vec<ThreadRow>, Option<String>) {
        (self.rows, self.next_cursor)
    }
}

impl StateDb {
    /// One page of threads and the cursor of the next page (`None` on the last page). Keyset
    /// pagination on `(sort value, id)`: a page never repeats or skips a row because rows were
    /// inserted meanwhile (rows whose sort value changes may move, as with any live order).
    pub async fn list(&self, query: &ListQuery) -> Result<ListPage, StateError> {
        let limit = page_limit(query);
        let mut sql = self.select("", query).await?;
        let rows = sql.build().fetch_all(self.pool().await?).await?;
        let mut out = rows.iter().map(decode_row).collect::<Result<Vec<_>, _>>()?;
        let values = rows
            .iter()
            .map(|row| row.try_get::<i64, _>("sort_value"))
            .collect::<Result<Vec<_>, _>>()?;
        let next_cursor = if out.len() > limit as usize {
            out.truncate(limit as usize);
            out.last()
                .map(|row| format!("{}:{}", values[out.len() - 1], row.id))
        } else {
            None
        };
        // Anchored just before the first row's value, so paging back includes the rows that
        // share it.
        let backwards_cursor = out.first().map(|_| {
            let value = values[0];
            match query.direction {
                SortDirection::Desc => value.saturating_sub(1),
                SortDirection::Asc => value.saturating_add(1),
            }
            .to_string()
        });
        Ok(ListPage {
            rows: out,
            next_cursor,
            backwards_cursor,
        })
    }

    /// SQLite's plan for the page `query` asks for, one line per step (`EXPLAIN QUERY PLAN`):
    /// what the tests check each filter and sort key against.
    pub async fn list_plan(&self, query: &ListQuery) -> Result<Vec<String>, StateError> {
        let mut sql = self.select("EXPLAIN QUERY PLAN ", query).await?;
        let rows = sql.build().fetch_all(self.pool().await?).await?;
        rows.iter()
            .map(|row| row.try_get::<String, _>("detail").map_err(StateError::from))
            .collect()
    }

    /// The statement of a page, after `prefix`.
    async fn select(
        &self,
        prefix: &str,
        query: &ListQuery,
    ) -> Result<QueryBuilder<Sqlite>, StateError> {
        let limit = page_limit(query);
        let column = query.sort_key.column();
        let (cmp, order) = match query.direction {
            SortDirection::Desc => ("<", "DESC"),
            SortDirection::Asc => (">", "ASC"),
        };
        let search = query.search_term.as_deref().filter(|t| !t.is_empty());
        if let Some(term) = search {
            check_search_term(term)?;
        }
        let narrowed = match search {
            Some(term) => self.few_search_matches(term).await?,
            None => false,
        };
        // Driven by the few candidates (a selective search, or an agent tree's descendants):
        // `+` keeps SQLite from walking a sort index past every row instead.
        let narrowed = narrowed || matches!(query.lineage, Some(Lineage::Ancestor(_)));
        let (archived, sort) = if narrowed {
            ("+archived", format!("+{column}"))
        } else {
            ("archived", column.to_string())
        };
        let mut sql = QueryBuilder::<Sqlite>::new(format!(
            "{prefix}SELECT {COLUMNS}, {column} AS sort_value FROM threads WHERE {archived} = "
        ));
        sql.push_bind(query.archived);

        if let Some(providers) = query.model_providers.as_ref().filter(|p| !p.is_empty()) {
            // A working directory or a parent is the more selective index: `+` keeps SQLite
            // from choosing the provider's instead.
            let cwd_given = query.cwd.as_ref().is_some_and(|c| !c.is_empty());
            sql.push(if cwd_given || query.lineage.is_some() {
                " AND +model_provider IN ("
            } else {
                " AND model_provider IN ("
            });
            push_list(&mut sql, providers.iter().map(String::as_str));
            sql.push(")");
        }
        // A lineage filter names sub-agents: with no `sourceKinds` it keeps every kind (the
        // reference's children are listed by `parentThreadId` alone).
        let kinds_given = query.source_kinds.as_ref().is_some_and(|k| !k.is_empty());
        if kinds_given || query.lineage.is_none() {
            let kinds = expand_source_kinds(query.source_kinds.as_deref());
            sql.push(" AND source IN (");
            push_list(&mut sql, kinds.iter().copied());
            sql.push(")");
        }
        if let Some(cwds) = query.cwd.as_ref().filter(|c| !c.is_empty()) {
            sql.push(" AND cwd IN (");
            push_list(&mut sql, cwds.iter().map(String::as_str));
            sql.push(")");
        }
        if let Some(term) = search {
            if narrowed {
                sql.push(
                    " AND rowid IN (SELECT rowid FROM threads_search WHERE threads_search MATCH ",
                );
                sql.push_bind(fts_phrase(term));
                sql.push(")");
            }
            let pattern = format!("%{}%", escape_like(term));
            sql.push(" AND (name LIKE ");
            sql.push_bind(pattern.clone());
            sql.push(" ESCAPE '\\' OR preview LIKE ");
            sql.push_bind(pattern);
            sql.push(" ESCAPE '\\')");
        }
        if let Some(ids) = &query.included_ids {
            if ids.is_empty() {
                sql.push(" AND 1 = 0");
            } else {
                sql.push(" AND id IN (");
                push_list(&mut sql, ids.iter().map(String::as_str));
                sql.push(")");
            }
        }
        if !query.excluded_ids.is_empty() {
            sql.push(" AND id NOT IN (");
            push_list(&mut sql, query.excluded_ids.iter().map(String::as_str));
            sql.push(")");
        }
        match &query.lineage {
            None => {}
            Some(Lineage::Nothing) => {
                sql.push(" AND 1 = 0");
            }
            Some(Lineage::Section(section)) => {
                sql.push(
                    " AND id IN (SELECT thread_id FROM thread_section_members WHERE section_id = ",
                );
                sql.push_bind(section.clone());
                sql.push(")");
            }
            Some(Lineage::Unsectioned) => {
                sql.push(" AND id NOT IN (SELECT thread_id FROM thread_section_members)");
            }
            Some(Lineage::Parent(parent)) => {
                sql.push(" AND parent_thread_id = ");
                sql.push_bind(parent.clone());
            }
            Some(Lineage::Ancestor(ancestor)) => {
                sql.push(
                    " AND id IN (WITH RECURSIVE descendants(id) AS (\
                     SELECT id FROM threads WHERE parent_thread_id = ",
                );
                sql.push_bind(ancestor.clone());
                sql.push(
                    " UNION SELECT t.id FROM threads t JOIN descendants d \
                     ON t.parent_thread_id = d.id) SELECT id FROM descendants)",
                );
            }
        }
        if let Some(cursor) = &query.cursor {
            match parse_cursor(cursor)? {
                (value, Some(id)) => {
                    sql.push(format!(" AND ({column} {cmp} "));
                    sql.push_bind(value);
                    sql.push(format!(" OR ({column} = "));
                    sql.push_bind(value);
                    sql.push(format!(" AND id {cmp} "));
                    sql.push_bind(id);
                    sql.push("))");
                }
                (value, None) => {
                    sql.push(format!(" AND {column} {cmp} "));
                    sql.push_bind(value);
                }
            }
        }
        sql.push(format!(" ORDER BY {sort} {order}, id {order} LIMIT "));
        sql.push_bind(i64::from(limit) + 1);
        Ok(sql)
    }
}

/// The page size a query gets.
fn page_limit(query: &ListQuery) -> u32 {
    match query.limit {
        0 => DEFAULT_LIST_LIMIT,
        n => n.min(MAX_LIST_LIMIT),
    }
}

impl StateDb {
    /// Whether the trigram index narrows a search for `term` to fewer than
    /// [`SEARCH_CANDIDATES`] threads. A term of fewer than 3 characters has no trigram, and a
    /// common one matches so many rows that walking the sort order finds a page sooner: both
    /// are left to the `LIKE` alone.
    pub(super) async fn few_search_matches(&self, term: &str) -> Result<bool, StateError> {
        if term.chars().count() < 3 {
            return Ok(false);
        }
        let found: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM (SELECT rowid FROM threads_search \
             WHERE threads_search MATCH $1 LIMIT $2)",
        )
        .bind(fts_phrase(term))
        .bind(SEARCH_CANDIDATES)
        .fetch_one(self.pool().await?)
        .await?;
        Ok(found < SEARCH_CANDIDATES)
    }
}

/// Above this many trigram matches a search walks the sort order instead (see
/// [`StateDb::few_search_matches`]).
const SEARCH_CANDIDATES: i64 = 2000;

/// `term` as one FTS5 phrase: the substring itself, `"` doubled.
fn fts_phrase(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// The concrete kinds a `sourceKinds` filter stands for.
pub(super) fn expand_source_kinds(kinds: Option<&[String]>) -> Vec<&str> {
    let Some(kinds) = kinds.filter(|k| !k.is_empty()) else {
        return INTERACTIVE_SOURCE_KINDS.to_vec();
    };
    let mut out = Vec::new();
    for kind in kinds {
        if kind == "subAgent" {
            out.extend_from_slice(SUB_AGENT_KINDS);
        } else {
            out.push(kind.as_str());
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn push_list<'a>(sql: &mut QueryBuilder<Sqlite>, values: impl Iterator<Item = &'a str>) {
    let mut separated = sql.separated(", ");
    for value in values {
        separated.push_bind(value.to_string());
    }
}

/// Refuse a search term with a control character. SQLite reads `LIKE` patterns and FTS5
/// queries as C strings: a NUL would cut the term short (matching every thread, or failing to
/// parse), and no name or preview a person searches for holds control characters.
pub fn check_search_term(term: &str) -> Result<(), StateError> {
    match term.chars().find(|c| c.is_control()) {
        None => Ok(()),
        Some(c) => Err(StateError::InvalidSearchTerm(format!(
            "invalid searchTerm: control character U+{:04X} is not allowed",
            u32::from(c)
        ))),
    }
}

/// Escape `%`, `_` and the escape character itself for `LIKE … ESCAPE '\'`.
pub(super) fn escape_like(term: &str) -> String {
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `"<sort value>:<id>"` (a next cursor: after that row) or `"<sort value>"` (a backwards
/// cursor: after that value).
fn parse_cursor(cursor: &str) -> Result<(i64, Option<String>), StateError> {
    let invalid = || StateError::InvalidCursor(cursor.to_string());
    let Some((value, id)) = cursor.split_once(':') else {
        let value = i64::from_str(cursor).map_err(|_| invalid())?;
        return Ok((value, None));
    };
    let value = i64::from_str(value).map_err(|_| invalid())?;
    if id.is_empty() {
        return Err(invalid());
    }
    Ok((value, Some(id.to_string())))
}
