-- A product search page with no filter besides `query` (P214): the ids of the client's live products whose name
-- or model's article contains the text (case-insensitive) or whose barcode is the text, as the union statement of
-- `searchedIds` in src/modules/catalog/repository.ts finds them (P209: each way of matching stops at the page's
-- end), then the page's rows by `product_page_rows` (P212). Every statement here has one plan whatever its
-- values (`plan_cache_mode = force_generic_plan`): which plan fits a text is chosen by the caller from the column's
-- statistics sample, as the planner would, and passed as the form of each way of matching:
-- * a `*_word_pattern` (`%word%`): the column's trigram index finds the rows holding that word, the full pattern
--   filters them (P195). `OFFSET 0` keeps the index scan alone: a generic plan would otherwise AND it with the
--   client's whole key range (P202).
-- * NULL: the client's products are walked in the page's order from the cursor and filtered by the pattern until
--   the page's end (a text most rows hold).
-- `page_after_id` is the cursor (0 ascending or the largest bigint descending for a first page); each way reads at
-- most `page_offset + page_rows` ids after it, so the page is cut from at most three times that many. Rows are
-- unordered: the caller orders the page. Every table is read on the client's keys.
CREATE FUNCTION product_search_page(
  page_client_id bigint,
  search_text text,
  search_pattern text,
  name_word_pattern text,
  article_word_pattern text,
  page_ascending boolean,
  page_after_id bigint,
  page_offset integer,
  page_rows integer)
RETURNS TABLE (id bigint, "json" text)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  reach integer := page_offset + page_rows;
  matched bigint[];
BEGIN
  IF page_ascending THEN
    IF name_word_pattern IS NULL THEN
      matched := array(SELECT p.id FROM product AS p
        WHERE p.client_id = page_client_id AND NOT p.deleted AND p.id > page_after_id
          AND texticlike(p.name, search_pattern)
        ORDER BY p.id LIMIT reach);
    ELSE
      matched := array(SELECT p.id FROM (SELECT product.id, product.client_id, product.deleted, product.name
          FROM product WHERE product.name ILIKE name_word_pattern OFFSET 0) AS p
        WHERE p.client_id = page_client_id AND NOT p.deleted AND p.id > page_after_id
          AND texticlike(p.name, search_pattern)
        ORDER BY p.id LIMIT reach);
    END IF;
    IF article_word_pattern IS NULL THEN
      matched := matched || array(SELECT p.id FROM product AS p
        WHERE p.client_id = page_client_id AND NOT p.deleted AND p.id > page_after_id
          AND p.model_id IN (SELECT m.id FROM product_model AS m
            WHERE m.client_id = page_client_id AND texticlike(m.article, search_pattern))
        ORDER BY p.id LIMIT reach);
    ELSE
      matched := matched || array(SELECT p.id FROM product AS p
        WHERE p.client_id = page_client_id AND NOT p.deleted AND p.id > page_after_id
          AND p.model_id IN (SELECT m.id FROM (SELECT product_model.id, product_model.client_id, product_model.article
              FROM product_model WHERE product_model.article ILIKE article_word_pattern OFFSET 0) AS m
            WHERE m.client_id = page_client_id AND texticlike(m.article, search_pattern))
        ORDER BY p.id LIMIT reach);
    END IF;
    matched := matched || array(SELECT p.id FROM product AS p
      WHERE p.client_id = page_client_id AND p.barcode = search_text AND NOT p.deleted AND p.id > page_after_id
      ORDER BY p.id LIMIT reach);
    matched := array(SELECT DISTINCT u.id FROM unnest(matched) AS u(id) ORDER BY u.id LIMIT page_rows OFFSET page_offset);
  ELSE
    IF name_word_pattern IS NULL THEN
      matched := array(SELECT p.id FROM product AS p
        WHERE p.client_id = page_client_id AND NOT p.deleted AND p.id < page_after_id
          AND texticlike(p.name, search_pattern)
        ORDER BY p.id DESC LIMIT reach);
    ELSE
      matched := array(SELECT p.id FROM (SELECT product.id, product.client_id, product.deleted, product.name
          FROM product WHERE product.name ILIKE name_word_pattern OFFSET 0) AS p
        WHERE p.client_id = page_client_id AND NOT p.deleted AND p.id < page_after_id
          AND texticlike(p.name, search_pattern)
        ORDER BY p.id DESC LIMIT reach);
    END IF;
    IF article_word_pattern IS NULL THEN
      matched := matched || array(SELECT p.id FROM product AS p
        WHERE p.client_id = page_client_id AND NOT p.deleted AND p.id < page_after_id
          AND p.model_id IN (SELECT m.id FROM product_model AS m
            WHERE m.client_id = page_client_id AND texticlike(m.article, search_pattern))
        ORDER BY p.id DESC LIMIT reach);
    ELSE
      matched := matched || array(SELECT p.id FROM product AS p
        WHERE p.client_id = page_client_id AND NOT p.deleted AND p.id < page_after_id
          AND p.model_id IN (SELECT m.id FROM (SELECT product_model.id, product_model.client_id, product_model.article
              FROM product_model WHERE product_model.article ILIKE article_word_pattern OFFSET 0) AS m
            WHERE m.client_id = page_client_id AND texticlike(m.article, search_pattern))
        ORDER BY p.id DESC LIMIT reach);
    END IF;
    matched := matched || array(SELECT p.id FROM product AS p
      WHERE p.client_id = page_client_id AND p.barcode = search_text AND NOT p.deleted AND p.id < page_after_id
      ORDER BY p.id DESC LIMIT reach);
    matched := array(SELECT DISTINCT u.id FROM unnest(matched) AS u(id)
      ORDER BY u.id DESC LIMIT page_rows OFFSET page_offset);
  END IF;
  RETURN QUERY SELECT r.id, r."json" FROM product_page_rows(page_client_id, matched) AS r;
END
$$;
