-- The rows of a product search page, by their ids (P212): product find with `query` cuts its page's ids in a
-- statement planned for its text on every call (P202), and the page's presentation, the same for every search,
-- lives here, where PL/pgSQL keeps its parsed statement per session and PostgreSQL a generic plan of it, instead
-- of being parsed and planned again inside every search. The rows are what `presentedPage` in
-- src/modules/catalog/repository.ts writes for a page without `query` (keep the two alike; tests compare them):
-- each `product` row read by its key (P193), its model and view read once per distinct id (P208), and its JSON
-- text in the API's shape, byte for byte `JSON.stringify` of the presented row (P201). Unordered: the caller
-- orders the page. Every table is read on the client's keys (on Citus, one shard).
CREATE FUNCTION product_page_rows(page_client_id bigint, page_ids bigint[])
RETURNS TABLE (id bigint, "json" text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN QUERY
  WITH page AS MATERIALIZED (
    SELECT p.id, p.model_id, p.view_id, p.barcode, p.name, p.size, p.modified_date
    FROM (SELECT DISTINCT requested.id FROM unnest(page_ids) AS requested(id)) AS t
    JOIN LATERAL (
      SELECT product.id, product.model_id, product.view_id, product.barcode, product.name, product.size,
             product.modified_date
      FROM product WHERE product.client_id = page_client_id AND product.id = t.id OFFSET 0
    ) AS p ON true),
  page_model AS MATERIALIZED (
    SELECT m.id, m.article, m.brand_id, m.category_id FROM product_model AS m
    WHERE m.client_id = page_client_id AND m.id = ANY(array(SELECT DISTINCT page.model_id FROM page))),
  page_view AS MATERIALIZED (
    SELECT v.id, v.color FROM product_view AS v
    WHERE v.client_id = page_client_id AND v.id = ANY(array(SELECT DISTINCT page.view_id FROM page)))
  SELECT r.id, row_to_json(r)::text
  FROM (
    SELECT page.id, page.model_id AS "modelId", page.view_id AS "viewId", model.article, page.barcode, page.name,
           page.size, "view".color, model.brand_id AS "brandId", model.category_id AS "categoryId",
           to_char(page.modified_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "modifiedDate"
    FROM page
    JOIN page_model AS model ON model.id = page.model_id
    JOIN page_view AS "view" ON "view".id = page.view_id
  ) AS r;
END
$$;
