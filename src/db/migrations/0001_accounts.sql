-- Accounts (decision D1): clients own organizations, users and every business row.
CREATE TABLE client (
  id bigserial PRIMARY KEY,
  name text NOT NULL,
  subscription_expires_at timestamptz,
  deleted boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE organization (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  name text NOT NULL,
  inn text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX organization_client_idx ON organization (client_id);

CREATE TABLE app_user (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  name text NOT NULL,
  lang text CHECK (lang IN ('ru', 'en')),
  role text NOT NULL DEFAULT 'OWNER' CHECK (role IN ('OWNER', 'ADMIN', 'MANAGER', 'SUPPORT')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX app_user_client_idx ON app_user (client_id);

-- Only the SHA-256 of a token is stored; the token itself is shown once at creation.
CREATE TABLE api_token (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  user_id bigint NOT NULL REFERENCES app_user (id),
  token_hash bytea NOT NULL UNIQUE,
  access text NOT NULL CHECK (access IN ('READ', 'WRITE')),
  name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

-- Marketplace credentials of an organization for one service (D1.4, used by campaigns and catalog).
CREATE TABLE prepared_integration (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL REFERENCES organization (id),
  service text NOT NULL,
  api_key text NOT NULL,
  base_url text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, service)
);

-- Fiscal provider settings of an organization (D1.4, used by receipts).
CREATE TABLE cash_register_setting (
  organization_id bigint PRIMARY KEY REFERENCES organization (id),
  client_id bigint NOT NULL REFERENCES client (id),
  service text NOT NULL CHECK (service IN ('CASH_REGISTER_A', 'CASH_REGISTER_B')),
  login text NOT NULL,
  password text NOT NULL,
  base_url text,
  created_at timestamptz NOT NULL DEFAULT now()
);
