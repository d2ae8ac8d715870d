/**
 * Catalog factories for tests (through HTTP): a brand, a category and a model card with colour variants and
 * sizes for an account.
 */
import { expect } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { TestAccount } from './factories.ts';
import { send } from './http.ts';
import type { ProductModel } from '../../src/modules/catalog/schemas.ts';

export type { ProductModel };

/** Creates a brand and a category of the account; returns their ids. */
export async function createBrandAndCategory(app: FastifyInstance, account: TestAccount) {
  const suffix = randomUUID().slice(0, 8);
  const brand = await send(app, account.writeToken, {
    method: 'POST',
    url: '/api/brand',
    payload: { name: `Brand ${suffix}` },
  });
  const category = await send(app, account.writeToken, {
    method: 'POST',
    url: '/api/category',
    payload: { name: `Category ${suffix}` },
  });
  expect(brand.statusCode, brand.body).toBe(200);
  expect(category.statusCode, category.body).toBe(200);
  return { brandId: brand.json<{ id: number }>().id, categoryId: category.json<{ id: number }>().id };
}

/** The create body of a model with `colors` × `sizes` final products. */
export function modelBody(
  account: TestAccount,
  ids: { brandId: number; categoryId: number },
  colors: string[] = ['black', 'white'],
  sizes: string[] = ['S', 'M', 'L'],
) {
  const article = `ART-${randomUUID().slice(0, 8)}`;
  return {
    article,
    title: `T-shirt ${article}`,
    organizationId: account.organizationId,
    ...ids,
    views: colors.map((color) => ({
      color,
      sizes: sizes.map((size) => ({
        name: `T-shirt ${color} ${size}`,
        size,
        barcode: `46${randomUUID().replace(/\D/g, '').slice(0, 11)}`,
      })),
    })),
  };
}

/**
 * The PUT body that keeps `model` as it is (its views and sizes by id, at its `versionId`); `changes` replace
 * top-level fields (e.g. `title`).
 */
export function replaceBody(model: ProductModel, changes: Record<string, unknown> = {}) {
  return {
    article: model.article,
    title: model.title,
    brandId: model.brandId,
    categoryId: model.categoryId,
    versionId: model.versionId,
    views: model.views.map((view) => ({
      id: view.id,
      color: view.color,
      sizes: view.sizes.map((size) => ({
        id: size.id,
        name: size.name,
        size: size.size,
        barcode: size.barcode,
      })),
    })),
    ...changes,
  };
}

/** Creates a model card (expects success) and returns it. */
export async function createModel(
  app: FastifyInstance,
  account: TestAccount,
  colors?: string[],
  sizes?: string[],
): Promise<ProductModel> {
  const ids = await createBrandAndCategory(app, account);
  const response = await send(app, account.writeToken, {
    method: 'POST',
    url: '/api/model',
    payload: modelBody(account, ids, colors, sizes),
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<ProductModel>();
}
