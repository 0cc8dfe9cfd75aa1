-- Explicit concurrency: a puzzle attempt carries a version, and a save names the version it read
-- (compare-and-set), so two answers of one user at once cannot both build on the same state.
ALTER TABLE attempts ADD COLUMN version bigint NOT NULL DEFAULT 1;
