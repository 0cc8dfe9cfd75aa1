-- What the service says on its own, written in the transaction of the change that caused it
-- and delivered by the platform's adapter (status pending -> sent, or dropped).
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL,
    payload TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL NOT NULL,
    created_at REAL NOT NULL, sent_at REAL, error TEXT);
CREATE INDEX outbox_due ON outbox (platform, status, next_attempt_at);
