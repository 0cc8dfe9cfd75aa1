-- Puzzles from the players' own games (issue 33).  Every finished game is queued here in the
-- transaction that finishes it, and scanned once in the background: a process claims a pending
-- game with a lease (``claimed_by`` until ``lease_until``), as the outbox does, so several processes
-- on one database scan each game once and a dead process's claim passes on after the lease.
CREATE TABLE game_scans (
    game_id INTEGER PRIMARY KEY NOT NULL, platform TEXT NOT NULL, queued_at REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending', claimed_by TEXT, lease_until REAL,
    attempts INTEGER NOT NULL DEFAULT 0, done_at REAL, found INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX game_scans_pending ON game_scans (status, game_id);
-- A player's puzzles (the bank record as JSON), reviewed in Leitner boxes: one per game, ply and
-- player, so a game scanned again adds nothing.
CREATE TABLE own_puzzles (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL, user_id TEXT NOT NULL, variant TEXT NOT NULL, puzzle TEXT NOT NULL,
    game_id INTEGER NOT NULL, ply INTEGER NOT NULL, move_number INTEGER NOT NULL, opponent TEXT NOT NULL,
    kind TEXT NOT NULL, box INTEGER NOT NULL DEFAULT 0, due_at REAL NOT NULL, created_at REAL NOT NULL,
    reviews INTEGER NOT NULL DEFAULT 0, lapses INTEGER NOT NULL DEFAULT 0, retired INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX own_puzzles_once ON own_puzzles (platform, user_id, game_id, ply);
CREATE INDEX own_puzzles_due ON own_puzzles (platform, user_id, retired, due_at);
-- Who asked to be reminded of their due puzzles, where, and when the last reminder was written.
CREATE TABLE own_reminders (
    platform TEXT NOT NULL, user_id TEXT NOT NULL, chat_id TEXT NOT NULL, language TEXT NOT NULL,
    active INTEGER NOT NULL, last_at REAL, updated_at REAL NOT NULL,
    PRIMARY KEY (platform, user_id)
);
