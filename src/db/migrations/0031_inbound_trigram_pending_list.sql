-- The trigram indexes of a receiving document's name, external order id and tracking number (P173) take new
-- entries through a small pending list (P215): a status change is not a HOT update (`status` and `modified_date`
-- are indexed), so every changed document inserts all of its trigrams into each of these indexes again, and a bulk
-- change of 1,000 documents spent about half of its statements' time on those immediate inserts. The pending list
-- takes them in batches, at most `gin_pending_list_limit` = 64 kB (the least PostgreSQL allows) before the writer
-- merges it into the index, so a search reads at most that much besides the index.
ALTER INDEX inbound_order_name_trgm_idx SET (fastupdate = on, gin_pending_list_limit = 64);
ALTER INDEX inbound_order_external_trgm_idx SET (fastupdate = on, gin_pending_list_limit = 64);
ALTER INDEX inbound_order_tracking_trgm_idx SET (fastupdate = on, gin_pending_list_limit = 64);
