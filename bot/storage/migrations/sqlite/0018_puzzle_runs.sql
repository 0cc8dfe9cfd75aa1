-- Puzzle runs (streak; storm): one row per run of one player, its state guarded by ``version``
-- (every save is a compare-and-set: two answers at once end or advance a run once).  A player has
-- at most one running run of a mode.  ``post_id``: the puzzle being solved now.
CREATE TABLE puzzle_runs (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL, user_id TEXT NOT NULL, chat_id TEXT NOT NULL,
    mode TEXT NOT NULL, variant TEXT NOT NULL, status TEXT NOT NULL,
    score INTEGER NOT NULL DEFAULT 0, skips INTEGER NOT NULL DEFAULT 0, post_id INTEGER,
    state TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 0,
    started_at REAL NOT NULL, ended_at REAL
);
CREATE UNIQUE INDEX puzzle_runs_one_running ON puzzle_runs (platform, user_id, mode) WHERE status = 'running';
-- Every puzzle a run has given (skipped and solved ones too): a board of one the run has left
-- is stale.
CREATE TABLE puzzle_run_posts (post_id INTEGER PRIMARY KEY NOT NULL, run_id INTEGER NOT NULL);
-- A player's best score per mode and variant.
CREATE TABLE personal_bests (
    platform TEXT NOT NULL, user_id TEXT NOT NULL, mode TEXT NOT NULL, variant TEXT NOT NULL,
    score INTEGER NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (platform, user_id, mode, variant)
);
-- A chat's best score per mode and variant, and the one message that shows it (edited in place).
CREATE TABLE chat_records (
    platform TEXT NOT NULL, chat_id TEXT NOT NULL, mode TEXT NOT NULL, variant TEXT NOT NULL,
    score INTEGER NOT NULL, user_id TEXT NOT NULL, name TEXT NOT NULL, at REAL NOT NULL, message_id TEXT,
    PRIMARY KEY (platform, chat_id, mode, variant)
);
