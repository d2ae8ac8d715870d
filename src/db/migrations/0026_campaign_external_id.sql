-- A numeric `query` of the campaign filter matches the name or the external id (P110). The name has its trigram
-- index (P173); without an index on the external id within the client, the `or` of the two could be served by
-- no index and every campaign of the client was read. With this one the plan ORs the two index scans (P206).
CREATE INDEX campaign_client_external_idx ON campaign (client_id, external_id);
