-- Catalog read paths measured by `npm run bench` (docs/performance.md): a model's products are read by
-- model_id (GET /api/model/{id}), and product search filters by a model's article, brand and category.
CREATE INDEX product_model_position_idx ON product (model_id, position, id) WHERE NOT deleted;
CREATE INDEX product_model_client_brand_idx ON product_model (client_id, brand_id);
CREATE INDEX product_model_client_category_idx ON product_model (client_id, category_id);
