-- Analyses: the engine's notes on a finished game, kept once so the outbox row that tells the
-- chat about them stays small (it names the game and the ply analysed; the report is drawn from
-- these notes when it is delivered).  ``notes``: JSON list, one object per ply.
CREATE TABLE analyses (
    game_id bigint NOT NULL,
    ply bigint NOT NULL,
    notes text NOT NULL,
    created_at double precision NOT NULL,
    PRIMARY KEY (game_id, ply)
);
