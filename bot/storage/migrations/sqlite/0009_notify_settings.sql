-- How each user is told it is their turn (/notify): in the group, or privately.
CREATE TABLE notify_settings (
    platform TEXT NOT NULL, user_id TEXT NOT NULL, private INTEGER NOT NULL,
    unreachable INTEGER NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (platform, user_id));
