-- Storm runs (issue 33): as many puzzles as possible in 3 minutes on the web board.  One row per
-- run: who plays it (platform, user), the chat where /storm was asked (its result is posted
-- there), the puzzles chosen at the start in the order they are played (a JSON list of bank ids,
-- ratings rising), where the run is (``current`` puzzle, the ``moves`` played in it as a JSON
-- list), the score and the misses, the end time and ``version`` (every answer is a compare-and-set
-- on it, so two taps never count twice).  The 3 minutes start when the player first opens the
-- run's page (``opened_at``; a member in a group must first open the private chat): until then
-- ``ends_at`` is how long an unopened run waits before it ends unseen; from then it is the
-- opening plus 3 minutes, moved 10 s earlier by each miss.
CREATE TABLE storm_runs (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL, chat_id TEXT NOT NULL, user_id TEXT NOT NULL, name TEXT NOT NULL,
    lang TEXT NOT NULL, variant TEXT NOT NULL, puzzles TEXT NOT NULL,
    started_at REAL NOT NULL, ends_at REAL NOT NULL,
    current INTEGER NOT NULL DEFAULT 0, moves TEXT NOT NULL DEFAULT '[]',
    solved INTEGER NOT NULL DEFAULT 0, missed INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'running', version INTEGER NOT NULL DEFAULT 0, finished_at REAL,
    opened_at REAL
);
-- One running run a player: a second /storm gives back the running run's link, never a second run.
CREATE UNIQUE INDEX storm_runs_one_running ON storm_runs (platform, user_id) WHERE status = 'running';
CREATE INDEX storm_runs_due ON storm_runs (status, platform, ends_at);
