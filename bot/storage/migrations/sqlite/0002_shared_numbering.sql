-- Small named values: the shared challenge/game number counter, heartbeats.
-- Old rows keep their ids (players refer to them); new numbers start above both.
CREATE TABLE meta (key TEXT PRIMARY KEY, value);
INSERT INTO meta (key, value) SELECT 'last_number',
    max(coalesce((SELECT max(id) FROM challenges), 0), coalesce((SELECT max(id) FROM games), 0));
