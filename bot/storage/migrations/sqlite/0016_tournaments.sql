-- Tournaments in a chat (issue 32).  One row per tournament: its pure core's state as JSON
-- (bot.tournaments.codec), guarded by ``version`` (every save is a compare-and-set, so a round is
-- never paired twice nor skipped by two processes or a crash); ``status`` and ``round_deadline``
-- kept beside it for the queries.  A chat has at most one tournament that is not finished.
CREATE TABLE tournaments (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL, chat_id TEXT NOT NULL, place TEXT,
    variant TEXT NOT NULL, move_seconds INTEGER NOT NULL, round_seconds INTEGER NOT NULL,
    status TEXT NOT NULL, state TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 0,
    round_deadline REAL, created_by TEXT NOT NULL, created_at REAL NOT NULL, finished_at REAL
);
CREATE UNIQUE INDEX tournaments_one_per_chat ON tournaments (platform, chat_id) WHERE status <> 'finished';
CREATE INDEX tournaments_due ON tournaments (status, round_deadline);
-- The games of a tournament's rounds: a finished game finds its tournament here.
CREATE TABLE tournament_games (
    game_id INTEGER PRIMARY KEY NOT NULL, tournament_id INTEGER NOT NULL, round INTEGER NOT NULL,
    white_id TEXT NOT NULL, black_id TEXT NOT NULL
);
CREATE INDEX tournament_games_round ON tournament_games (tournament_id, round);
