-- Thread attachments (docs/protocol.md §7.38): what clients attach to a thread with
-- `thread/attachment/add`, at most one per (attachment_type, identity_key) on a thread. Not
-- derived from the rollouts; removed with the thread's row (ON DELETE CASCADE, and
-- `delete_with` in core/src/state.rs). Portable SQL.
CREATE TABLE thread_attachments (
    id TEXT PRIMARY KEY NOT NULL,
    thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    attachment_type TEXT NOT NULL,
    identity_key TEXT NOT NULL,
    -- The client's JSON, as sent.
    payload TEXT NOT NULL,
    -- Unix seconds.
    created_at BIGINT NOT NULL,
    UNIQUE (thread_id, attachment_type, identity_key)
);
-- A thread's page, oldest first.
CREATE INDEX thread_attachments_thread ON thread_attachments (thread_id, created_at, id);
-- The owners of one identity, by thread.
CREATE INDEX thread_attachments_identity ON thread_attachments (attachment_type, identity_key, thread_id);
