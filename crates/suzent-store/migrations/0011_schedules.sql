-- Unattended runs: scheduled jobs (prompts, heartbeats, dreams), their runs, the one scheduler
-- lease per data directory, and chat goals.

CREATE TABLE schedule_jobs (
    id            TEXT PRIMARY KEY NOT NULL,   -- stable: re-registering or importing upserts
    name          TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('prompt', 'heartbeat', 'dream')),
    schedule      TEXT NOT NULL,               -- 5/6-field cron, or 'every N minutes'
    timezone      TEXT NOT NULL,               -- IANA name
    prompt        TEXT NOT NULL,
    workspace     TEXT,                        -- NULL: the configured default
    model         TEXT,                        -- NULL: the configured default
    chat_id       TEXT REFERENCES chats (id) ON DELETE SET NULL,  -- the job's own chat
    delivery      TEXT NOT NULL CHECK (delivery IN ('notify', 'silent')),
    overlap       TEXT NOT NULL CHECK (overlap IN ('skip', 'queue_one', 'allow')),
    catch_up      TEXT NOT NULL CHECK (catch_up IN ('run_once', 'skip')),
    timeout_secs  INTEGER NOT NULL CHECK (timeout_secs > 0),
    max_retries   INTEGER NOT NULL CHECK (max_retries >= 0),
    enabled       INTEGER NOT NULL,
    -- Occurrences up to and including this time are handled (claimed, skipped or passed over);
    -- a new or re-enabled job starts at its creation time, so past slots never fire.
    cursor        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
-- One heartbeat per chat.
CREATE UNIQUE INDEX schedule_jobs_one_heartbeat_per_chat ON schedule_jobs (chat_id)
    WHERE kind = 'heartbeat';

CREATE TABLE schedule_runs (
    id           TEXT PRIMARY KEY NOT NULL,
    job_id       TEXT NOT NULL REFERENCES schedule_jobs (id) ON DELETE CASCADE,
    slot         TEXT NOT NULL,                -- the occurrence it is for (UTC)
    attempt      INTEGER NOT NULL,             -- 1, then recoveries and retries
    trigger      TEXT NOT NULL CHECK (trigger IN ('schedule', 'catch_up', 'recovery', 'retry', 'manual')),
    catch_up     INTEGER NOT NULL,             -- 1: runs for occurrences that were missed
    missed       INTEGER NOT NULL DEFAULT 0,   -- how many occurrences it stands for beyond its slot
    status       TEXT NOT NULL CHECK (status IN ('requested', 'queued', 'running', 'completed',
                     'failed', 'interrupted', 'skipped', 'missed', 'timed_out', 'unknown')),
    owner        TEXT,                         -- the scheduler instance that claimed it
    pid          INTEGER,                      -- its process
    chat_id      TEXT,
    turn_run_id  TEXT,
    claimed_at   TEXT NOT NULL,                -- written before the run starts
    started_at   TEXT,
    ended_at     TEXT,
    steps        INTEGER NOT NULL DEFAULT 0,   -- model steps of the turn
    denied       TEXT NOT NULL DEFAULT '[]',   -- JSON [DeniedCall]
    detail       TEXT,                         -- error, skip reason, the answer's start
    quiet        INTEGER NOT NULL DEFAULT 0,   -- a heartbeat that found nothing to do
    changes      TEXT,                         -- a dream's JSON record of what it changed
    -- An occurrence is claimed once: a second claim of the same slot and attempt fails.
    UNIQUE (job_id, slot, attempt)
);
CREATE INDEX schedule_runs_by_job ON schedule_runs (job_id, claimed_at DESC);
CREATE INDEX schedule_runs_open ON schedule_runs (status)
    WHERE status IN ('requested', 'queued', 'running');

-- Exactly one scheduler per data directory: the process holding an unexpired lease schedules.
CREATE TABLE scheduler_lease (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    owner        TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    host         TEXT NOT NULL,
    acquired_at  TEXT NOT NULL,
    expires_at   TEXT NOT NULL
);

-- Bumped by every change to schedule_jobs, so a scheduler in another process reloads cheaply.
CREATE TABLE schedule_version (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    version  INTEGER NOT NULL
);
INSERT INTO schedule_version (id, version) VALUES (1, 0);

CREATE TABLE chat_goals (
    chat_id      TEXT PRIMARY KEY NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    objective    TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('active', 'paused', 'met', 'budget_spent')),
    reason       TEXT,                         -- why it stopped (the judge's words, the budget)
    turns_used   INTEGER NOT NULL,
    max_turns    INTEGER NOT NULL CHECK (max_turns > 0),
    tokens_used  INTEGER NOT NULL,
    max_tokens   INTEGER NOT NULL CHECK (max_tokens > 0),
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
