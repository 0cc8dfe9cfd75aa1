-- Small named values: the shared challenge/game number counter, heartbeats.
-- Old rows keep their ids (players refer to them); new numbers start above both.
-- ``value`` is text (SQLite's column has no type): the store converts what it reads.
CREATE TABLE meta (key text PRIMARY KEY, value text);
INSERT INTO meta (key, value) SELECT 'last_number',
    greatest(coalesce((SELECT max(id) FROM challenges), 0), coalesce((SELECT max(id) FROM games), 0))::text;
