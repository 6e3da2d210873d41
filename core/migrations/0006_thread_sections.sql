-- Thread management (docs/protocol.md §7.36): the thread sections clients group threads in,
-- their members in order, and the Git metadata `thread/metadata/update` set. Unlike the rest of
-- the index these are not derived from the rollouts: the DB is their only home, as in the
-- reference (deleting `state.sqlite` forgets them). Portable SQL.

-- The sections, in `ordinal` order; the built-in `Pinned` section comes first and can be
-- neither renamed nor deleted. `has_appearance` tells an appearance of two nulls from none.
CREATE TABLE thread_sections (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    has_appearance BOOLEAN NOT NULL DEFAULT FALSE,
    icon TEXT,
    color TEXT,
    ordinal BIGINT NOT NULL
);
INSERT INTO thread_sections (id, name, ordinal)
    VALUES ('01984de2-8f74-7c91-a3b2-5c5e937cf318', 'Pinned', 0);

-- A thread is in at most one section, at a position (0, 1, … in the section's order), since
-- `entered_at` (Unix seconds; kept when the thread moves within its section).
CREATE TABLE thread_section_members (
    thread_id TEXT PRIMARY KEY NOT NULL,
    section_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    entered_at BIGINT NOT NULL
);
CREATE INDEX thread_section_members_order
    ON thread_section_members (section_id, position, thread_id);

-- Git metadata set by `thread/metadata/update`; a row replaces what the rollout's header says.
CREATE TABLE thread_git_info (
    thread_id TEXT PRIMARY KEY NOT NULL,
    sha TEXT,
    branch TEXT,
    origin_url TEXT
);
