-- How many messages of an outbox reply are out already: a retry resumes after them.
ALTER TABLE outbox ADD COLUMN delivered bigint NOT NULL DEFAULT 0;
