-- Text search of the `query` filters (P173): trigram GIN indexes (pg_trgm, shipped with PostgreSQL's contrib and
-- the embedded package; a trusted extension, so the database owner may create it) serve `ILIKE '%text%'` on the
-- indexed column whatever the position of the text. Patterns shorter than three characters have no trigram and
-- are read without these indexes. `fastupdate = off`: a row is indexed as it is written, so a search never reads
-- a pending list of recent rows (which made the planner prefer scanning the client's rows, and would make the
-- slowest searches slower); writes of these tables are single rows of API calls.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- GET /api/product/find?query=: the product's name or its model's article (and the barcode, btree).
CREATE INDEX product_name_trgm_idx ON product USING gin (name gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX product_model_article_trgm_idx ON product_model USING gin (article gin_trgm_ops) WITH (fastupdate = off);
-- GET /api/inbound/find?query=: the document's name, external order id or tracking number (or its id).
CREATE INDEX inbound_order_name_trgm_idx ON inbound_order USING gin (name gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX inbound_order_external_trgm_idx ON inbound_order USING gin (external_order_id gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX inbound_order_tracking_trgm_idx ON inbound_order USING gin (tracking_number gin_trgm_ops) WITH (fastupdate = off);
-- CampaignFilter.query: the campaign's name (or its external id, btree).
CREATE INDEX campaign_name_trgm_idx ON campaign USING gin (name gin_trgm_ops) WITH (fastupdate = off);
-- Keyword groups' `query`: the group's name or one of its keywords.
CREATE INDEX keyword_group_name_trgm_idx ON keyword_group USING gin (name gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX keyword_name_trgm_idx ON keyword USING gin (name gin_trgm_ops) WITH (fastupdate = off);
-- Tags', brands' and categories' `query`: the name.
CREATE INDEX product_tag_name_trgm_idx ON product_tag USING gin (name gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX brand_name_trgm_idx ON brand USING gin (name gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX category_name_trgm_idx ON category USING gin (name gin_trgm_ops) WITH (fastupdate = off);
