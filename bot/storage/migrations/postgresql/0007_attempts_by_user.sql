-- A user's attempts (streaks, /stats) without reading every attempt.
CREATE INDEX attempts_user ON attempts (user_id);
