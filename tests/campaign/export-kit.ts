/**
 * Test data of the statistics export: campaigns and daily statistics rows inserted with Kysely into the real
 * database (as an import would leave them), and the export's request and download through HTTP.
 */
import { expect } from 'vitest';
import ExcelJS from 'exceljs';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import type { TmsTask } from '../../src/modules/task/schemas.ts';
import { send } from '../helpers/http.ts';

/** A campaign to insert; `days` maps a day (`YYYY-MM-DD`) to its rows, one per product. */
export interface SeedCampaign {
  externalId: number;
  name: string;
  type?: string;
  status?: string;
  productIds?: number[];
  days: Record<string, SeedStatistic[]>;
}

/** One product's statistics on a day (money: roubles as decimal strings). */
export interface SeedStatistic {
  product: number;
  views: number;
  clicks: number;
  expenses: string;
  addToCart?: number;
  orders: number;
  orderedItems?: number;
  ordersAmount: string;
}

/** Inserts campaigns of an organization with their statistics; returns their ids by external id. */
export async function seedCampaigns(
  db: Kysely<DB>,
  owner: { clientId: number; organizationId: number },
  campaigns: SeedCampaign[],
): Promise<Map<number, number>> {
  const ids = new Map<number, number>();
  await db.transaction().execute(async (trx) => {
    for (const campaign of campaigns) {
      const { id } = await trx
        .insertInto('campaign')
        .values({
          client_id: owner.clientId,
          organization_id: owner.organizationId,
          service: 'SERVICE_01',
          external_id: campaign.externalId,
          name: campaign.name,
          type: (campaign.type ?? 'AUTO') as never,
          type_code: 8,
          status: (campaign.status ?? 'ACTIVE') as never,
          status_code: 9,
          payment_type: 'CPM',
          write_off_type: null,
          external_product_ids: campaign.productIds ?? [],
          category_id: null,
          category_name: null,
          create_date: null,
          start_date: null,
          end_date: null,
          change_date: null,
          date_stat_import: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.set(campaign.externalId, id);
      const rows = Object.entries(campaign.days).flatMap(([date, products]) =>
        products.map((statistic) => ({
          campaign_id: id,
          date,
          external_product_id: statistic.product,
          client_id: owner.clientId,
          organization_id: owner.organizationId,
          views: statistic.views,
          clicks: statistic.clicks,
          expenses: statistic.expenses,
          quantity_add_cart: statistic.addToCart ?? 0,
          quantity_orders: statistic.orders,
          quantity_product_orders: statistic.orderedItems ?? statistic.orders,
          orders_amount: statistic.ordersAmount,
        })),
      );
      for (let start = 0; start < rows.length; start += 5_000)
        await trx
          .insertInto('campaign_statistic_day')
          .values(rows.slice(start, start + 5_000))
          .execute();
    }
  });
  return ids;
}

/** `POST /api/campaign/stats/xlsx` that must answer a CREATED export task. */
export async function startExport(app: FastifyInstance, token: string, body: object): Promise<TmsTask> {
  const response = await send(app, token, { method: 'POST', url: '/api/campaign/stats/xlsx', payload: body });
  expect(response.statusCode, response.body).toBe(200);
  const task = response.json<TmsTask>();
  expect(task).toMatchObject({ type: 'CAMPAIGN_STATS_FILE_TASK', status: 'CREATED' });
  return task;
}

/** Downloads a finished task's file (its `url`) and reads it back as a workbook. */
export async function downloadWorkbook(
  app: FastifyInstance,
  token: string,
  task: TmsTask,
): Promise<{ workbook: ExcelJS.Workbook; headers: Record<string, unknown> }> {
  expect(task.url).toBeTruthy();
  const response = await send(app, token, { method: 'GET', url: task.url! });
  expect(response.statusCode, response.body.slice(0, 200)).toBe(200);
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(response.rawPayload as unknown as ArrayBuffer);
  return { workbook, headers: response.headers };
}
