"""The schema exactly as the bot made it before migrations became numbered files (commit ec0b6d3:
ten migrations in a Python list, counted by PRAGMA user_version), to test that a database from
that bot is upgraded in place."""

LEGACY_MIGRATIONS: list[list[str]] = [['CREATE TABLE players (\n'
  '            platform TEXT NOT NULL, user_id TEXT NOT NULL, name TEXT NOT NULL,\n'
  '            username TEXT, language TEXT, updated_at REAL NOT NULL,\n'
  '            PRIMARY KEY (platform, user_id))',
  'CREATE TABLE chats (\n'
  '            platform TEXT NOT NULL, chat_id TEXT NOT NULL, kind TEXT NOT NULL,\n'
  '            language TEXT, variant TEXT, created_at REAL NOT NULL,\n'
  '            PRIMARY KEY (platform, chat_id))',
  'CREATE TABLE challenges (\n'
  '            id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL,\n'
  '            challenger_id TEXT NOT NULL, challenger_name TEXT NOT NULL, target_username TEXT,\n'
  '            variant TEXT NOT NULL, color TEXT NOT NULL, move_seconds INTEGER NOT NULL,\n'
  '            status TEXT NOT NULL, created_at REAL NOT NULL, game_id INTEGER)',
  'CREATE INDEX challenges_chat ON challenges (platform, chat_id, status)',
  'CREATE TABLE games (\n'
  '            id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL,\n'
  '            variant TEXT NOT NULL, start_fen TEXT,\n'
  '            white_id TEXT NOT NULL, white_name TEXT NOT NULL,\n'
  '            black_id TEXT NOT NULL, black_name TEXT NOT NULL,\n'
  '            fen TEXT NOT NULL, ply INTEGER NOT NULL, quiet_plies INTEGER NOT NULL,\n'
  '            version INTEGER NOT NULL, status TEXT NOT NULL,\n'
  '            result_score TEXT, result_reason TEXT, winner TEXT,\n'
  '            draw_offer TEXT, move_seconds INTEGER NOT NULL, deadline_at REAL,\n'
  '            reminded INTEGER NOT NULL DEFAULT 0,\n'
  '            last_path TEXT, last_captured TEXT,\n'
  '            created_at REAL NOT NULL, finished_at REAL)',
  'CREATE INDEX games_chat ON games (platform, chat_id, status)',
  'CREATE INDEX games_deadline ON games (status, deadline_at)',
  'CREATE TABLE moves (\n'
  '            game_id INTEGER NOT NULL REFERENCES games(id), ply INTEGER NOT NULL,\n'
  '            notation TEXT NOT NULL, fen_after TEXT NOT NULL, by_user TEXT NOT NULL,\n'
  '            played_at REAL NOT NULL, PRIMARY KEY (game_id, ply))',
  'CREATE TABLE messages (\n'
  '            platform TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL,\n'
  '            game_id INTEGER NOT NULL, PRIMARY KEY (platform, chat_id, message_id))'],
 ['CREATE TABLE meta (key TEXT PRIMARY KEY, value)',
  "INSERT INTO meta (key, value) SELECT 'last_number',\n"
  '            max(coalesce((SELECT max(id) FROM challenges), 0), coalesce((SELECT max(id) FROM games), 0))'],
 ['CREATE TABLE outbox (\n'
  '            id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL,\n'
  "            payload TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',\n"
  '            attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL NOT NULL,\n'
  '            created_at REAL NOT NULL, sent_at REAL, error TEXT)',
  'CREATE INDEX outbox_due ON outbox (platform, status, next_attempt_at)'],
 ['ALTER TABLE games ADD COLUMN bot_level INTEGER', 'CREATE INDEX games_bot ON games (status, bot_level)'],
 ['CREATE TABLE subscriptions (\n'
  '            platform TEXT NOT NULL, chat_id TEXT NOT NULL, time TEXT NOT NULL, timezone TEXT NOT NULL,\n'
  '            variant TEXT NOT NULL, language TEXT, active INTEGER NOT NULL, created_at REAL NOT NULL,\n'
  '            updated_at REAL NOT NULL, PRIMARY KEY (platform, chat_id))',
  'CREATE TABLE puzzle_posts (\n'
  '            id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL, kind TEXT NOT NULL,\n'
  '            day TEXT, user_id TEXT, variant TEXT NOT NULL, puzzle_id TEXT NOT NULL, posted_at REAL NOT NULL,\n'
  '            first_solver_id TEXT, first_solver_name TEXT)',
  "CREATE UNIQUE INDEX puzzle_posts_daily ON puzzle_posts (platform, chat_id, day) WHERE kind='daily'",
  'CREATE INDEX puzzle_posts_user ON puzzle_posts (platform, user_id, kind)',
  'CREATE TABLE attempts (\n'
  '            post_id INTEGER NOT NULL REFERENCES puzzle_posts(id), user_id TEXT NOT NULL, user_name TEXT NOT '
  'NULL,\n'
  '            progress TEXT NOT NULL, misses INTEGER NOT NULL, hints INTEGER NOT NULL, started_at REAL NOT NULL,\n'
  '            solved_at REAL, rated_score REAL, rated_at REAL, PRIMARY KEY (post_id, user_id))',
  'CREATE TABLE post_messages (\n'
  '            platform TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL,\n'
  '            post_id INTEGER NOT NULL, PRIMARY KEY (platform, chat_id, message_id))'],
 ['CREATE TABLE ratings (\n'
  '            platform TEXT NOT NULL, subject TEXT NOT NULL, pool TEXT NOT NULL, rating REAL NOT NULL,\n'
  '            deviation REAL NOT NULL, volatility REAL NOT NULL, games INTEGER NOT NULL, updated_at REAL NOT '
  'NULL,\n'
  '            PRIMARY KEY (platform, subject, pool))',
  'CREATE TABLE rating_history (\n'
  '            platform TEXT NOT NULL, subject TEXT NOT NULL, pool TEXT NOT NULL, source TEXT NOT NULL,\n'
  '            at REAL NOT NULL, rating REAL NOT NULL, deviation REAL NOT NULL)',
  'CREATE INDEX rating_history_subject ON rating_history (platform, subject, pool)'],
 ['CREATE INDEX attempts_user ON attempts (user_id)'],
 ['ALTER TABLE outbox ADD COLUMN delivered INTEGER NOT NULL DEFAULT 0'],
 ['CREATE TABLE notify_settings (\n'
  '            platform TEXT NOT NULL, user_id TEXT NOT NULL, private INTEGER NOT NULL,\n'
  '            unreachable INTEGER NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (platform, user_id))'],
 ['CREATE TABLE challenge_messages (\n'
  '            platform TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL,\n'
  '            challenge_id INTEGER NOT NULL, PRIMARY KEY (platform, chat_id, message_id))',
  'CREATE INDEX challenge_messages_challenge ON challenge_messages (challenge_id)',
  'CREATE INDEX challenges_open ON challenges (status, created_at)']]
