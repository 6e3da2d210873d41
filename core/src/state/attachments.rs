//! Thread attachments (`thread_attachments`; docs/protocol.md §7.37): JSON a client attaches
//! to a stored thread, at most one per `(attachment_type, identity_key)` on a thread. An add
//! of an identity the thread already holds returns what is stored, unchanged; a thread's
//! attachments go with its row (`ON DELETE CASCADE`, and [`delete_for_thread`]).
//!
//! Pages are keyset pages: a thread's attachments oldest first (`created_at`, then `id`, a
//! UUIDv7), the owners of one identity by thread id. A cursor names the last row of its page
//! and the query it belongs to, so a cursor of another thread or identity is refused.

use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use weft_protocol::{ThreadAttachment, ThreadAttachmentOwner, ThreadId};

use super::{StateDb, StateError};

#[cfg(test)]
mod tests;

/// Longest `attachmentType`, in bytes (the reference's bound).
pub const MAX_ATTACHMENT_TYPE_BYTES: usize = 256;
/// Longest `identityKey`, in bytes (the reference's bound).
pub const MAX_ATTACHMENT_IDENTITY_KEY_BYTES: usize = 256;
/// Largest page of `thread/attachment/list` and `thread/attachmentOwner/list`.
pub const MAX_ATTACHMENT_PAGE: u32 = 100;
/// The page size when the request names none.
pub const DEFAULT_ATTACHMENT_PAGE: u32 = 25;

/// The bounds of `[limits]` an add is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachmentLimits {
    /// Largest payload, in bytes of its JSON.
    pub payload_bytes: usize,
    /// Attachments one thread may hold.
    pub per_thread: usize,
}

/// Why an attachment request failed. `Display` is the client-facing message (the
/// reference's wording).
#[derive(Debug, thiserror::Error)]
pub enum AttachmentError {
    /// Bad params: an empty or too long identity, a payload too large, a bad cursor, a full
    /// thread.
    #[error("{0}")]
    Invalid(String),
    /// Not a stored thread.
    #[error("thread not found: {0}")]
    ThreadNotFound(ThreadId),
    /// The DB failed.
    #[error(transparent)]
    State(#[from] StateError),
}

impl From<sqlx::Error> for AttachmentError {
    fn from(err: sqlx::Error) -> AttachmentError {
        AttachmentError::State(err.into())
    }
}

/// What an add did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// The attachment is new.
    Created(ThreadAttachment),
    /// The thread already held this identity: the stored attachment, unchanged.
    Existing(ThreadAttachment),
}

/// One page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    /// The rows.
    pub data: Vec<T>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

/// Refuse an empty (once trimmed) or too long type or key.
pub fn check_identity(attachment_type: &str, identity_key: &str) -> Result<(), AttachmentError> {
    let invalid = |m: String| Err(AttachmentError::Invalid(m));
    if attachment_type.trim().is_empty() {
        return invalid("attachmentType must not be empty".into());
    }
    if attachment_type.len() > MAX_ATTACHMENT_TYPE_BYTES {
        return invalid(format!(
            "attachmentType must not exceed {MAX_ATTACHMENT_TYPE_BYTES} bytes"
        ));
    }
    if identity_key.trim().is_empty() {
        return invalid("identityKey must not be empty".into());
    }
    if identity_key.len() > MAX_ATTACHMENT_IDENTITY_KEY_BYTES {
        return invalid(format!(
            "identityKey must not exceed {MAX_ATTACHMENT_IDENTITY_KEY_BYTES} bytes"
        ));
    }
    Ok(())
}

/// The payload's JSON, refused when larger than `limit` bytes.
pub fn check_payload(payload: &Value, limit: usize) -> Result<String, AttachmentError> {
    let json = serde_json::to_string(payload)
        .map_err(|err| AttachmentError::Invalid(format!("invalid attachment payload: {err}")))?;
    if json.len() > limit {
        return Err(AttachmentError::Invalid(format!(
            "attachment payload must not exceed {limit} bytes"
        )));
    }
    Ok(json)
}

/// The page size of a request: 25 when absent, else clamped to 1..=100.
pub fn page_size(limit: Option<u32>) -> u32 {
    limit
        .unwrap_or(DEFAULT_ATTACHMENT_PAGE)
        .clamp(1, MAX_ATTACHMENT_PAGE)
}

const COLUMNS: &str = "id, thread_id, attachment_type, identity_key, payload, created_at";

fn bad_cursor() -> AttachmentError {
    AttachmentError::Invalid("invalid pagination cursor".into())
}

fn decode(row: &SqliteRow) -> Result<ThreadAttachment, AttachmentError> {
    let id: String = row.try_get("id")?;
    let payload: String = row.try_get("payload")?;
    let payload = serde_json::from_str(&payload).map_err(|source| StateError::Corrupt {
        id: id.clone(),
        source,
    })?;
    Ok(ThreadAttachment {
        id,
        attachment_type: row.try_get("attachment_type")?,
        identity_key: row.try_get("identity_key")?,
        payload,
        created_at: row.try_get("created_at")?,
    })
}

/// A list cursor: the thread, then the last row's `created_at` and id (`thread|secs|id`).
fn list_cursor(thread_id: &ThreadId, last: &ThreadAttachment) -> String {
    format!("{thread_id}|{}|{}", last.created_at, last.id)
}

fn parse_list_cursor(thread_id: &ThreadId, cursor: &str) -> Result<(i64, String), AttachmentError> {
    let mut parts = cursor.split('|');
    let (Some(thread), Some(secs), Some(id), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad_cursor());
    };
    if thread != thread_id.as_str() || uuid::Uuid::parse_str(id).is_err() {
        return Err(bad_cursor());
    }
    let secs = secs.parse::<i64>().map_err(|_| bad_cursor())?;
    Ok((secs, id.to_string()))
}

/// An owner cursor: the query (type, key, archived filter) and the last thread id, as JSON.
#[derive(serde::Serialize, serde::Deserialize)]
struct OwnerCursor {
    attachment_type: String,
    identity_key: String,
    archived: Option<bool>,
    thread_id: String,
}

impl StateDb {
    async fn thread_exists(&self, thread_id: &ThreadId) -> Result<bool, AttachmentError> {
        let row = sqlx::query("SELECT 1 FROM threads WHERE id = $1")
            .bind(thread_id.as_str())
            .fetch_optional(self.pool().await?)
            .await?;
        Ok(row.is_some())
    }

    async fn attachment(
        &self,
        thread_id: &ThreadId,
        attachment_type: &str,
        identity_key: &str,
    ) -> Result<Option<ThreadAttachment>, AttachmentError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM thread_attachments \
             WHERE thread_id = $1 AND attachment_type = $2 AND identity_key = $3"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(thread_id.as_str())
            .bind(attachment_type)
            .bind(identity_key)
            .fetch_optional(self.pool().await?)
            .await?;
        row.as_ref().map(decode).transpose()
    }

    /// `thread/attachment/add`: store the attachment, or return the one the thread already
    /// holds with this identity. One statement inserts it only while the thread is below
    /// `limits.per_thread`, so concurrent adds never pass the bound.
    pub async fn add_attachment(
        &self,
        thread_id: &ThreadId,
        attachment_type: &str,
        identity_key: &str,
        payload: &Value,
        limits: AttachmentLimits,
        now: i64,
    ) -> Result<Added, AttachmentError> {
        check_identity(attachment_type, identity_key)?;
        let json = check_payload(payload, limits.payload_bytes)?;
        if !self.thread_exists(thread_id).await? {
            return Err(AttachmentError::ThreadNotFound(thread_id.clone()));
        }
        let attachment = ThreadAttachment {
            id: uuid::Uuid::now_v7().to_string(),
            attachment_type: attachment_type.to_string(),
            identity_key: identity_key.to_string(),
            payload: payload.clone(),
            created_at: now,
        };
        let inserted = sqlx::query(
            "INSERT INTO thread_attachments \
             (id, thread_id, attachment_type, identity_key, payload, created_at) \
             SELECT $1, $2, $3, $4, $5, $6 \
             WHERE EXISTS (SELECT 1 FROM threads WHERE id = $2) \
             AND (SELECT COUNT(*) FROM thread_attachments WHERE thread_id = $2) < $7 \
             ON CONFLICT (thread_id, attachment_type, identity_key) DO NOTHING",
        )
        .bind(&attachment.id)
        .bind(thread_id.as_str())
        .bind(attachment_type)
        .bind(identity_key)
        .bind(&json)
        .bind(now)
        .bind(i64::try_from(limits.per_thread).unwrap_or(i64::MAX))
        .execute(self.pool().await?)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(Added::Created(attachment));
        }
        match self
            .attachment(thread_id, attachment_type, identity_key)
            .await?
        {
            Some(existing) => Ok(Added::Existing(existing)),
            None if !self.thread_exists(thread_id).await? => {
                Err(AttachmentError::ThreadNotFound(thread_id.clone()))
            }
            None => Err(AttachmentError::Invalid(format!(
                "thread attachment identity count exceeds {}",
                limits.per_thread
            ))),
        }
    }

    /// `thread/attachment/list`: one page of the thread's attachments, oldest first (an
    /// unknown thread has none, as in the reference).
    pub async fn list_attachments(
        &self,
        thread_id: &ThreadId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<ThreadAttachment>, AttachmentError> {
        let anchor = cursor
            .map(|c| parse_list_cursor(thread_id, c))
            .transpose()?;
        let (after_secs, after_id) = anchor.unwrap_or((i64::MIN, String::new()));
        let sql = format!(
            "SELECT {COLUMNS} FROM thread_attachments WHERE thread_id = $1 \
             AND (created_at > $2 OR (created_at = $2 AND id > $3)) \
             ORDER BY created_at, id LIMIT $4"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(thread_id.as_str())
            .bind(after_secs)
            .bind(after_id)
            .bind(i64::from(limit) + 1)
            .fetch_all(self.pool().await?)
            .await?;
        let mut data = rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
        let next_cursor = if data.len() > limit as usize {
            data.truncate(limit as usize);
            data.last().map(|last| list_cursor(thread_id, last))
        } else {
            None
        };
        Ok(Page { data, next_cursor })
    }

    /// `thread/attachmentOwner/list`: the threads holding an attachment of this identity, by
    /// thread id; `archived` keeps only archived (`true`) or unarchived (`false`) ones.
    pub async fn attachment_owners(
        &self,
        attachment_type: &str,
        identity_key: &str,
        archived: Option<bool>,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<ThreadAttachmentOwner>, AttachmentError> {
        check_identity(attachment_type, identity_key)?;
        let after = match cursor {
            None => String::new(),
            Some(cursor) => {
                let parsed: OwnerCursor = serde_json::from_str(cursor).map_err(|_| bad_cursor())?;
                if parsed.attachment_type != attachment_type
                    || parsed.identity_key != identity_key
                    || parsed.archived != archived
                {
                    return Err(bad_cursor());
                }
                parsed.thread_id
            }
        };
        let rows = sqlx::query(
            "SELECT a.thread_id AS thread_id, t.archived AS archived \
             FROM thread_attachments a JOIN threads t ON t.id = a.thread_id \
             WHERE a.attachment_type = $1 AND a.identity_key = $2 \
             AND ($3 IS NULL OR t.archived = $3) AND a.thread_id > $4 \
             ORDER BY a.thread_id LIMIT $5",
        )
        .bind(attachment_type)
        .bind(identity_key)
        .bind(archived)
        .bind(after)
        .bind(i64::from(limit) + 1)
        .fetch_all(self.pool().await?)
        .await?;
        let mut data = rows
            .iter()
            .map(|row| -> Result<ThreadAttachmentOwner, AttachmentError> {
                let id: String = row.try_get("thread_id")?;
                Ok(ThreadAttachmentOwner {
                    thread_id: ThreadId::from(id),
                    archived: row.try_get("archived")?,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let next_cursor = if data.len() > limit as usize {
            data.truncate(limit as usize);
            data.last().map(|last| {
                serde_json::to_string(&OwnerCursor {
                    attachment_type: attachment_type.to_string(),
                    identity_key: identity_key.to_string(),
                    archived,
                    thread_id: last.thread_id.to_string(),
                })
                .unwrap_or_default()
            })
        } else {
            None
        };
        Ok(Page { data, next_cursor })
    }

    /// `thread/attachment/remove`: the removed attachment, `None` when the thread held none
    /// of this identity.
    pub async fn remove_attachment(
        &self,
        thread_id: &ThreadId,
        attachment_type: &str,
        identity_key: &str,
    ) -> Result<Option<ThreadAttachment>, AttachmentError> {
        check_identity(attachment_type, identity_key)?;
        if !self.thread_exists(thread_id).await? {
            return Err(AttachmentError::ThreadNotFound(thread_id.clone()));
        }
        let sql = format!(
            "DELETE FROM thread_attachments \
             WHERE thread_id = $1 AND attachment_type = $2 AND identity_key = $3 \
             RETURNING {COLUMNS}"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(thread_id.as_str())
            .bind(attachment_type)
            .bind(identity_key)
            .fetch_optional(self.pool().await?)
            .await?;
        row.as_ref().map(decode).transpose()
    }
}

/// Copy a thread's attachments to its new fork (as the reference does; new ids, created
/// now, no notification), in one transaction; how many. Nothing for a fork without a row
/// (an ephemeral one).
pub async fn copy_to_fork(
    db: &StateDb,
    source: &ThreadId,
    fork: &ThreadId,
    now: i64,
) -> Result<u64, StateError> {
    let mut tx = db.pool().await?.begin().await?;
    let exists = sqlx::query("SELECT 1 FROM threads WHERE id = $1")
        .bind(fork.as_str())
        .fetch_optional(&mut *tx)
        .await?
        .is_some();
    if !exists {
        return Ok(0);
    }
    let rows = sqlx::query(
        "SELECT attachment_type, identity_key, payload FROM thread_attachments \
         WHERE thread_id = $1 ORDER BY created_at, id",
    )
    .bind(source.as_str())
    .fetch_all(&mut *tx)
    .await?;
    let mut copied = 0;
    for row in rows {
        let done = sqlx::query(
            "INSERT INTO thread_attachments \
             (id, thread_id, attachment_type, identity_key, payload, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (thread_id, attachment_type, identity_key) DO NOTHING",
        )
        .bind(uuid::Uuid::now_v7().to_string())
        .bind(fork.as_str())
        .bind(row.try_get::<String, _>("attachment_type")?)
        .bind(row.try_get::<String, _>("identity_key")?)
        .bind(row.try_get::<String, _>("payload")?)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        copied += done.rows_affected();
    }
    tx.commit().await?;
    Ok(copied)
}

/// Remove every attachment of a thread (what `thread/delete` does with them); how many there
/// were. Deleting the thread's row does this too (`ON DELETE CASCADE`).
pub async fn delete_for_thread(db: &StateDb, thread_id: &ThreadId) -> Result<u64, StateError> {
    let done = sqlx::query("DELETE FROM thread_attachments WHERE thread_id = $1")
        .bind(thread_id.as_str())
        .execute(db.pool().await?)
        .await?;
    Ok(done.rows_affected())
}
