-- Pending deliveries are reached by their key only (decision P197). The partial index of a client's pending
-- deliveries looked almost empty to the planner while a young table's statistics were stale, so the statements
-- that store attempt outcomes by delivery id walked it over every pending delivery of the client. Cancelling a
-- subscription's pending deliveries (its deletion or disabling, rare) reads the subscription's deliveries through
-- `webhook_delivery_webhook_idx` instead.
DROP INDEX webhook_delivery_pending_idx;
