-- Changes of several receiving documents, one primary-key statement per document in ascending id order (P196),
-- run by the server in one round trip: a bulk change of 1,000 documents sent as 1,000 statements spent more time
-- on their round trips than on the statements. Each statement here is what `orderRepository` sent before, keyed
-- by `client_id = $client AND id = $id`, an index condition on the whole primary key under any statistics (on
-- Citus, routed to the client's shard). Called inside the caller's transaction: all or nothing (D5.4).

-- Sets `new_status` on every listed document of the client whose status differs, with a STATUS history row each
-- (D5.4, D5.9); `closing` stamps `close_date` and `close_user_id`. Returns the changed documents.
CREATE FUNCTION inbound_set_status(
  change_client_id bigint,
  change_ids bigint[],
  new_status text,
  closing boolean,
  change_user_id integer)
RETURNS TABLE (id bigint, organization_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
  document_id bigint;
BEGIN
  FOR document_id IN SELECT DISTINCT requested.id FROM unnest(change_ids) AS requested(id) ORDER BY requested.id LOOP
    RETURN QUERY
    WITH updated AS (
      UPDATE inbound_order AS o SET
        status = new_status,
        version_id = o.version_id + 1,
        modified_date = now(),
        close_date = CASE WHEN closing THEN now() ELSE o.close_date END,
        close_user_id = CASE WHEN closing THEN change_user_id ELSE o.close_user_id END
      FROM (
        SELECT inbound_order.status AS old_status FROM inbound_order
        WHERE inbound_order.client_id = change_client_id AND inbound_order.id = document_id
          AND inbound_order.status <> new_status
      ) AS t
      WHERE o.client_id = change_client_id AND o.id = document_id
      RETURNING o.*, t.old_status
    ), history AS (
      INSERT INTO inbound_order_history (client_id, order_id, organization_id, user_id, action, changes,
        order_status, order_type, order_created_date, delivery_date, tracking_number, total_quantity,
        total_price, version_id)
      SELECT u.client_id, u.id, u.organization_id, change_user_id, 'STATUS',
        jsonb_build_object('status', jsonb_build_object('from', u.old_status, 'to', u.status)),
        u.status, u.type, u.created_date, u.delivery_date, u.tracking_number, u.total_quantity, u.total_price,
        u.version_id
      FROM updated AS u
    )
    SELECT u.id, u.organization_id FROM updated AS u;
  END LOOP;
END $$;

-- Records received stock for every listed INCOME document of the client that has none yet (D5.8): a `+quantity`
-- ledger row per position with quantity > 0 at the document's warehouse, `introduced_quantity` set to the
-- quantity, state RECORDED.
CREATE FUNCTION inbound_record_income_stock(change_client_id bigint, change_ids bigint[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  document_id bigint;
BEGIN
  FOR document_id IN SELECT DISTINCT requested.id FROM unnest(change_ids) AS requested(id) ORDER BY requested.id LOOP
    WITH orders AS (
      UPDATE inbound_order SET income_stock_state = 'RECORDED'
      WHERE inbound_order.client_id = change_client_id AND inbound_order.id = document_id
        AND inbound_order.type = 'INCOME' AND inbound_order.income_stock_state = 'NONE'
      RETURNING inbound_order.id, inbound_order.organization_id, inbound_order.warehouse_id
    ), positions AS (
      UPDATE inbound_order_product AS p SET introduced_quantity = p.quantity
      FROM orders AS o WHERE p.client_id = change_client_id AND p.order_id = o.id
      RETURNING p.id, p.order_id, p.product_id, p.quantity, o.organization_id, o.warehouse_id
    )
    INSERT INTO stock_ledger (client_id, organization_id, warehouse_id, product_id, order_id,
      order_product_id, quantity, reason)
    SELECT change_client_id, positions.organization_id, positions.warehouse_id, positions.product_id,
      positions.order_id, positions.id, positions.quantity, 'INCOME_RECEIVED'
    FROM positions WHERE positions.quantity > 0;
  END LOOP;
END $$;
