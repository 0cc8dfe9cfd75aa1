-- How each user is told it is their turn (/notify): in the group, or privately.
CREATE TABLE notify_settings (
    platform text NOT NULL, user_id text NOT NULL, private bigint NOT NULL,
    unreachable bigint NOT NULL, updated_at double precision NOT NULL, PRIMARY KEY (platform, user_id));
