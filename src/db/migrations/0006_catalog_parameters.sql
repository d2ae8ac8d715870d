-- Catalog parameters (spec §4.7 rules 4, 5, 8; decision D11.2, D11.3). The marketplace's dictionaries — its
-- categories, their parameter definitions and the options of SUGGEST parameters — are reference data shared by
-- every client (P44): they carry no client_id. Parameter values are business data and carry client_id (D1.1).
CREATE TABLE market_category (
  id bigint PRIMARY KEY,
  name text NOT NULL,
  parent_id bigint,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE market_parameter (
  id bigint PRIMARY KEY,
  category_id bigint NOT NULL REFERENCES market_category (id) ON DELETE CASCADE,
  name text NOT NULL,
  value_type text NOT NULL CHECK (value_type IN ('STRING', 'NUMBER', 'INTEGER', 'BOOLEAN')),
  multi_value_allowed boolean NOT NULL DEFAULT false,
  display_type text NOT NULL CHECK (display_type IN ('INPUT', 'SUGGEST')),
  required boolean NOT NULL DEFAULT false,
  unit text,
  position integer NOT NULL DEFAULT 0
);
CREATE INDEX market_parameter_category_idx ON market_parameter (category_id, position, id);

CREATE TABLE market_parameter_option (
  parameter_id bigint NOT NULL REFERENCES market_parameter (id) ON DELETE CASCADE,
  id bigint NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (parameter_id, id)
);
CREATE INDEX market_parameter_option_value_idx ON market_parameter_option (parameter_id, lower(value));

-- A value of a parameter at one level of the card (D11.2): CATEGORY (our category), MODEL, VIEW or PRODUCT.
-- A multi-value parameter has several rows with the same parameter_id (rule 5), ordered by position.
CREATE TABLE parameter_value (
  client_id bigint NOT NULL REFERENCES client (id),
  level text NOT NULL CHECK (level IN ('CATEGORY', 'MODEL', 'VIEW', 'PRODUCT')),
  entity_id bigint NOT NULL,
  parameter_id bigint NOT NULL REFERENCES market_parameter (id) ON DELETE CASCADE,
  position integer NOT NULL,
  value jsonb NOT NULL,
  PRIMARY KEY (level, entity_id, parameter_id, position)
);
CREATE INDEX parameter_value_client_idx ON parameter_value (client_id, level, entity_id);
