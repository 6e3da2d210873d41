-- Sub-agents closed by `close_agent` (docs/agents.md §4): a closed agent takes no slot of its
-- tree after a restart. Derived from the rollouts (their last `agent_closed` record), so a
-- rebuilt index has it too. Portable SQL.
ALTER TABLE threads ADD COLUMN agent_closed BOOLEAN NOT NULL DEFAULT FALSE;
