-- Flood control shared by every process of one bot (issue 29): Telegram's limits belong to the bot
-- token, so webhook workers reserve their sends here.  One row per scope (a chat, a group, all
-- messages, the broadcasts' share): ``tat`` is the scope's theoretical arrival time (GCRA, wall
-- clock seconds); a send reserves the scope by moving it on by the scope's interval.
CREATE TABLE send_budget (
    key TEXT PRIMARY KEY NOT NULL,
    tat REAL NOT NULL
);
