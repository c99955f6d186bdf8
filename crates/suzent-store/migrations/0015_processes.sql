-- Processes tools started (issue 13 item 8): one row per process group a `run_command` or
-- `start_command` started, written right after the spawn and deleted when the runtime saw it
-- end. A row still `running` whose owning runtime is gone (owner_pid no longer runs with
-- owner_start_ticks) belongs to a runtime that was killed: the next runtime stops the group
-- (after checking pid, group and start time against the OS, so a reused pid is never killed)
-- and marks the row `interrupted`.
CREATE TABLE processes (
    id                 TEXT PRIMARY KEY NOT NULL,
    chat_id            TEXT NOT NULL,
    kind               TEXT NOT NULL CHECK (kind IN ('run_command', 'background_command')),
    tool_call_id       TEXT,
    command_id         TEXT,
    command            TEXT NOT NULL,
    pid                INTEGER NOT NULL,
    pgid               INTEGER NOT NULL,
    -- /proc/PID/stat field 22 (clock ticks after boot); NULL where the OS does not tell.
    start_ticks        INTEGER,
    -- /proc/sys/kernel/random/boot_id at spawn: start ticks only compare within one boot.
    boot_id            TEXT,
    owner_pid          INTEGER NOT NULL,
    owner_start_ticks  INTEGER,
    status             TEXT NOT NULL CHECK (status IN ('running', 'interrupted')),
    started_at         TEXT NOT NULL,
    ended_at           TEXT,
    -- For an interrupted row: what the sweep found and did.
    note               TEXT
);
CREATE INDEX processes_by_status ON processes (status);
CREATE INDEX processes_by_chat ON processes (chat_id);
