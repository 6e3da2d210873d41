//! `thread/list`: the page request, its filters, and keyset pagination over the index.

use std::str::FromStr;

use sqlx::{QueryBuilder, Sqlite};
use weft_protocol::SortDirection;

use super::{COLUMNS, StateDb, StateError, ThreadRow, decode_row};

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
}

impl ListSortKey {
    fn column(self) -> &'static str {
        match self {
            ListSortKey::CreatedAt => "created_at",
            ListSortKey::UpdatedAt => "updated_at",
        }
    }
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
}

impl StateDb {
    /// One page of threads and the cursor of the next page (`None` on the last page). Keyset
    /// pagination on `(sort value, id)`: a page never repeats or skips a row because rows were
    /// inserted meanwhile (rows whose sort value changes may move, as with any live order).
    pub async fn list(
        &self,
        query: &ListQuery,
    ) -> Result<(Vec<ThreadRow>, Option<String>), StateError> {
        let limit = match query.limit {
            0 => DEFAULT_LIST_LIMIT,
            n => n.min(MAX_LIST_LIMIT),
        };
        let column = query.sort_key.column();
        let (cmp, order) = match query.direction {
            SortDirection::Desc => ("<", "DESC"),
            SortDirection::Asc => (">", "ASC"),
        };
        let mut sql =
            QueryBuilder::<Sqlite>::new(format!("SELECT {COLUMNS} FROM threads WHERE archived = "));
        sql.push_bind(query.archived);

        if let Some(providers) = query.model_providers.as_ref().filter(|p| !p.is_empty()) {
            sql.push(" AND model_provider IN (");
            push_list(&mut sql, providers.iter().map(String::as_str));
            sql.push(")");
        }
        let kinds = expand_source_kinds(query.source_kinds.as_deref());
        sql.push(" AND source IN (");
        push_list(&mut sql, kinds.iter().copied());
        sql.push(")");
        if let Some(cwds) = query.cwd.as_ref().filter(|c| !c.is_empty()) {
            sql.push(" AND cwd IN (");
            push_list(&mut sql, cwds.iter().map(String::as_str));
            sql.push(")");
        }
        if let Some(term) = query.search_term.as_deref().filter(|t| !t.is_empty()) {
            let pattern = format!("%{}%", escape_like(term));
            sql.push(" AND (name LIKE ");
            sql.push_bind(pattern.clone());
            sql.push(" ESCAPE '\\' OR preview LIKE ");
            sql.push_bind(pattern);
            sql.push(" ESCAPE '\\')");
        }
        if let Some(cursor) = &query.cursor {
            let (value, id) = parse_cursor(cursor)?;
            sql.push(format!(" AND ({column} {cmp} "));
            sql.push_bind(value);
            sql.push(format!(" OR ({column} = "));
            sql.push_bind(value);
            sql.push(format!(" AND id {cmp} "));
            sql.push_bind(id);
            sql.push("))");
        }
        sql.push(format!(" ORDER BY {column} {order}, id {order} LIMIT "));
        sql.push_bind(i64::from(limit) + 1);

        let rows = sql.build().fetch_all(&self.pool).await?;
        let mut out = rows.iter().map(decode_row).collect::<Result<Vec<_>, _>>()?;
        let next = if out.len() > limit as usize {
            out.truncate(limit as usize);
            out.last().map(|row| {
                let value = match query.sort_key {
                    ListSortKey::CreatedAt => row.created_at,
                    ListSortKey::UpdatedAt => row.updated_at,
                };
                format!("{value}:{}", row.id)
            })
        } else {
            None
        };
        Ok((out, next))
    }
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

/// `"<sort value>:<id>"`.
fn parse_cursor(cursor: &str) -> Result<(i64, String), StateError> {
    let invalid = || StateError::InvalidCursor(cursor.to_string());
    let (value, id) = cursor.split_once(':').ok_or_else(invalid)?;
    let value = i64::from_str(value).map_err(|_| invalid())?;
    if id.is_empty() {
        return Err(invalid());
    }
    Ok((value, id.to_string()))
}
