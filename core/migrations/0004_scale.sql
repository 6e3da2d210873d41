-- Scale (docs/architecture.md §10): what start-up re-indexes, and indexes for the `thread/list`
-- filters that used to scan. SQLite; the PostgreSQL backend will need its own spelling of the
-- search index (a `pg_trgm` GIN index on `name` and `preview`).

-- TRUE while a rollout writer may append to the thread's file and the row may lag behind it
-- (set when the daemon opens the file for writing, cleared when it closes it after the last
-- update). Start-up re-indexes the rows left TRUE by a daemon that died, and only those.
ALTER TABLE threads ADD COLUMN dirty BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX threads_dirty ON threads (id) WHERE dirty;

-- One row once the index holds every rollout: written by the full rebuild in the transaction
-- of its rows, so a rebuild that was cut off (the daemon stopped first) is done again at the
-- next start instead of leaving an index that is missing threads. A DB upgraded from before
-- this migration was complete when it had rows.
CREATE TABLE index_complete (id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1));
INSERT INTO index_complete (id) SELECT 1 WHERE EXISTS (SELECT 1 FROM threads);

-- The filters that name one value (one working directory, one provider, one parent: the
-- common case), each in each sort order, so a filter that matches few threads reads only those.
CREATE INDEX threads_cwd_created ON threads (archived, cwd, created_at, id);
CREATE INDEX threads_cwd_updated ON threads (archived, cwd, updated_at, id);
CREATE INDEX threads_cwd_recency ON threads (archived, cwd, recency_at, id);
CREATE INDEX threads_provider_created ON threads (archived, model_provider, created_at, id);
CREATE INDEX threads_provider_updated ON threads (archived, model_provider, updated_at, id);
CREATE INDEX threads_provider_recency ON threads (archived, model_provider, recency_at, id);
CREATE INDEX threads_parent_created ON threads (archived, parent_thread_id, created_at, id);
CREATE INDEX threads_parent_updated ON threads (archived, parent_thread_id, updated_at, id);
CREATE INDEX threads_parent_recency ON threads (archived, parent_thread_id, recency_at, id);

-- The `searchTerm` filter: a trigram index of the name and the preview, case-sensitive like the
-- `LIKE` it narrows (the `LIKE` still decides; this only finds the candidates). Kept in step with
-- `threads` by the triggers below.
CREATE VIRTUAL TABLE threads_search USING fts5(
    name, preview, content = 'threads', tokenize = 'trigram case_sensitive 1'
);
INSERT INTO threads_search (rowid, name, preview) SELECT rowid, name, preview FROM threads;

CREATE TRIGGER threads_search_insert AFTER INSERT ON threads BEGIN
    INSERT INTO threads_search (rowid, name, preview) VALUES (new.rowid, new.name, new.preview);
END;
CREATE TRIGGER threads_search_delete AFTER DELETE ON threads BEGIN
    INSERT INTO threads_search (threads_search, rowid, name, preview)
        VALUES ('delete', old.rowid, old.name, old.preview);
END;
CREATE TRIGGER threads_search_update AFTER UPDATE OF name, preview ON threads
    WHEN old.name IS NOT new.name OR old.preview IS NOT new.preview BEGIN
    INSERT INTO threads_search (threads_search, rowid, name, preview)
        VALUES ('delete', old.rowid, old.name, old.preview);
    INSERT INTO threads_search (rowid, name, preview) VALUES (new.rowid, new.name, new.preview);
END;
