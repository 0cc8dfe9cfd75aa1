-- Players, chats, challenges, games and their moves, and the messages that show a board.
CREATE TABLE players (
    platform TEXT NOT NULL, user_id TEXT NOT NULL, name TEXT NOT NULL,
    username TEXT, language TEXT, updated_at REAL NOT NULL,
    PRIMARY KEY (platform, user_id));
CREATE TABLE chats (
    platform TEXT NOT NULL, chat_id TEXT NOT NULL, kind TEXT NOT NULL,
    language TEXT, variant TEXT, created_at REAL NOT NULL,
    PRIMARY KEY (platform, chat_id));
CREATE TABLE challenges (
    id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL,
    challenger_id TEXT NOT NULL, challenger_name TEXT NOT NULL, target_username TEXT,
    variant TEXT NOT NULL, color TEXT NOT NULL, move_seconds INTEGER NOT NULL,
    status TEXT NOT NULL, created_at REAL NOT NULL, game_id INTEGER);
CREATE INDEX challenges_chat ON challenges (platform, chat_id, status);
CREATE TABLE games (
    id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL,
    variant TEXT NOT NULL, start_fen TEXT,
    white_id TEXT NOT NULL, white_name TEXT NOT NULL,
    black_id TEXT NOT NULL, black_name TEXT NOT NULL,
    fen TEXT NOT NULL, ply INTEGER NOT NULL, quiet_plies INTEGER NOT NULL,
    version INTEGER NOT NULL, status TEXT NOT NULL,
    result_score TEXT, result_reason TEXT, winner TEXT,
    draw_offer TEXT, move_seconds INTEGER NOT NULL, deadline_at REAL,
    reminded INTEGER NOT NULL DEFAULT 0,
    last_path TEXT, last_captured TEXT,
    created_at REAL NOT NULL, finished_at REAL);
CREATE INDEX games_chat ON games (platform, chat_id, status);
CREATE INDEX games_deadline ON games (status, deadline_at);
CREATE TABLE moves (
    game_id INTEGER NOT NULL REFERENCES games(id), ply INTEGER NOT NULL,
    notation TEXT NOT NULL, fen_after TEXT NOT NULL, by_user TEXT NOT NULL,
    played_at REAL NOT NULL, PRIMARY KEY (game_id, ply));
CREATE TABLE messages (
    platform TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL,
    game_id INTEGER NOT NULL, PRIMARY KEY (platform, chat_id, message_id));
