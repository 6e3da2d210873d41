-- The thread index. Every row is derived from a rollout file and can be rebuilt from the
-- rollouts (`StateDb::rebuild_from_rollouts`). Portable SQL: SQLite and PostgreSQL.
CREATE TABLE threads (
    id TEXT PRIMARY KEY NOT NULL,
    rollout_path TEXT NOT NULL,
    cwd TEXT NOT NULL,
    model TEXT,
    model_provider TEXT NOT NULL,
    reasoning_effort TEXT,
    -- The SessionSource kind used by the `sourceKinds` filter (`vscode`, `cli`, `subAgentReview`, ...).
    source TEXT NOT NULL,
    -- The whole SessionSource as JSON (custom and sub-agent sources carry details).
    source_json TEXT NOT NULL,
    originator TEXT,
    cli_version TEXT NOT NULL,
    thread_source TEXT,
    preview TEXT NOT NULL DEFAULT '',
    name TEXT,
    -- Unix seconds.
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    archived BOOLEAN NOT NULL DEFAULT FALSE,
    forked_from_id TEXT
);

CREATE INDEX threads_archived_created ON threads (archived, created_at, id);
CREATE INDEX threads_archived_updated ON threads (archived, updated_at, id);
