-- The daily puzzle: each chat's setting, the puzzles put to chats and users, and every user's
-- way through each of them (one daily post per chat and day, whichever process gets there first).
CREATE TABLE subscriptions (
    platform TEXT NOT NULL, chat_id TEXT NOT NULL, time TEXT NOT NULL, timezone TEXT NOT NULL,
    variant TEXT NOT NULL, language TEXT, active INTEGER NOT NULL, created_at REAL NOT NULL,
    updated_at REAL NOT NULL, PRIMARY KEY (platform, chat_id));
CREATE TABLE puzzle_posts (
    id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL, kind TEXT NOT NULL,
    day TEXT, user_id TEXT, variant TEXT NOT NULL, puzzle_id TEXT NOT NULL, posted_at REAL NOT NULL,
    first_solver_id TEXT, first_solver_name TEXT);
CREATE UNIQUE INDEX puzzle_posts_daily ON puzzle_posts (platform, chat_id, day) WHERE kind='daily';
CREATE INDEX puzzle_posts_user ON puzzle_posts (platform, user_id, kind);
CREATE TABLE attempts (
    post_id INTEGER NOT NULL REFERENCES puzzle_posts(id), user_id TEXT NOT NULL, user_name TEXT NOT NULL,
    progress TEXT NOT NULL, misses INTEGER NOT NULL, hints INTEGER NOT NULL, started_at REAL NOT NULL,
    solved_at REAL, rated_score REAL, rated_at REAL, PRIMARY KEY (post_id, user_id));
CREATE TABLE post_messages (
    platform TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL,
    post_id INTEGER NOT NULL, PRIMARY KEY (platform, chat_id, message_id));
