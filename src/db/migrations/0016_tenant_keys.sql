-- Tenant keys (decisions P174–P176 in docs/decisions.md, docs/scale-out.md): every tenant table carries
-- client_id NOT NULL, its primary key is (client_id, id) — or client_id followed by its natural key —, every
-- unique key includes client_id, and every foreign key between tenant tables is composite with client_id first
-- on both sides. This is the layout a distributed PostgreSQL (Citus) needs to keep a client's rows on one shard,
-- and it lets every statement keyed by ids reach its rows through an index condition on (client_id, id) whatever
-- the planner's statistics say about the client. API ids stay the global numbers of their sequences.

-- 1. client_id where a table had none, taken from the row's parent.
ALTER TABLE product_tag_product ADD COLUMN client_id bigint;
UPDATE product_tag_product link SET client_id = tag.client_id FROM product_tag tag WHERE tag.id = link.tag_id;
ALTER TABLE product_tag_product ALTER COLUMN client_id SET NOT NULL;

ALTER TABLE product_tag_model ADD COLUMN client_id bigint;
UPDATE product_tag_model link SET client_id = tag.client_id FROM product_tag tag WHERE tag.id = link.tag_id;
ALTER TABLE product_tag_model ALTER COLUMN client_id SET NOT NULL;

ALTER TABLE task_file_chunk ADD COLUMN client_id bigint;
UPDATE task_file_chunk chunk SET client_id = task.client_id FROM task WHERE task.id = chunk.task_id;
ALTER TABLE task_file_chunk ALTER COLUMN client_id SET NOT NULL;

-- 2. The foreign keys between tenant tables go (they are made again, composite, in step 4).
ALTER TABLE api_token DROP CONSTRAINT api_token_user_id_fkey;
ALTER TABLE prepared_integration DROP CONSTRAINT prepared_integration_organization_id_fkey;
ALTER TABLE cash_register_setting DROP CONSTRAINT cash_register_setting_organization_id_fkey;
ALTER TABLE inbound_order DROP CONSTRAINT inbound_order_organization_id_fkey;
ALTER TABLE inbound_order_product DROP CONSTRAINT inbound_order_product_order_id_fkey;
ALTER TABLE inbound_order_package DROP CONSTRAINT inbound_order_package_order_id_fkey;
ALTER TABLE inbound_order_package DROP CONSTRAINT inbound_order_package_organization_id_fkey;
ALTER TABLE inbound_order_package_item DROP CONSTRAINT inbound_order_package_item_order_id_fkey;
ALTER TABLE inbound_order_package_item DROP CONSTRAINT inbound_order_package_item_package_id_fkey;
ALTER TABLE inbound_order_package_item DROP CONSTRAINT inbound_order_package_item_order_product_id_fkey;
ALTER TABLE inbound_order_history DROP CONSTRAINT inbound_order_history_order_id_fkey;
ALTER TABLE stock_ledger DROP CONSTRAINT stock_ledger_order_id_fkey;
ALTER TABLE stock_ledger DROP CONSTRAINT stock_ledger_order_product_id_fkey;
ALTER TABLE webhook DROP CONSTRAINT webhook_organization_id_fkey;
ALTER TABLE webhook_delivery DROP CONSTRAINT webhook_delivery_webhook_id_fkey;
ALTER TABLE webhook_delivery DROP CONSTRAINT webhook_delivery_event_id_fkey;
ALTER TABLE category DROP CONSTRAINT category_parent_id_fkey;
ALTER TABLE product_model DROP CONSTRAINT product_model_organization_id_fkey;
ALTER TABLE product_model DROP CONSTRAINT product_model_brand_id_fkey;
ALTER TABLE product_model DROP CONSTRAINT product_model_category_id_fkey;
ALTER TABLE product_view DROP CONSTRAINT product_view_model_id_fkey;
ALTER TABLE product DROP CONSTRAINT product_model_id_fkey;
ALTER TABLE product DROP CONSTRAINT product_view_id_fkey;
ALTER TABLE keyword DROP CONSTRAINT keyword_group_id_fkey;
ALTER TABLE keyword_attachment DROP CONSTRAINT keyword_attachment_keyword_id_fkey;
ALTER TABLE product_tag_product DROP CONSTRAINT product_tag_product_tag_id_fkey;
ALTER TABLE product_tag_product DROP CONSTRAINT product_tag_product_product_id_fkey;
ALTER TABLE product_tag_model DROP CONSTRAINT product_tag_model_tag_id_fkey;
ALTER TABLE product_tag_model DROP CONSTRAINT product_tag_model_model_id_fkey;
ALTER TABLE receipt DROP CONSTRAINT receipt_organization_id_fkey;
ALTER TABLE receipt DROP CONSTRAINT receipt_order_id_fkey;
ALTER TABLE task DROP CONSTRAINT task_organization_id_fkey;
ALTER TABLE task DROP CONSTRAINT task_user_id_fkey;
ALTER TABLE task_file_chunk DROP CONSTRAINT task_file_chunk_task_id_fkey;
ALTER TABLE campaign DROP CONSTRAINT campaign_organization_id_fkey;
ALTER TABLE campaign_statistic_day DROP CONSTRAINT campaign_statistic_day_campaign_id_fkey;
ALTER TABLE campaign_statistic_day DROP CONSTRAINT campaign_statistic_day_organization_id_fkey;
ALTER TABLE campaign_statistic_total DROP CONSTRAINT campaign_statistic_total_campaign_id_fkey;
ALTER TABLE campaign_statistic_days DROP CONSTRAINT campaign_statistic_days_campaign_id_fkey;

-- 3. Primary and unique keys lead with client_id.
ALTER TABLE organization DROP CONSTRAINT organization_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE app_user DROP CONSTRAINT app_user_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE api_token DROP CONSTRAINT api_token_pkey, ADD PRIMARY KEY (client_id, id),
  DROP CONSTRAINT api_token_token_hash_key, ADD CONSTRAINT api_token_client_hash_key UNIQUE (client_id, token_hash);
ALTER TABLE prepared_integration DROP CONSTRAINT prepared_integration_pkey, ADD PRIMARY KEY (client_id, id),
  DROP CONSTRAINT prepared_integration_organization_id_service_key,
  ADD CONSTRAINT prepared_integration_organization_service_key UNIQUE (client_id, organization_id, service);
ALTER TABLE cash_register_setting DROP CONSTRAINT cash_register_setting_pkey,
  ADD PRIMARY KEY (client_id, organization_id);
ALTER TABLE inbound_order DROP CONSTRAINT inbound_order_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE inbound_order_product DROP CONSTRAINT inbound_order_product_pkey, ADD PRIMARY KEY (client_id, id),
  DROP CONSTRAINT inbound_order_product_order_id_product_id_key,
  ADD CONSTRAINT inbound_order_product_order_product_key UNIQUE (client_id, order_id, product_id);
ALTER TABLE inbound_order_package DROP CONSTRAINT inbound_order_package_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE inbound_order_package_item DROP CONSTRAINT inbound_order_package_item_pkey,
  ADD PRIMARY KEY (client_id, id);
ALTER TABLE inbound_order_history DROP CONSTRAINT inbound_order_history_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE stock_ledger DROP CONSTRAINT stock_ledger_pkey, ADD PRIMARY KEY (client_id, id),
  DROP CONSTRAINT stock_ledger_order_product_id_reason_key,
  ADD CONSTRAINT stock_ledger_order_product_reason_key UNIQUE (client_id, order_product_id, reason);
ALTER TABLE webhook DROP CONSTRAINT webhook_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE webhook_event DROP CONSTRAINT webhook_event_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE webhook_delivery DROP CONSTRAINT webhook_delivery_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE brand DROP CONSTRAINT brand_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE category DROP CONSTRAINT category_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE product_model DROP CONSTRAINT product_model_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE product_view DROP CONSTRAINT product_view_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE product DROP CONSTRAINT product_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE keyword_group DROP CONSTRAINT keyword_group_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE keyword DROP CONSTRAINT keyword_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE keyword_attachment DROP CONSTRAINT keyword_attachment_pkey,
  ADD PRIMARY KEY (client_id, keyword_id, entity_type, entity_id);
ALTER TABLE product_tag DROP CONSTRAINT product_tag_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE product_tag_product DROP CONSTRAINT product_tag_product_pkey,
  ADD PRIMARY KEY (client_id, tag_id, product_id);
ALTER TABLE product_tag_model DROP CONSTRAINT product_tag_model_pkey, ADD PRIMARY KEY (client_id, tag_id, model_id);
ALTER TABLE parameter_value DROP CONSTRAINT parameter_value_pkey,
  ADD PRIMARY KEY (client_id, level, entity_id, parameter_id, position);
ALTER TABLE receipt DROP CONSTRAINT receipt_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE task DROP CONSTRAINT task_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE task_file_chunk DROP CONSTRAINT task_file_chunk_pkey, ADD PRIMARY KEY (client_id, task_id, attempt, number);
ALTER TABLE idempotency_key DROP CONSTRAINT idempotency_key_pkey, ADD PRIMARY KEY (client_id, id);
ALTER TABLE campaign DROP CONSTRAINT campaign_pkey, ADD PRIMARY KEY (client_id, id),
  DROP CONSTRAINT campaign_organization_id_service_external_id_key,
  ADD CONSTRAINT campaign_organization_service_external_key UNIQUE (client_id, organization_id, service, external_id);
ALTER TABLE campaign_statistic_day DROP CONSTRAINT campaign_statistic_day_pkey,
  ADD PRIMARY KEY (client_id, campaign_id, date, external_product_id);
ALTER TABLE campaign_statistic_total DROP CONSTRAINT campaign_statistic_total_pkey,
  ADD PRIMARY KEY (client_id, campaign_id, date);
ALTER TABLE campaign_statistic_days DROP CONSTRAINT campaign_statistic_days_pkey,
  ADD PRIMARY KEY (client_id, campaign_id);

DROP INDEX keyword_group_name_key;
CREATE UNIQUE INDEX keyword_group_name_key ON keyword (client_id, group_id, lower(name));
DROP INDEX receipt_live_type_idx;
CREATE UNIQUE INDEX receipt_live_type_idx ON receipt (client_id, order_id, receipt_type)
  WHERE status IN ('CREATED', 'PENDING', 'COMPLETED');

-- 4. Foreign keys between tenant tables, composite: (client_id, x_id) references x (client_id, id).
ALTER TABLE api_token ADD FOREIGN KEY (client_id, user_id) REFERENCES app_user (client_id, id);
ALTER TABLE prepared_integration
  ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id);
ALTER TABLE cash_register_setting
  ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id);
ALTER TABLE inbound_order ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id);
ALTER TABLE inbound_order_product ADD FOREIGN KEY (client_id, order_id) REFERENCES inbound_order (client_id, id);
ALTER TABLE inbound_order_package
  ADD FOREIGN KEY (client_id, order_id) REFERENCES inbound_order (client_id, id),
  ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id);
ALTER TABLE inbound_order_package_item
  ADD FOREIGN KEY (client_id, order_id) REFERENCES inbound_order (client_id, id),
  ADD FOREIGN KEY (client_id, package_id) REFERENCES inbound_order_package (client_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (client_id, order_product_id) REFERENCES inbound_order_product (client_id, id);
ALTER TABLE inbound_order_history ADD FOREIGN KEY (client_id, order_id) REFERENCES inbound_order (client_id, id);
ALTER TABLE stock_ledger
  ADD FOREIGN KEY (client_id, order_id) REFERENCES inbound_order (client_id, id),
  ADD FOREIGN KEY (client_id, order_product_id) REFERENCES inbound_order_product (client_id, id);
ALTER TABLE webhook ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id);
ALTER TABLE webhook_delivery
  ADD FOREIGN KEY (client_id, webhook_id) REFERENCES webhook (client_id, id),
  ADD FOREIGN KEY (client_id, event_id) REFERENCES webhook_event (client_id, id);
ALTER TABLE category ADD FOREIGN KEY (client_id, parent_id) REFERENCES category (client_id, id);
ALTER TABLE product_model
  ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id),
  ADD FOREIGN KEY (client_id, brand_id) REFERENCES brand (client_id, id),
  ADD FOREIGN KEY (client_id, category_id) REFERENCES category (client_id, id);
ALTER TABLE product_view
  ADD FOREIGN KEY (client_id, model_id) REFERENCES product_model (client_id, id) ON DELETE CASCADE;
ALTER TABLE product
  ADD FOREIGN KEY (client_id, model_id) REFERENCES product_model (client_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (client_id, view_id) REFERENCES product_view (client_id, id) ON DELETE CASCADE;
ALTER TABLE keyword ADD FOREIGN KEY (client_id, group_id) REFERENCES keyword_group (client_id, id) ON DELETE CASCADE;
ALTER TABLE keyword_attachment
  ADD FOREIGN KEY (client_id, keyword_id) REFERENCES keyword (client_id, id) ON DELETE CASCADE;
ALTER TABLE product_tag_product
  ADD FOREIGN KEY (client_id) REFERENCES client (id),
  ADD FOREIGN KEY (client_id, tag_id) REFERENCES product_tag (client_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (client_id, product_id) REFERENCES product (client_id, id) ON DELETE CASCADE;
ALTER TABLE product_tag_model
  ADD FOREIGN KEY (client_id) REFERENCES client (id),
  ADD FOREIGN KEY (client_id, tag_id) REFERENCES product_tag (client_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (client_id, model_id) REFERENCES product_model (client_id, id) ON DELETE CASCADE;
ALTER TABLE receipt
  ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id),
  ADD FOREIGN KEY (client_id, order_id) REFERENCES inbound_order (client_id, id);
ALTER TABLE task
  ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id),
  ADD FOREIGN KEY (client_id, user_id) REFERENCES app_user (client_id, id);
ALTER TABLE task_file_chunk
  ADD FOREIGN KEY (client_id) REFERENCES client (id),
  ADD FOREIGN KEY (client_id, task_id) REFERENCES task (client_id, id) ON DELETE CASCADE;
ALTER TABLE campaign ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id);
ALTER TABLE campaign_statistic_day
  ADD FOREIGN KEY (client_id, campaign_id) REFERENCES campaign (client_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (client_id, organization_id) REFERENCES organization (client_id, id);
ALTER TABLE campaign_statistic_total
  ADD FOREIGN KEY (client_id, campaign_id) REFERENCES campaign (client_id, id) ON DELETE CASCADE;
ALTER TABLE campaign_statistic_days
  ADD FOREIGN KEY (client_id, campaign_id) REFERENCES campaign (client_id, id) ON DELETE CASCADE;

-- 5. Indexes on a parent id lead with client_id too; the ones the new primary keys cover go.
DROP INDEX organization_client_idx;
DROP INDEX app_user_client_idx;
DROP INDEX product_model_client_id_idx;
DROP INDEX keyword_group_client_idx;
DROP INDEX parameter_value_client_idx;
DROP INDEX inbound_order_package_order_idx;
CREATE INDEX inbound_order_package_order_idx ON inbound_order_package (client_id, order_id);
DROP INDEX inbound_order_package_item_package_idx;
CREATE INDEX inbound_order_package_item_package_idx ON inbound_order_package_item (client_id, package_id);
DROP INDEX inbound_order_package_item_order_idx;
CREATE INDEX inbound_order_package_item_order_idx ON inbound_order_package_item (client_id, order_id);
DROP INDEX inbound_order_history_order_idx;
CREATE INDEX inbound_order_history_order_idx ON inbound_order_history (client_id, order_id, id DESC);
DROP INDEX stock_ledger_order_idx;
CREATE INDEX stock_ledger_order_idx ON stock_ledger (client_id, order_id);
DROP INDEX webhook_delivery_webhook_idx;
CREATE INDEX webhook_delivery_webhook_idx ON webhook_delivery (client_id, webhook_id, id DESC);
DROP INDEX webhook_delivery_event_idx;
CREATE INDEX webhook_delivery_event_idx ON webhook_delivery (client_id, event_id);
DROP INDEX webhook_delivery_pending_idx;
CREATE INDEX webhook_delivery_pending_idx ON webhook_delivery (client_id, webhook_id) WHERE status = 'PENDING';
DROP INDEX product_view_model_idx;
CREATE INDEX product_view_model_idx ON product_view (client_id, model_id, position, id);
DROP INDEX product_view_idx;
CREATE INDEX product_view_idx ON product (client_id, view_id, position, id);
DROP INDEX product_model_position_idx;
CREATE INDEX product_model_position_idx ON product (client_id, model_id, position, id) WHERE NOT deleted;
DROP INDEX product_tag_product_product_idx;
CREATE INDEX product_tag_product_product_idx ON product_tag_product (client_id, product_id);
DROP INDEX product_tag_model_model_idx;
CREATE INDEX product_tag_model_model_idx ON product_tag_model (client_id, model_id);

-- 6. Authentication finds a token's client by the token's hash before it knows the client: this small table is
-- that lookup (a reference table on Citus, so every node holds it). A hash is global: unique here.
CREATE TABLE api_token_lookup (
  token_hash bytea PRIMARY KEY,
  client_id bigint NOT NULL
);
INSERT INTO api_token_lookup (token_hash, client_id) SELECT token_hash, client_id FROM api_token;
