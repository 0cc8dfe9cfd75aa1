-- The messages that show a challenge with its buttons (to update once it is closed); open
-- challenges by age (their lapse is timed work).
CREATE TABLE challenge_messages (
    platform TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL,
    challenge_id INTEGER NOT NULL, PRIMARY KEY (platform, chat_id, message_id));
CREATE INDEX challenge_messages_challenge ON challenge_messages (challenge_id);
CREATE INDEX challenges_open ON challenges (status, created_at);
