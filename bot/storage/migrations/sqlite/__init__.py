"""The SQLite dialect's migrations (data files, read by bot.storage.migrations)."""
