-- Rate-limit counters shared by every process on this database (issue 10 point 2, decisions P125–P128,
-- docs/operations.md). One row per key (`token:<SHA-256 of the token>` or `ip:<address>`): the requests counted in
-- the current fixed window and when that window ends. The first request after the end starts a new window.
-- UNLOGGED: counters are cheap to lose (a crash gives every caller a fresh window) and skip the WAL on every request.
CREATE UNLOGGED TABLE rate_limit_counter (
  key text PRIMARY KEY,
  count bigint NOT NULL,
  window_ends_at timestamptz NOT NULL
);
-- The purge job deletes windows that ended.
CREATE INDEX rate_limit_counter_window_ends_idx ON rate_limit_counter (window_ends_at);
