-- Catalog core (spec §2 "Catalog card", §4.7, decision D11): brands, categories, and the card hierarchy
-- model → views (colour variants) → products (final products / sizes). Every table carries client_id (D1.1).
-- Names of brands and categories are unique per client, case-insensitive; a model's article is unique per
-- client (D11.2). Later catalog migrations add parameters and dictionaries.
CREATE TABLE brand (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  name text NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now(),
  modified_date timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX brand_client_name_key ON brand (client_id, lower(name));

CREATE TABLE category (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  name text NOT NULL,
  parent_id bigint REFERENCES category (id),
  -- The marketplace category this category maps to (Market1 subject id), for dictionaries (D11.3).
  market1_category_id bigint,
  created_date timestamptz NOT NULL DEFAULT now(),
  modified_date timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX category_client_name_key ON category (client_id, lower(name));

CREATE TABLE product_model (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL REFERENCES organization (id),
  article text NOT NULL,
  title text NOT NULL,
  name text,
  description text,
  brand_id bigint NOT NULL REFERENCES brand (id),
  category_id bigint NOT NULL REFERENCES category (id),
  version_id bigint NOT NULL DEFAULT 1,
  deleted boolean NOT NULL DEFAULT false,
  created_user text,
  created_date timestamptz NOT NULL DEFAULT now(),
  modified_date timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX product_model_client_article_key ON product_model (client_id, article);
CREATE INDEX product_model_client_id_idx ON product_model (client_id, id);

CREATE TABLE product_view (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  model_id bigint NOT NULL REFERENCES product_model (id) ON DELETE CASCADE,
  color text,
  position integer NOT NULL DEFAULT 0,
  created_date timestamptz NOT NULL DEFAULT now(),
  modified_date timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX product_view_model_idx ON product_view (model_id, position, id);

CREATE TABLE product (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  model_id bigint NOT NULL REFERENCES product_model (id) ON DELETE CASCADE,
  view_id bigint NOT NULL REFERENCES product_view (id) ON DELETE CASCADE,
  -- Final product (size) fields of spec §2: `name` and `size`; `barcode` is the product's main barcode.
  name text NOT NULL,
  size text NOT NULL,
  barcode text,
  position integer NOT NULL DEFAULT 0,
  deleted boolean NOT NULL DEFAULT false,
  created_date timestamptz NOT NULL DEFAULT now(),
  modified_date timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX product_client_id_idx ON product (client_id, id) WHERE NOT deleted;
CREATE INDEX product_view_idx ON product (view_id, position, id);
CREATE INDEX product_client_barcode_idx ON product (client_id, barcode);
CREATE INDEX product_client_modified_idx ON product (client_id, modified_date, id);
