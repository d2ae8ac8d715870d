-- Inbound find's position filters (D5.10): `product` matches a position's name or article as a substring (or its
-- barcode exactly), `containsArticle` its article as a substring. Without these indexes each was a scan of every
-- position of the client (0.8 s at 1,000,000 positions); with them the plan ORs the indexes' bitmap scans (with
-- the barcode's btree) and joins the few documents found (P206, P207). Unlike the single-row tables of migration
-- 0022 these keep `fastupdate` on: a document writes its positions many at a time, and the pending list takes
-- them for a fraction of an immediate insert's cost; a search reads at most `gin_pending_list_limit` of it.
CREATE INDEX inbound_order_product_name_trgm_idx ON inbound_order_product USING gin (product_name gin_trgm_ops);
CREATE INDEX inbound_order_product_article_trgm_idx ON inbound_order_product USING gin (article gin_trgm_ops);
