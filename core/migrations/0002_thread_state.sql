-- Per-thread state beside the index (docs/protocol.md §7.5, §7.26): the `recency_at` sort
-- key, the direct parent of spawned threads, read receipts and goals. Portable SQL.

-- Unix seconds of the thread's last user activity (start, then each turn started).
ALTER TABLE threads ADD COLUMN recency_at BIGINT NOT NULL DEFAULT 0;
UPDATE threads SET recency_at = updated_at;
CREATE INDEX threads_archived_recency ON threads (archived, recency_at, id);

-- The thread that spawned this one (sub-agent threads); NULL otherwise. Filled from
-- `source_json` for rows written before this migration (`StateDb::open`).
ALTER TABLE threads ADD COLUMN parent_thread_id TEXT;
CREATE INDEX threads_parent ON threads (parent_thread_id);

-- Read receipts: no row = read, revision `initial:<id>`. Not derived from the rollouts.
CREATE TABLE thread_read_states (
    thread_id TEXT PRIMARY KEY NOT NULL,
    -- NULL (read), 'threadStart' or 'turn'.
    first_unread TEXT,
    first_unread_turn_id TEXT,
    revision TEXT NOT NULL
);

-- Goals, at most one per thread. Not derived from the rollouts.
CREATE TABLE thread_goals (
    thread_id TEXT PRIMARY KEY NOT NULL,
    objective TEXT NOT NULL,
    status TEXT NOT NULL,
    token_budget BIGINT,
    tokens_used BIGINT NOT NULL DEFAULT 0,
    time_used_seconds BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
