-- A password in a subscription's URL is the receiver's credential, stored sealed like the signing secret (P160,
-- P221): `url` keeps the URL without it, `url_password` the sealed password (percent-encoded as in the URL), null
-- when the URL has none. Nullable: the previous release reads and writes `webhook` unchanged; a URL it stores with
-- its password is still delivered with it and sealed at the next start.
ALTER TABLE webhook ADD COLUMN url_password text;
