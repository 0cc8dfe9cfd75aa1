-- Glicko-2 ratings, derived from the games and attempts (python -m bot ratings rebuild).
CREATE TABLE ratings (
    platform TEXT NOT NULL, subject TEXT NOT NULL, pool TEXT NOT NULL, rating REAL NOT NULL,
    deviation REAL NOT NULL, volatility REAL NOT NULL, games INTEGER NOT NULL, updated_at REAL NOT NULL,
    PRIMARY KEY (platform, subject, pool));
CREATE TABLE rating_history (
    platform TEXT NOT NULL, subject TEXT NOT NULL, pool TEXT NOT NULL, source TEXT NOT NULL,
    at REAL NOT NULL, rating REAL NOT NULL, deviation REAL NOT NULL);
CREATE INDEX rating_history_subject ON rating_history (platform, subject, pool);
