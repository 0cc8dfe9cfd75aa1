-- Outbox leases: a row is claimed by one process before it is sent.  Who is sending the row (an
-- owner id) and until when the claim holds; NULL: nobody.
ALTER TABLE outbox ADD COLUMN claimed_by text;
ALTER TABLE outbox ADD COLUMN lease_until double precision;
-- A chat's pending rows, to keep a chat with the process that holds one of them.
CREATE INDEX outbox_chat ON outbox (platform, chat_id, status);
