-- Keyword groups (spec §4.2, decision D6) and product tags (spec §4.5, D7). Every table carries client_id (D1.1).
CREATE TABLE keyword_group (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  name text NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX keyword_group_client_idx ON keyword_group (client_id, id);

CREATE TABLE keyword (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  group_id bigint NOT NULL REFERENCES keyword_group (id) ON DELETE CASCADE,
  name text NOT NULL
);
-- A word once per group, case-insensitively (D6.1).
CREATE UNIQUE INDEX keyword_group_name_key ON keyword (group_id, lower(name));

-- A keyword attached to a product, a colour variant (view) or a model (D6.2); usingQuantity counts these rows.
CREATE TABLE keyword_attachment (
  client_id bigint NOT NULL REFERENCES client (id),
  keyword_id bigint NOT NULL REFERENCES keyword (id) ON DELETE CASCADE,
  entity_type text NOT NULL CHECK (entity_type IN ('PRODUCT', 'VIEW', 'MODEL')),
  entity_id bigint NOT NULL,
  PRIMARY KEY (keyword_id, entity_type, entity_id)
);
CREATE INDEX keyword_attachment_entity_idx ON keyword_attachment (client_id, entity_type, entity_id);

CREATE TABLE product_tag (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  name text NOT NULL
);
CREATE UNIQUE INDEX product_tag_client_name_key ON product_tag (client_id, lower(name));

CREATE TABLE product_tag_product (
  tag_id bigint NOT NULL REFERENCES product_tag (id) ON DELETE CASCADE,
  product_id bigint NOT NULL REFERENCES product (id) ON DELETE CASCADE,
  PRIMARY KEY (tag_id, product_id)
);
CREATE INDEX product_tag_product_product_idx ON product_tag_product (product_id);

CREATE TABLE product_tag_model (
  tag_id bigint NOT NULL REFERENCES product_tag (id) ON DELETE CASCADE,
  model_id bigint NOT NULL REFERENCES product_model (id) ON DELETE CASCADE,
  PRIMARY KEY (tag_id, model_id)
);
CREATE INDEX product_tag_model_model_idx ON product_tag_model (model_id);
