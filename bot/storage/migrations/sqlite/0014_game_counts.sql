-- Finished games counted per outcome, kept as games finish (/top, /stats: Store.count_finished_games),
-- so a leaderboard or a player's record reads a few rows per pair of players instead of every
-- game.  The key is every column a count tells apart; NULLs are kept as 0 or '' (a key column
-- cannot be NULL); short: ended before ply 2 (records.SHORT_PLIES).  The games already finished
-- are counted here once.
CREATE TABLE game_counts (
    platform TEXT NOT NULL, chat_id TEXT NOT NULL, white_id TEXT NOT NULL, black_id TEXT NOT NULL,
    variant TEXT NOT NULL, bot_level INTEGER NOT NULL, winner TEXT NOT NULL, result_reason TEXT NOT NULL,
    short INTEGER NOT NULL, games INTEGER NOT NULL,
    PRIMARY KEY (platform, chat_id, white_id, black_id, variant, bot_level, winner, result_reason, short));
CREATE INDEX game_counts_white ON game_counts (platform, white_id, black_id);
CREATE INDEX game_counts_black ON game_counts (platform, black_id, white_id);
INSERT INTO game_counts (platform, chat_id, white_id, black_id, variant, bot_level, winner, result_reason, short,
                         games)
    SELECT platform, chat_id, white_id, black_id, variant, COALESCE(bot_level, 0), COALESCE(winner, ''),
           COALESCE(result_reason, ''), CASE WHEN ply < 2 THEN 1 ELSE 0 END, COUNT(*)
    FROM games WHERE status = 'finished'
    GROUP BY platform, chat_id, white_id, black_id, variant, COALESCE(bot_level, 0), COALESCE(winner, ''),
             COALESCE(result_reason, ''), CASE WHEN ply < 2 THEN 1 ELSE 0 END;
-- A chat's latest games in id order (the variant it plays most: the first board of /top).
CREATE INDEX games_chat_latest ON games (platform, chat_id, id);
-- A rating's history read for a chart (its events spread over it) from this index alone; it
-- replaces the one on the subject, its first columns.
CREATE INDEX rating_history_chart ON rating_history (platform, subject, pool, at, rating, deviation, source);
DROP INDEX rating_history_subject;
