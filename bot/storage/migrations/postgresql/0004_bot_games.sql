-- Games against the bot: its level (NULL for a game between people).
ALTER TABLE games ADD COLUMN bot_level bigint;
CREATE INDEX games_bot ON games (status, bot_level);
