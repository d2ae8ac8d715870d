-- Secret rotation with a grace period and per-endpoint throttling of webhook subscriptions (docs/webhooks.md,
-- P167–P168). Nullable or defaulted columns only: the previous release reads and writes `webhook` unchanged.

-- The secret replaced by the last rotation (sealed like `secret`, P160): deliveries are signed with both until
-- `previous_secret_expires_at`.
ALTER TABLE webhook ADD COLUMN previous_secret text;
ALTER TABLE webhook ADD COLUMN previous_secret_expires_at timestamptz;

-- The endpoint answered 429/502/503/504: no delivery to it before `throttled_until`; `throttle_level` counts
-- those answers in a row (the backoff doubles with it) and returns to 0 on a delivered attempt.
ALTER TABLE webhook ADD COLUMN throttled_until timestamptz;
ALTER TABLE webhook ADD COLUMN throttle_level integer NOT NULL DEFAULT 0;
